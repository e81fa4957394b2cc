import { emit } from "../db/outbox";
import type { StoreTx } from "../db/with-store";
import { lockOrder, NOTHING_CAPTURED, releaseReservations } from "./actions";

/**
 * The end of a payment window (docs/order-status.md, "Payment windows"): the orders the expiry job
 * looks at, the reminder a manual-transfer order gets the day before, and the expiry itself.
 */

/** A manual-transfer order is reminded this long before its window closes. */
export const PAYMENT_REMINDER_BEFORE_MS = 24 * 3_600_000;

export interface SeenAttempt {
  id: string;
  attempt: number;
  status: string;
  provider: string;
  providerRef: string | null;
  amount: number;
}

export interface DueOrder {
  id: string;
  number: number;
  /** Every attempt as it was when read: the expiry goes ahead only if none moved since. */
  attempts: SeenAttempt[];
}

/** Open orders holding no captured money whose window closed by `now`, the longest-waiting first. */
export async function dueUnpaidOrders(tx: StoreTx, now: Date, limit: number): Promise<DueOrder[]> {
  const { rows } = await tx.$client.query<DueOrder>(
    `select o.id, o.number,
       coalesce((select json_agg(json_build_object('id', a.id, 'attempt', a.attempt, 'status', a.status, 'provider', a.provider,
                  'providerRef', a.provider_ref, 'amount', a.amount) order by a.id)
                 from payment_attempt a where a.store_id = o.store_id and a.order_id = o.id), '[]'::json) as attempts
     from shop_order o
     where o.store_id = $1 and o.status = 'open' and o.payment_status in ('unpaid', 'pending', 'authorized') and o.expires_at <= $2
     order by o.expires_at, o.id limit $3`,
    [tx.storeId, now, limit],
  );
  return rows;
}

/**
 * Writes `order.payment_reminder` once for each manual-transfer order still unpaid whose window closes
 * within PAYMENT_REMINDER_BEFORE_MS of `now` (and has not closed). The mark is set by the same guarded
 * statement, so a re-run or a racing run reminds nobody twice. Returns how many were reminded.
 */
export async function remindUnpaid(tx: StoreTx, now: Date, limit: number): Promise<number> {
  const { rows } = await tx.$client.query<{ id: string; number: number; expires_at: Date; amount: number }>(
    `update shop_order o set payment_reminded_at = $2
     where o.store_id = $1 and o.id in (
         select id from shop_order where store_id = $1 and status = 'open' and payment_method = 'manual_transfer'
           and payment_status in ('unpaid', 'pending') and payment_reminded_at is null and expires_at > $2 and expires_at <= $3
         order by expires_at limit $4)
       and o.status = 'open' and o.payment_reminded_at is null
     returning o.id, o.number, o.expires_at, (o.total - o.balance_amount)::float8 as amount`,
    [tx.storeId, now, new Date(now.getTime() + PAYMENT_REMINDER_BEFORE_MS), limit],
  );
  for (const r of rows) {
    await emit(tx, "order.payment_reminder", { orderId: r.id, number: r.number, expiresAt: new Date(r.expires_at).toISOString(), amount: r.amount });
  }
  return rows.length;
}

/**
 * Expires an order whose window closed: under the order's lock (attempts, then the order) it must still be
 * open, unshipped, hold no captured money, be past `expires_at`, and have exactly the attempts, in the
 * same statuses, that the gateway was asked about; otherwise nothing happens and the next run looks again.
 * Releases its reservations, sets `expired` (its own action: recompute never leaves it) and writes
 * `order.expired` and `inventory.released`. Returns whether it expired.
 */
export async function expireOrder(tx: StoreTx, orderId: string, seen: readonly SeenAttempt[], now: Date): Promise<boolean> {
  const order = await lockOrder(tx, orderId);
  if (order.status !== "open" || !NOTHING_CAPTURED.has(order.paymentStatus) || order.fulfillmentStatus !== "unfulfilled") return false;
  const { rows } = await tx.$client.query<{ due: boolean; attempts: string }>(
    `select o.expires_at <= $3 as due,
       coalesce((select string_agg(a.id || ':' || a.status, ',' order by a.id) from payment_attempt a
                 where a.store_id = o.store_id and a.order_id = o.id), '') as attempts
     from shop_order o where o.store_id = $1 and o.id = $2`,
    [tx.storeId, orderId, now],
  );
  if (!rows[0]?.due || rows[0].attempts !== seen.map((a) => `${a.id}:${a.status}`).join(",")) return false;
  const items = await releaseReservations(tx, orderId);
  await tx.$client.query("update shop_order set status = 'expired', updated_at = now() where store_id = $1 and id = $2", [tx.storeId, orderId]);
  await emit(tx, "order.expired", { orderId, number: order.number });
  await emit(tx, "inventory.released", { orderId, items });
  return true;
}
