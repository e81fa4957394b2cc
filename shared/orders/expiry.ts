import type { SQL } from "drizzle-orm";
import { markEmits } from "../db/changes";
import { plan, type Plan } from "../db/plan";
import type { RowOfStatement } from "../db/statement";
import { sql, type Q, type Step } from "../db/steps";
import { changeOn, readOn, type StoreTx } from "../db/with-store";
import { NOTHING_CAPTURED } from "./actions";
import { recomputeWhenAsRead } from "./routines";
import { dueUnpaid, expireOrderAsRead, lockAttemptsOfOrders, lockStockOfOrders, paymentReminders } from "./statements/expiry";
import { lockOrders } from "./statements/locks";

/**
 * The end of a payment window (docs/order-status.md, "Payment windows"): the orders the expiry job
 * looks at, the reminder a manual-transfer order gets the day before, and the expiry itself, as plans a
 * store's unit sends (the functions taking a transaction run the same plans on one that is open).
 */

/**
 * A manual-transfer order is reminded this long before its window closes, or halfway through a window
 * shorter than twice that (a store's hold can be as short as an hour: the reminder never comes first).
 */
export const PAYMENT_REMINDER_BEFORE_MS = 24 * 3_600_000;

export type { SeenAttempt } from "./statements/expiry";

export type DueOrder = RowOfStatement<typeof dueUnpaid>;

/** Open orders holding no captured money whose window closed by `now`, the longest-waiting first. */
export function dueUnpaidPlan(q: Q, store: SQL, now: Date, limit: number): Plan<DueOrder[]> {
  return plan([dueUnpaid(q, store, now, limit)] as const, ([rows]) => rows);
}

export function dueUnpaidOrders(tx: StoreTx, now: Date, limit: number): Promise<DueOrder[]> {
  return readOn(tx, (q) => dueUnpaidPlan(q, sql`${tx.storeId}::uuid`, now, limit));
}

/**
 * Writes `order.payment_reminder` once for each manual-transfer order still unpaid whose window closes
 * within PAYMENT_REMINDER_BEFORE_MS of `now` (and has not closed). The mark is set by the same guarded
 * statement that writes the events, so a re-run or a racing run reminds nobody twice. Answers how many.
 */
export function remindUnpaidPlan(q: Q, store: SQL, now: Date, limit: number): Plan<number> {
  const until = new Date(now.getTime() + PAYMENT_REMINDER_BEFORE_MS);
  const before = `${PAYMENT_REMINDER_BEFORE_MS} milliseconds`;
  return plan([markEmits(paymentReminders(q, store, { now, until, before, limit }))] as const, ([[row]]) => row!.n);
}

export function remindUnpaid(tx: StoreTx, now: Date, limit: number): Promise<number> {
  return changeOn(tx, (q) => remindUnpaidPlan(q, sql`${tx.storeId}::uuid`, now, limit));
}

/**
 * Expires the orders whose window closed, each only if, under its lock, it is still open, unshipped,
 * holds no captured money, is past `expires_at`, and its facts (attempts and their statuses, shipments,
 * statuses) are exactly those read before the gateway was asked; otherwise nothing happens to it and the
 * next run looks again. An expired order's reservations are released, its discount's use is given back,
 * its fact `expired_at` is written and the recompute makes it `expired` (which it never leaves), with
 * `order.expired` and `inventory.released`. Answers, per order, whether it expired.
 *
 * Locks first, as every order writer and checkout take them: the orders' attempts, the orders, then the
 * stock rows they hold, in id order (a discount's row last, as checkout takes it after the stock).
 */
export function expiryPlan(q: Q, store: SQL, orders: readonly Pick<DueOrder, "id" | "facts">[], now: Date): Plan<boolean[]> {
  if (orders.length === 0) return plan([], () => []);
  const orderIds = orders.map((o) => o.id);
  const each = orders.map((o) => expireSteps(q, store, o, now));
  return plan(
    [
      lockAttemptsOfOrders(q, store, orderIds),
      lockOrders(q, store, orderIds),
      lockStockOfOrders(q, store, orderIds),
      ...each.flat(),
    ],
    (results) => {
      let at = 3;
      return each.map((steps) => {
        const [row] = results[at] as { expired: boolean }[];
        at += steps.length;
        return row!.expired;
      });
    },
  );
}

/** One order's expiry: its release and fact in one statement (answering whether it happened), then the recompute. */
function expireSteps(q: Q, store: SQL, order: Pick<DueOrder, "id" | "facts">, now: Date): Step[] {
  const close = markEmits(expireOrderAsRead(q, store, { orderId: order.id, nothingCaptured: [...NOTHING_CAPTURED], now, facts: JSON.stringify(order.facts) }));
  // The status is the recompute's: written only if the statement above closed the order as read.
  const recompute = recomputeWhenAsRead(q, store, { orderId: order.id, facts: order.facts }, (facts) => ({ ...facts, closed: "expired" }));
  return [close, ...recompute.steps];
}

/** The same for one order inside a transaction that is open already (`seen`: the order as the due reading found it). */
export async function expireOrder(tx: StoreTx, seen: Pick<DueOrder, "id" | "facts">, now: Date): Promise<boolean> {
  const [expired] = await changeOn(tx, (q) => expiryPlan(q, sql`${tx.storeId}::uuid`, [seen], now));
  return expired!;
}
