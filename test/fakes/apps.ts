/**
 * Helpers for the app webhook tests (they hold no logic of the consumers): receivers that capture what
 * the consumers POST instead of a network, the {apps}-jobs queue as a recording with due times, and the
 * relay's step from an outbox row to a RoutedEvent.
 */
import { and, eq } from "drizzle-orm";
import type { Database } from "#shared/db/database";
import { outboxEvent } from "#shared/db/schema";
import { withStore } from "#shared/db/with-store";
import type { RoutedEvent } from "#shared/events/routes";
import { createLogger } from "#shared/core/log";
import { consumeAppJob } from "#shared/apps/attempt";
import { APP_ROUTE, goesToAppsQueue } from "#shared/apps/events";
import type { AppConsumerDeps, AppDeliveryJob, AppJobsQueue } from "#shared/apps/jobs";
import type { FetchLike } from "#shared/apps/send";

export const TEST_ROOT_SECRET = "local-app-webhook-test-root-secret-0000";

export interface CapturedRequest {
  url: string;
  headers: Headers;
  body: string;
  at: Date;
}

/** How a receiver answers: a status, or `hang` (never answers, for the deadline). */
export type Reply = number | "hang";

/**
 * Captures every POST, and answers per URL from a script (`replies[url]`, one reply per request, the last
 * one repeating; 200 when there is none). `clock` stamps each request with the consumer's time.
 */
export function receivers(clock: () => Date, replies: Record<string, Reply[]> = {}) {
  const requests: CapturedRequest[] = [];
  const fetch: FetchLike = async (input, init) => {
    const url = String(input);
    requests.push({ url, headers: new Headers(init.headers), body: String(init.body), at: clock() });
    const script = replies[url] ?? [];
    const reply = script.length > 1 ? script.shift()! : (script[0] ?? 200);
    if (reply === "hang") return new Promise<Response>(() => {});
    return new Response(reply === 204 ? null : "ok", { status: reply });
  };
  return { fetch, requests, to: (url: string) => requests.filter((r) => r.url === url) };
}

export interface QueuedJob {
  job: AppDeliveryJob;
  delaySeconds: number;
  /** When it becomes due: the sender's clock plus the delay. */
  dueAt: Date;
}

/** The {apps}-jobs queue as a recording: what was sent, with its delay and due time. */
export function recordingQueue(clock: () => Date): AppJobsQueue & { sent: QueuedJob[]; pending: QueuedJob[] } {
  const sent: QueuedJob[] = [];
  const pending: QueuedJob[] = [];
  return {
    sent,
    pending,
    async send(job, { delaySeconds }) {
      const queued = { job, delaySeconds, dueAt: new Date(clock().getTime() + delaySeconds * 1000) };
      sent.push(queued);
      pending.push(queued);
    },
  };
}

/** Consumer dependencies with a controlled clock (`deps.now` is moved by the helpers), a captured fetch and a recording queue. */
export function testDeps(db: Database, fetch: FetchLike, start = new Date()) {
  const deps: AppConsumerDeps & { jobs: ReturnType<typeof recordingQueue> } = {
    db,
    log: createLogger({ test: true }, "error"),
    now: start,
    fetch,
    jobs: recordingQueue(() => deps.now),
    config: { rootSecret: TEST_ROOT_SECRET, allowLocalUrls: true },
    random: () => 0.5,
  };
  return deps;
}

/** Runs queued {apps}-jobs messages in due order, each at its due time, until none is left (or `limit` ran). */
export async function runQueuedJobs(deps: AppConsumerDeps & { jobs: ReturnType<typeof recordingQueue> }, limit = 100): Promise<QueuedJob[]> {
  const ran: QueuedJob[] = [];
  while (deps.jobs.pending.length > 0 && ran.length < limit) {
    deps.jobs.pending.sort((a, b) => a.dueAt.getTime() - b.dueAt.getTime());
    const next = deps.jobs.pending.shift()!;
    if (next.dueAt > deps.now) deps.now = next.dueAt;
    await consumeAppJob(next.job, deps);
    ran.push(next);
  }
  return ran;
}

/** The relay's step for one outbox row: the RoutedEvent it sends to the {apps}-events queue, or null when it sends none there. */
export async function routedForApps(db: Database, storeId: string, eventId: string): Promise<RoutedEvent | null> {
  const [row] = await withStore(db, storeId, (tx) =>
    tx.select().from(outboxEvent).where(and(eq(outboxEvent.storeId, tx.storeId), eq(outboxEvent.id, eventId))),
  );
  if (!row) throw new Error(`No outbox event ${eventId}`);
  if (!goesToAppsQueue(row.kind)) return null;
  return { eventId: row.id, storeId: row.storeId, kind: row.kind, payload: row.payload, createdAt: row.createdAt.toISOString(), route: APP_ROUTE };
}
