import { emit } from "../db/outbox";
import type { StoreTx } from "../db/with-store";
import { AppError } from "../http/errors";
import { orderNotFound } from "./order-detail";
import { applyPaymentStatus } from "./routines";
import type { OrderStatus, PaymentStatus } from "./status";

/**
 * The admin's actions on an order (issue 11 part 8): 'Mark as paid' through the status routine, and
 * cancel, which releases the order's reservations. Both run in the caller's store transaction.
 */

export interface LockedOrder {
  id: string;
  number: number;
  status: OrderStatus;
  paymentStatus: PaymentStatus;
  fulfillmentStatus: string;
  total: number;
}

/**
 * Locks the order's payment attempts (in id order), then the order row: the order every writer takes
 * (`applyPaymentStatus` locks an attempt, then its recompute the order), so an action and a racing
 * webhook queue behind each other instead of deadlocking, and the action decides on committed statuses.
 */
export async function lockOrder(tx: StoreTx, orderId: string): Promise<LockedOrder> {
  await tx.$client.query("select id from payment_attempt where store_id = $1 and order_id = $2 order by id for update", [tx.storeId, orderId]);
  const { rows } = await tx.$client.query<LockedOrder>(
    `select id, number, status, payment_status as "paymentStatus", fulfillment_status as "fulfillmentStatus", total::float8 as total
     from shop_order where store_id = $1 and id = $2 for update`,
    [tx.storeId, orderId],
  );
  if (!rows[0]) throw orderNotFound();
  return rows[0];
}

export const conflict = (reason: string, message: string) => new AppError("CONFLICT", message, { reason, issues: [{ path: "orderId", message }] });

/** Money was captured and is still held: the order counts as paid for 'Mark as paid' and cannot be cancelled. */
const HOLDS_MONEY: ReadonlySet<PaymentStatus> = new Set(["paid", "partially_paid", "partially_refunded"]);
/** Nothing captured yet: an open attempt may be the one the money came through. */
export const NOTHING_CAPTURED: ReadonlySet<PaymentStatus> = new Set(["unpaid", "pending", "authorized"]);

export function refuseClosed(order: LockedOrder, action: string): void {
  if (order.status === "cancelled") throw conflict("order_cancelled", `Order #${order.number} is cancelled: it cannot be ${action}.`);
  if (order.status === "expired") {
    throw conflict("order_expired", `Order #${order.number} expired unpaid and its stock was released: it cannot be ${action}.`);
  }
}

/**
 * 'Mark as paid': the money arrived outside the gateway (a bank transfer, cash). Captures, through the
 * status routine, the newest attempt still open (created, pending or authorized) while nothing is
 * captured (with a pre-order deposit, that is the deposit's), or the open attempt of a requested pre-order
 * balance; otherwise (every attempt failed, none exists, or part is already paid) it adds a `manual`
 * attempt for the balance and captures that. A failed gateway attempt is never revived: the gateway said
 * that payment did not happen, and a refund must go back the way the money came. Already paid (or
 * partly refunded since): nothing changes. Returns whether anything changed.
 */
export async function markPaid(tx: StoreTx, orderId: string): Promise<boolean> {
  const order = await lockOrder(tx, orderId);
  if (order.paymentStatus === "paid" || order.paymentStatus === "partially_refunded") return false;
  if (order.paymentStatus === "refunded") throw conflict("order_refunded", `Order #${order.number} was refunded: it cannot be marked as paid again.`);
  refuseClosed(order, "marked as paid");
  // Part paid: only an open attempt for exactly what is left (a requested pre-order balance) is taken.
  const partly = order.paymentStatus === "partially_paid";
  const { rows: open } = NOTHING_CAPTURED.has(order.paymentStatus) || partly
    ? await tx.$client.query<{ id: string }>(
        `select id from payment_attempt a where store_id = $1 and order_id = $2 and status in ('created', 'pending', 'authorized')
           and (not $3 or amount = $4::bigint - (select coalesce(sum(c.amount), 0) from payment_attempt c
                                                  where c.store_id = $1 and c.order_id = $2 and c.status in ('captured', 'refunded')))
         order by attempt desc limit 1`,
        [tx.storeId, orderId, partly, order.total],
      )
    : { rows: [] };
  const attemptId = open[0]?.id ?? (await addManualAttempt(tx, order));
  await applyPaymentStatus(tx, attemptId, "captured", "mark_paid");
  return true;
}

async function addManualAttempt(tx: StoreTx, order: LockedOrder): Promise<string> {
  const { rows } = await tx.$client.query<{ id: string }>(
    `insert into payment_attempt (store_id, order_id, attempt, idempotency_key, provider, amount)
     select $1, $2, n, $2::text || ':' || n, 'manual', greatest($3::bigint - captured, 0)
     from (select coalesce(max(attempt), 0) + 1 as n,
                  coalesce(sum(amount) filter (where status in ('captured', 'refunded')), 0) as captured
           from payment_attempt where store_id = $1 and order_id = $2) a
     returning id`,
    [tx.storeId, order.id, order.total],
  );
  return rows[0]!.id;
}

export interface ReleasedItem {
  variantId: string;
  locationId: string;
  quantity: number;
}

/**
 * Gives back the stock an order holds: per variant and location, `inventory_level.reserved` goes down by
 * what the order's parcel lines reserved (never below zero), the stock rows locked in id order like
 * checkout locks them, and the parcel lines then reserve nothing, so a second release finds nothing.
 */
export async function releaseReservations(tx: StoreTx, orderId: string): Promise<ReleasedItem[]> {
  const { rows } = await tx.$client.query<{ id: string; variant_id: string; location_id: string; reserved: number; held: number }>(
    `with held as (
       select ol.variant_id, f.location_id, sum(fl.reserved)::int as held
       from fulfillment_order_line fl
       join fulfillment_order f on f.store_id = fl.store_id and f.id = fl.fulfillment_order_id
       join order_line ol on ol.store_id = fl.store_id and ol.id = fl.order_line_id
       where fl.store_id = $1 and f.order_id = $2 and fl.reserved > 0
       group by ol.variant_id, f.location_id)
     select il.id, il.variant_id, il.location_id, il.reserved, h.held
     from inventory_level il join held h on h.variant_id = il.variant_id and h.location_id = il.location_id
     where il.store_id = $1
     order by il.id for update of il`,
    [tx.storeId, orderId],
  );
  const items = rows.map((r) => ({ id: r.id, variantId: r.variant_id, locationId: r.location_id, quantity: Math.min(r.reserved, r.held) }));
  await tx.$client.query(
    `update inventory_level il set reserved = il.reserved - x.quantity, updated_at = now()
     from jsonb_to_recordset($2::jsonb) as x(id uuid, quantity int)
     where il.store_id = $1 and il.id = x.id and x.quantity > 0`,
    [tx.storeId, JSON.stringify(items.map(({ id, quantity }) => ({ id, quantity })))],
  );
  await tx.$client.query(
    `update fulfillment_order_line fl set reserved = 0
     from fulfillment_order f where f.store_id = fl.store_id and f.id = fl.fulfillment_order_id
       and fl.store_id = $1 and f.order_id = $2 and fl.reserved > 0`,
    [tx.storeId, orderId],
  );
  return items.filter((i) => i.quantity > 0).map(({ variantId, locationId, quantity }) => ({ variantId, locationId, quantity }));
}

/**
 * Cancels an open order that holds no money and has shipped nothing: releases its reservations, sets
 * `cancelled` (its own action: recompute never leaves it) and writes `order.cancelled` and
 * `inventory.released`. An order already cancelled is answered as it is. Returns whether anything changed.
 */
export async function cancelOrder(tx: StoreTx, orderId: string, reason: string | undefined): Promise<boolean> {
  const order = await lockOrder(tx, orderId);
  if (order.status === "cancelled") return false;
  refuseClosed(order, "cancelled");
  if (HOLDS_MONEY.has(order.paymentStatus) || order.status === "completed") {
    throw conflict("refund_first", `Order #${order.number} is ${order.paymentStatus.replace(/_/g, " ")}: refund it first, then cancel.`);
  }
  if (order.fulfillmentStatus !== "unfulfilled") {
    throw conflict("already_shipped", `Order #${order.number} is ${order.fulfillmentStatus.replace(/_/g, " ")}: a shipped order cannot be cancelled.`);
  }
  const items = await releaseReservations(tx, orderId);
  await tx.$client.query("update shop_order set status = 'cancelled', updated_at = now() where store_id = $1 and id = $2", [tx.storeId, orderId]);
  await emit(tx, "order.cancelled", { orderId, number: order.number, paymentStatus: order.paymentStatus, ...(reason ? { reason } : {}) });
  await emit(tx, "inventory.released", { orderId, items });
  return true;
}
