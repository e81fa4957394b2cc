import { and, desc, eq, gte, isNotNull, sql } from "drizzle-orm";
import { z } from "zod";
import { ensure } from "../db/changes";
import { jobFailure, outboxEvent } from "../db/schema";
import { AppError } from "../core/errors";
import { instant } from "../core/inputs";
import { plan } from "../db/plan";
import { storeProcedure } from "./define";
import { countColumn, offsetOf, pagePlan, pagingInput } from "./paging";
import * as out from "./outputs";

/** Outbox rows the relay gave up on (shared/jobs/outbox.ts): seen with their error, sent again by Retry. */
export const listDeadEvents = storeProcedure({
  router: "outbox",
  name: "dead",
  description: "Events the relay could not send after its last try, newest first, with their last error and tries. Retry sends one again.",
  access: "settings.read",
  mutates: false,
  output: out.paged(z.object({ id: out.id, kind: z.string(), createdAt: out.instant, deadAt: out.instant.nullable(), attempts: z.number().int(), lastError: z.string().nullable() })),
  input: z.strictObject({ ...pagingInput }),
  read(q, { store }, input) {
    const where = and(eq(outboxEvent.storeId, store), isNotNull(outboxEvent.deadAt));
    return pagePlan(
      q
        .select({
          id: outboxEvent.id,
          kind: outboxEvent.kind,
          createdAt: outboxEvent.createdAt,
          deadAt: outboxEvent.deadAt,
          attempts: outboxEvent.attempts,
          lastError: outboxEvent.lastError,
        })
        .from(outboxEvent)
        .where(where)
        .orderBy(desc(outboxEvent.deadAt), desc(outboxEvent.id))
        .limit(input.pageSize)
        .offset(offsetOf(input)),
      q.select(countColumn()).from(outboxEvent).where(where),
      input,
    );
  },
});

export const retryDeadEvent = storeProcedure({
  router: "outbox",
  name: "retry",
  description: "Send a dead event again: the relay takes it on its next pass (within seconds), with a fresh count of tries.",
  access: "settings.write",
  mutates: true,
  output: z.object({ id: out.id, kind: z.string(), status: z.literal("queued") }),
  input: z.strictObject({ id: z.uuid().describe("The dead event's id") }),
  write: {
    apply: (q, { store }, input) => {
      const dead = and(eq(outboxEvent.storeId, store), eq(outboxEvent.id, input.id), isNotNull(outboxEvent.deadAt));
      return plan(
        [
          ensure(q, sql`exists (select 1 from ${outboxEvent} where ${dead} for update)`, new AppError("NOT_FOUND", "No dead event with this id in this store.")),
          q.update(outboxEvent).set({ deadAt: null, attempts: 0, availableAt: sql`now()` }).where(dead).returning({ id: outboxEvent.id, kind: outboxEvent.kind }),
        ] as const,
        ([, [row]]) => ({ id: row!.id, kind: row!.kind, status: "queued" as const }),
      );
    },
  },
});

export const listJobFailures = storeProcedure({
  router: "jobs",
  name: "failures",
  description: "Background jobs that failed for this store in the last day (or since `since`), newest first: the job, how often, the last error and when.",
  access: "settings.read",
  mutates: false,
  output: z.object({ items: z.array(z.object({ job: z.string(), error: z.string(), failures: z.number().int(), firstFailedAt: out.instant, lastFailedAt: out.instant })) }),
  input: z.strictObject({ since: instant.optional().describe("Default: one day ago") }),
  read(q, { store }, input) {
    const since = input.since ?? new Date(Date.now() - 86_400_000);
    return plan(
      [
        q
          .select({ job: jobFailure.job, error: jobFailure.error, failures: jobFailure.failures, firstFailedAt: jobFailure.firstFailedAt, lastFailedAt: jobFailure.lastFailedAt })
          .from(jobFailure)
          .where(and(eq(jobFailure.storeId, store), gte(jobFailure.lastFailedAt, since)))
          .orderBy(desc(jobFailure.lastFailedAt)),
      ] as const,
      ([items]) => ({ items }),
    );
  },
});

export const outboxProcedures = [listDeadEvents, retryDeadEvent, listJobFailures];
