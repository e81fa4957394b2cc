import { storeIdsWithPendingOutbox } from "../db/privileged";
import type { Database } from "../db/database";
import type { RowOfStatement } from "../db/statement";
import { rowsOn, withStore, type StoreTx } from "../db/with-store";
import { recordJobFailure } from "./per-store";
import { errorFields, type Logger } from "../core/log";
import { WORK_QUEUES, type RoutedEvent, type WorkQueue } from "../events/routes";
import { routesOf } from "./routing";
import { claimDueEvents, failedSend, markRelayed, tryRelayLock } from "./statements";

/**
 * The outbox relay (`{outbox}-relay`, issue 12; docs/events.md). Every 5 s from the scheduler's alarm and
 * at once on a nudge: a privileged list of the stores with rows due, then one store unit each, which
 *
 * 1. takes the store's relay lock (`pg_try_advisory_xact_lock`): two relays never work one store at once,
 *    so its events leave in the order they were written; a store already being relayed is skipped;
 * 2. claims its due rows oldest first (`FOR UPDATE SKIP LOCKED`, a bounded batch);
 * 3. sends each row's routes to their queues (one batch per queue), the event id in every message;
 * 4. marks the rows done, in the same transaction.
 *
 * A relay that dies after 3 and before 4 sends the rows again next time; every consumer dedupes by the
 * event id, so nobody gets anything twice. A send that fails leaves that row and every later row of the
 * store for the next pass (order kept), with the error and a growing wait; after the last try the row is
 * dead: kept, shown to the merchant with its error, sent again by Retry (`outbox.retry`).
 */
export const RELAY_BATCH = 100;
/** A store with a backlog gets more batches in one pass, for at most this long, then the next store's turn. */
const STORE_BUDGET_MS = 2_000;
export const MAX_ATTEMPTS = 8;
/** Waits after failed tries 1, 2, …: 5 s, 20 s, 1 min, 5 min, 15 min, 1 h, 3 h. */
const BACKOFF_MS = [5_000, 20_000, 60_000, 300_000, 900_000, 3_600_000, 10_800_000];

export interface QueueLike {
  sendBatch(messages: { body: RoutedEvent }[]): Promise<unknown>;
}

export type RelayQueues = Record<WorkQueue, QueueLike | undefined>;

/** The work queues a Worker binds (the worker binds them all; a test may bind some). */
export function relayQueuesFrom(env: object): RelayQueues {
  const bound = env as Record<string, QueueLike | undefined>;
  return Object.fromEntries(Object.entries(WORK_QUEUES).map(([name, q]) => [name, bound[q.binding]])) as RelayQueues;
}

export interface RelayReport {
  stores: number;
  sent: number;
  messages: number;
  failed: number;
  dead: number;
  skipped: number;
}

type Row = RowOfStatement<typeof claimDueEvents>;

const lockKey = (storeId: string) => `outbox-relay:${storeId}`;

export async function relayOutbox(db: Database, queues: RelayQueues, log: Logger, now = new Date()): Promise<RelayReport> {
  return relayStores(db, await storeIdsWithPendingOutbox(db, 500), queues, log, now);
}

/** One pass over these stores, one unit each. */
export async function relayStores(db: Database, storeIds: readonly string[], queues: RelayQueues, log: Logger, now = new Date()): Promise<RelayReport> {
  const report: RelayReport = { stores: storeIds.length, sent: 0, messages: 0, failed: 0, dead: 0, skipped: 0 };
  for (const storeId of storeIds) {
    try {
      const started = Date.now();
      for (;;) {
        const done = await withStore(db, storeId, (tx) => relayStore(tx, queues, now));
        report.sent += done.sent;
        report.messages += done.messages;
        report.failed += done.failed;
        report.dead += done.dead;
        if (done.skipped) report.skipped++;
        if (done.failed) log.warn("outbox.relay_failed", { storeId, failed: done.failed, dead: done.dead, error: done.error });
        if (done.failed || done.skipped || done.sent < RELAY_BATCH || Date.now() - started > STORE_BUDGET_MS) break;
      }
    } catch (e) {
      // One store's trouble (its database unit) never stops the others.
      report.failed++;
      log.error("outbox.relay_store_failed", { storeId, ...errorFields(e) });
      await recordJobFailure(db, storeId, "{outbox}-relay", String(errorFields(e).error ?? e), now).catch(() => undefined);
    }
  }
  return report;
}

async function relayStore(tx: StoreTx, queues: RelayQueues, now: Date) {
  const lock = await rowsOn(tx, (q) => tryRelayLock(q, lockKey(tx.storeId)));
  if (!lock[0]?.ok) return { sent: 0, messages: 0, failed: 0, dead: 0, skipped: true, error: undefined };
  const rows = await rowsOn(tx, (q) => claimDueEvents(q, tx.storeId, now, RELAY_BATCH));
  // The common case: the whole batch in one send per queue. If that fails, row by row, to find the row.
  const whole = await sendRows(tx.storeId, rows, queues).then((n) => n, () => null);
  if (whole !== null) {
    await markSent(tx, rows.map((r) => r.id));
    return { sent: rows.length, messages: whole, failed: 0, dead: 0, skipped: false, error: undefined };
  }
  const sent: string[] = [];
  let messages = 0;
  for (const row of rows) {
    try {
      messages += await sendRows(tx.storeId, [row], queues);
      sent.push(row.id);
    } catch (e) {
      const error = errorFields(e).error ?? String(e);
      const dead = row.attempts + 1 >= MAX_ATTEMPTS;
      const retryAt = new Date(now.getTime() + BACKOFF_MS[Math.min(row.attempts, BACKOFF_MS.length - 1)]!);
      await rowsOn(tx, (q) => failedSend(q, tx.storeId, row.id, { error: String(error).slice(0, 1000), dead, retryAt, now }));
      await markSent(tx, sent);
      // Later rows of this store wait behind it, so its events keep their order.
      return { sent: sent.length, messages, failed: 1, dead: dead ? 1 : 0, skipped: false, error };
    }
  }
  await markSent(tx, sent);
  return { sent: sent.length, messages, failed: 0, dead: 0, skipped: false, error: undefined };
}

/** processed_at is when the rows were really relayed (the wall clock), not when the pass was due. */
async function markSent(tx: StoreTx, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await rowsOn(tx, (q) => markRelayed(q, tx.storeId, ids));
}

/** A queue takes at most 100 messages in one send. */
const SEND_BATCH = 100;

/**
 * The rows' routes, one message each, in the rows' order, grouped per queue (at most 100 a send); a route
 * whose queue this Worker does not bind is an error (retried).
 */
async function sendRows(storeId: string, rows: readonly Row[], queues: RelayQueues): Promise<number> {
  const byQueue = new Map<WorkQueue, { body: RoutedEvent }[]>();
  let count = 0;
  for (const row of rows) {
    for (const r of routesOf(row.kind, row.payload)) {
      const body: RoutedEvent = { eventId: row.id, storeId, kind: row.kind, payload: row.payload, createdAt: new Date(row.created_at).toISOString(), route: r.route };
      byQueue.set(r.queue, [...(byQueue.get(r.queue) ?? []), { body }]);
      count++;
    }
  }
  for (const [name, messages] of byQueue) {
    const queue = queues[name];
    if (!queue) throw new Error(`The ${WORK_QUEUES[name].binding} queue is not bound here`);
    for (let i = 0; i < messages.length; i += SEND_BATCH) await queue.sendBatch(messages.slice(i, i + SEND_BATCH));
  }
  return count;
}
