import type { SQL } from "drizzle-orm";
import { sql } from "../db/steps";

/**
 * A discount's uses around an order that closes unpaid (docs/order-status.md, "Payment windows and
 * expiry", "Late payments"; decision 0020 §6): checkout counts one use of the discount the order keeps
 * (`shop_order.discount_id`), the unit that closes the order unpaid (cancel, expiry) gives it back, and a
 * late payment on the closed order counts it again.
 */

/**
 * Gives back the use of the discount an order counted at checkout, in the unit that closes it unpaid: a
 * closed order never opens again, so each order gives its use back at most once.
 */
export function returnDiscountUseSql(store: SQL, orderIds: SQL): SQL {
  return sql`update discount d set usage_count = greatest(d.usage_count - 1, 0), updated_at = now()
    from shop_order o where o.store_id = ${store} and o.id = any(${orderIds}) and o.discount_id is not null
      and d.store_id = ${store} and d.id = o.discount_id`;
}

/**
 * Counts the use again when money lands on an order its close gave the use back for (a late payment on a
 * cancelled or expired order): the shopper paid with the code, so the use stands, even past the code's
 * limit (nothing refuses a payment that has happened; the discounts list then shows the code used up).
 * Exactly once per order: only while the order has no `paid_late` task yet. The caller writes that task
 * after this statement, in the same unit, with the order locked (the payment routine's guard), so a
 * second late payment, or a replay, finds the task and counts nothing.
 */
export function countDiscountUseAgainSql(store: SQL, orderId: string): SQL {
  return sql`update discount d set usage_count = d.usage_count + 1, updated_at = now()
    from shop_order o where o.store_id = ${store} and o.id = ${orderId} and o.discount_id is not null
      and (o.cancelled_at is not null or o.expired_at is not null)
      and d.store_id = ${store} and d.id = o.discount_id
      and not exists (select 1 from merchant_task t where t.store_id = ${store} and t.kind = 'paid_late' and t.subject_id = ${orderId})`;
}
