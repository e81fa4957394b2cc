import { storeIdsWithPreorderBalanceWork } from "../db/privileged";
import { sql } from "../db/steps";
import { sendStoreUnit } from "../db/unit";
import { balanceChange, balanceReadingPlan, BALANCE_EXPIRES_AFTER_MS, BALANCE_REMINDER_AFTER_MS, decideBalances } from "../orders/preorder-units";
import { retryLostRaces } from "../orders/readings";
import { forEachStore, type Counts } from "./per-store";
import type { JobContext } from "./types";

/** Orders of each kind one store's run takes at most; the rest wait for the next minute. */
export const BALANCE_BATCH = 50;

/**
 * {payments}-preorder-balance (every minute; docs/order-status.md, "Pre-orders"). For each store the
 * privileged list names: reserves arrived stock for deposit-paid orders, oldest first, and asks for the
 * balance of each order whose backordered units are all held; reminds balances requested 3 days ago
 * (once); gives up balances unpaid after 7 days. The change re-checks what it read under the orders'
 * locks, so re-runs change nothing twice.
 */
export async function runPreorderBalances(ctx: JobContext): Promise<Record<string, unknown>> {
  const { db, now } = ctx;
  const remindBefore = new Date(now.getTime() - BALANCE_REMINDER_AFTER_MS);
  const expireBefore = new Date(now.getTime() - BALANCE_EXPIRES_AFTER_MS);
  const ids = await storeIdsWithPreorderBalanceWork(db, remindBefore, expireBefore);
  return forEachStore(ctx, ids, (storeId) => balanceStore(ctx, storeId));
}

/** One store's run in two round trips: its work read, then decided and written (read again after a lost race). */
export async function balanceStore(ctx: Pick<JobContext, "db" | "now">, storeId: string): Promise<Counts> {
  const { db, now } = ctx;
  const store = sql`${storeId}::uuid`;
  const expireBefore = new Date(now.getTime() - BALANCE_EXPIRES_AFTER_MS);
  return retryLostRaces(async () => {
    const orders = await sendStoreUnit(db, storeId, (q) => balanceReadingPlan(q, store, { expireBefore, limit: BALANCE_BATCH }));
    const steps = decideBalances(orders);
    const { reminded } = await sendStoreUnit(db, storeId, (q) => balanceChange(q, store, steps, now, { limit: BALANCE_BATCH }), { readOnly: false });
    const counts: Counts = { reservedUnits: 0, requested: 0, reminded, expired: 0 };
    for (const step of steps) {
      if (step.kind === "expire") counts["expired"]!++;
      else {
        counts["reservedUnits"]! += step.reserved;
        if (step.request) counts["requested"]!++;
      }
    }
    return counts;
  });
}
