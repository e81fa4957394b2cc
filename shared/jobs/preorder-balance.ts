import { storeIdsWithPreorderBalanceWork } from "../db/privileged";
import { withStore } from "../db/with-store";
import { BALANCE_EXPIRES_AFTER_MS, BALANCE_REMINDER_AFTER_MS, balanceWork, expireBalance, remindBalances, requestBalance } from "../orders/preorders";
import { forEachStore, type Counts } from "./per-store";
import type { JobContext } from "./types";

/** Orders of each kind one store's run takes at most; the rest wait for the next minute. */
export const BALANCE_BATCH = 50;

/**
 * {payments}-preorder-balance (every minute; docs/order-status.md, "Pre-orders"). For each store the
 * privileged list names: reserves arrived stock for deposit-paid orders, oldest first, and asks for the
 * balance of each order whose backordered units are all held; reminds balances requested 3 days ago
 * (once); gives up balances unpaid after 7 days. Each order in its own store unit that re-checks under the
 * order's lock, so re-runs change nothing twice.
 */
export async function runPreorderBalances(ctx: JobContext): Promise<Record<string, unknown>> {
  const { db, now } = ctx;
  const remindBefore = new Date(now.getTime() - BALANCE_REMINDER_AFTER_MS);
  const expireBefore = new Date(now.getTime() - BALANCE_EXPIRES_AFTER_MS);
  const ids = await storeIdsWithPreorderBalanceWork(db, remindBefore, expireBefore);
  return forEachStore(ctx, ids, async (storeId) => {
    const { waiting, ripe } = await withStore(db, storeId, (tx) => balanceWork(tx, expireBefore, BALANCE_BATCH), { readOnly: true });
    const counts: Counts = { reservedUnits: 0, requested: 0, reminded: 0, expired: 0 };
    for (const orderId of waiting) {
      const step = await withStore(db, storeId, (tx) => requestBalance(tx, orderId, now));
      counts["reservedUnits"]! += step.reserved;
      if (step.requested) counts["requested"]!++;
    }
    counts["reminded"] = await withStore(db, storeId, (tx) => remindBalances(tx, now, BALANCE_BATCH));
    for (const orderId of ripe) {
      if (await withStore(db, storeId, (tx) => expireBalance(tx, orderId, now))) counts["expired"]!++;
    }
    return counts;
  });
}
