import { and, desc, eq, sql } from "drizzle-orm";
import { z } from "zod";
import { ensure } from "../db/changes";
import { plan } from "../db/plan";
import { merchantTask, MERCHANT_TASK_KINDS } from "../db/schema";
import { AppError } from "../core/errors";
import { storeProcedure } from "./define";
import { countColumn, offsetOf, pagePlan, pagingInput } from "./paging";
import * as out from "./outputs";

/** The merchant's tasks (shared/orders/tasks.ts): RTO parcels, late payments, refused refunds, payments under review. */
export const listTasks = storeProcedure({
  router: "tasks",
  name: "list",
  description:
    "Work waiting for a person, newest first: parcels coming back to origin (rto), money that arrived on a closed order (paid_late), refunds the gateway refused (refund_failed), pre-order balances unpaid after 7 days (balance_expired), payments reported for less than their attempt or in another currency, held for review (payment_review). Filter by status (default open) and kind.",
  access: "orders.read",
  mutates: false,
  output: out.paged(z.object({ id: out.id, kind: z.enum(MERCHANT_TASK_KINDS), orderId: out.id.nullable(), title: z.string(), status: z.enum(["open", "done"]), createdAt: out.instant, doneAt: out.instant.nullable() })),
  input: z.strictObject({ ...pagingInput, status: z.enum(["open", "done"]).default("open"), kind: z.enum(MERCHANT_TASK_KINDS).optional() }),
  read(q, { store }, input) {
    const where = and(eq(merchantTask.storeId, store), eq(merchantTask.status, input.status), input.kind ? eq(merchantTask.kind, input.kind) : undefined);
    return pagePlan(
      q
        .select({
          id: merchantTask.id,
          kind: merchantTask.kind,
          orderId: merchantTask.orderId,
          title: merchantTask.title,
          status: merchantTask.status,
          createdAt: merchantTask.createdAt,
          doneAt: merchantTask.doneAt,
        })
        .from(merchantTask)
        .where(where)
        .orderBy(desc(merchantTask.createdAt), desc(merchantTask.id))
        .limit(input.pageSize)
        .offset(offsetOf(input)),
      q.select(countColumn()).from(merchantTask).where(where),
      input,
    );
  },
});

export const completeTask = storeProcedure({
  router: "tasks",
  name: "done",
  description: "Mark a task as done. A task already done stays as it was.",
  access: "orders.write",
  mutates: true,
  output: z.object({ id: out.id, status: z.literal("done") }),
  input: z.strictObject({ id: z.uuid().describe("The task's id") }),
  write: {
    apply: (q, { store, memberId }, input) => {
      const task = and(eq(merchantTask.storeId, store), eq(merchantTask.id, input.id));
      return plan(
        [
          ensure(q, sql`exists (select 1 from ${merchantTask} where ${task} for update)`, new AppError("NOT_FOUND", "No such task in this store.")),
          q
            .update(merchantTask)
            .set({ status: "done", doneAt: sql`now()`, doneBy: memberId })
            .where(and(task, eq(merchantTask.status, "open"))),
        ] as const,
        () => ({ id: input.id, status: "done" as const }),
      );
    },
  },
});

export const taskProcedures = [listTasks, completeTask];
