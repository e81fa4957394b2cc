import { storeIdsWithOldActivity, storeIdsWithOldIdempotencyKeys, storeIdsWithSentOutbox } from "../db/privileged";
import { plan, type Plan } from "../db/plan";
import type { Q } from "../db/steps";
import { sendStoreUnit } from "../db/unit";
import { forEachStore, type Counts } from "./per-store";
import { pruneIdempotencyKeys, pruneOldActivity, pruneSentOutbox } from "./statements";
import type { JobContext } from "./types";

/** SPEC "Limits": API activity is kept 90 days. */
export const ACTIVITY_RETENTION_DAYS = 90;

/**
 * Sent outbox rows are kept 30 days (docs/events.md "Retention"): rows not sent (due, retrying, dead) are
 * kept, and so are the events that name an order (`order_id`), the order's timeline in orders.get.
 */
export const SENT_OUTBOX_RETENTION_DAYS = 30;

/** Outbox rows one store's unit deletes at most; a store with more is visited again in the next round. */
export const OUTBOX_PRUNE_BATCH = 5_000;

/** Rounds of store lists one run takes at most (a list names up to 500 stores). */
const MAX_ROUNDS = 100;

const DAY = 86_400_000;

export interface PruneCutoffs {
  /** API activity last touched before this goes. */
  activity: Date;
  /** Outbox rows sent before this go (not those naming an order). */
  sentOutbox: Date;
  /** Idempotency-Keys made before this go (they answer for 24 hours). */
  idempotencyKeys: Date;
}

export const pruneCutoffs = (now: Date): PruneCutoffs => ({
  activity: new Date(now.getTime() - ACTIVITY_RETENTION_DAYS * DAY),
  sentOutbox: new Date(now.getTime() - SENT_OUTBOX_RETENTION_DAYS * DAY),
  idempotencyKeys: new Date(now.getTime() - DAY),
});

/**
 * {api}-activity-prune (daily): the retention of the store's history that nobody reads once it is old,
 * API activity, sent outbox rows and Idempotency-Keys past their 24 hours. Two privileged id lists name the stores with rows past a cutoff; each
 * store's rows then go in its own store-scoped unit, one round trip, in its own failure boundary (a failure
 * is logged and recorded for the store's merchant; the other stores go on). A store whose outbox has more
 * than a batch left is listed again in the next round; a store that failed is not visited again this run.
 */
export async function pruneActivity(ctx: Pick<JobContext, "db" | "log" | "now" | "job">): Promise<Record<string, unknown>> {
  const { db, log, now } = ctx;
  const cutoffs = pruneCutoffs(now);
  const failed = new Set<string>();
  const totals: Counts = { stores: 0, failedStores: 0, deleted: 0, outboxDeleted: 0, keysDeleted: 0 };
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const lists = await Promise.all([
      storeIdsWithOldActivity(db, cutoffs.activity),
      storeIdsWithSentOutbox(db, cutoffs.sentOutbox),
      storeIdsWithOldIdempotencyKeys(db, cutoffs.idempotencyKeys),
    ]);
    const ids = [...new Set(lists.flat())].filter((id) => !failed.has(id));
    if (ids.length === 0) break;
    const counts = await forEachStore(ctx, ids, (storeId) =>
      pruneStore(db, storeId, cutoffs).catch((e: unknown) => {
        failed.add(storeId);
        throw e;
      }),
    );
    for (const [key, n] of Object.entries(counts)) totals[key] = (totals[key] ?? 0) + n;
  }
  const result = { cutoff: cutoffs.activity.toISOString(), sentOutboxCutoff: cutoffs.sentOutbox.toISOString(), ...totals };
  log.info("Store history pruned", result);
  return result;
}

/**
 * One store's API activity last touched before its cutoff, and up to OUTBOX_PRUNE_BATCH outbox rows sent
 * before its cutoff that name no order, deleted in one unit (one round trip); answers how many of each.
 */
export function pruneStore(db: JobContext["db"], storeId: string, cutoffs: PruneCutoffs): Promise<{ deleted: number; outboxDeleted: number; keysDeleted: number }> {
  return sendStoreUnit(db, storeId, (q) => pruneStorePlan(q, cutoffs), { readOnly: false });
}

/** The statements of a store's prune unit (the unit's store): its old API activity, a batch of its old sent outbox rows. */
export function pruneStorePlan(q: Q, cutoffs: PruneCutoffs): Plan<{ deleted: number; outboxDeleted: number; keysDeleted: number }> {
  return plan(
    [
      pruneOldActivity(q, cutoffs.activity),
      pruneSentOutbox(q, cutoffs.sentOutbox, OUTBOX_PRUNE_BATCH),
      pruneIdempotencyKeys(q, cutoffs.idempotencyKeys),
    ] as const,
    ([[activity], [outbox], [keys]]) => ({ deleted: activity?.n ?? 0, outboxDeleted: outbox?.n ?? 0, keysDeleted: keys?.n ?? 0 }),
  );
}
