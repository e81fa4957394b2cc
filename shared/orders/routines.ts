import { emit } from "../db/outbox";
import type { StoreTx } from "../db/with-store";
import { AppError } from "../http/errors";
import { addTask } from "./tasks";
import { decideAttemptStatus, recomputeOrder as decideOrder, type AttemptStatus, type OrderFacts, type OrderStatuses } from "./status";

/**
 * The two routines of ARCHITECTURE §15 around their pure decisions (shared/orders/status.ts):
 *
 * - `applyPaymentStatus` is the only writer of a payment attempt's status, whatever the trigger (the
 *   gateway call, a webhook, the client's confirmation, 'Mark as paid', expiry reconciliation). It locks
 *   the attempt row, so racing triggers queue and the second finds nothing to do; it only moves forward.
 * - `recomputeOrderStatuses` is the only writer of an order's `payment_status`, `fulfillment_status` and
 *   the open ↔ completed move, from the attempt, processed refund and shipment rows.
 *
 * Both run inside the caller's store transaction and write their events with the change.
 */
export type PaymentTrigger = "gateway" | "webhook" | "client_confirmation" | "mark_paid" | "expiry_reconciliation" | "refund";

export interface AttemptChange {
  providerRef?: string | undefined;
  providerPaymentId?: string | undefined;
  error?: string | undefined;
}

export interface Applied {
  orderId: string;
  attempt: number;
  applied: boolean;
  status: AttemptStatus;
  order: OrderStatuses;
}

export async function applyPaymentStatus(
  tx: StoreTx,
  attemptId: string,
  requested: AttemptStatus,
  trigger: PaymentTrigger,
  change: AttemptChange = {},
): Promise<Applied> {
  const { rows } = await tx.$client.query<{ order_id: string; attempt: number; status: AttemptStatus }>(
    "select order_id, attempt, status from payment_attempt where store_id = $1 and id = $2 for update",
    [tx.storeId, attemptId],
  );
  const row = rows[0];
  if (!row) throw new AppError("NOT_FOUND", "No such payment attempt in this store.");
  const decision = decideAttemptStatus(row.status, requested);
  if (!decision.apply) {
    // Nothing moves; refs learnt late (e.g. a provider payment id) are still kept.
    if (change.providerRef || change.providerPaymentId) {
      await tx.$client.query(
        `update payment_attempt set provider_ref = coalesce(provider_ref, $3), provider_payment_id = coalesce(provider_payment_id, $4)
         where store_id = $1 and id = $2`,
        [tx.storeId, attemptId, change.providerRef ?? null, change.providerPaymentId ?? null],
      );
    }
    return { orderId: row.order_id, attempt: row.attempt, applied: false, status: row.status, order: await recomputeOrderStatuses(tx, row.order_id) };
  }
  await tx.$client.query(
    `update payment_attempt set status = $3, provider_ref = coalesce($4, provider_ref), provider_payment_id = coalesce($5, provider_payment_id),
       last_error = case when $3 = 'failed' then $6 else last_error end, updated_at = now()
     where store_id = $1 and id = $2`,
    [tx.storeId, attemptId, decision.to, change.providerRef ?? null, change.providerPaymentId ?? null, change.error?.slice(0, 1000) ?? null],
  );
  if (decision.to === "failed") await emit(tx, "payment.failed", { orderId: row.order_id, attempt: row.attempt, trigger });
  return { orderId: row.order_id, attempt: row.attempt, applied: true, status: decision.to, order: await recomputeOrderStatuses(tx, row.order_id) };
}

/** Reads the order's facts in one statement, decides, and writes the derived statuses when they change. */
export async function recomputeOrderStatuses(tx: StoreTx, orderId: string): Promise<OrderStatuses> {
  const { rows } = await tx.$client.query<{ facts: OrderFacts & { paymentStatus: string; fulfillmentStatus: string } }>(
    `select json_build_object(
       'status', o.status, 'total', o.total, 'paymentStatus', o.payment_status, 'fulfillmentStatus', o.fulfillment_status,
       'attempts', coalesce((select json_agg(json_build_object('status', a.status, 'amount', a.amount))
                              from payment_attempt a where a.store_id = o.store_id and a.order_id = o.id), '[]'::json),
       'refunds', coalesce((select json_agg(json_build_object('amount', r.amount)) from refund r
                            where r.store_id = o.store_id and r.order_id = o.id and r.status = 'processed'), '[]'::json),
       'parcels', coalesce((select json_agg(json_build_object('id', f.id)) from fulfillment_order f
                             where f.store_id = o.store_id and f.order_id = o.id), '[]'::json),
       'shipments', coalesce((select json_agg(json_build_object('parcelId', s.fulfillment_order_id, 'status', s.status))
                               from shipment s where s.store_id = o.store_id and s.order_id = o.id), '[]'::json)) as facts
     from shop_order o where o.store_id = $1 and o.id = $2 for update of o`,
    [tx.storeId, orderId],
  );
  const facts = rows[0]?.facts;
  if (!facts) throw new AppError("NOT_FOUND", "No such order in this store.");
  const next = decideOrder(facts);
  if (next.paymentStatus === facts.paymentStatus && next.fulfillmentStatus === facts.fulfillmentStatus && next.status === facts.status) return next;
  await tx.$client.query(
    "update shop_order set payment_status = $3, fulfillment_status = $4, status = $5, updated_at = now() where store_id = $1 and id = $2",
    [tx.storeId, orderId, next.paymentStatus, next.fulfillmentStatus, next.status],
  );
  if (next.paymentStatus === "paid" && facts.paymentStatus !== "paid") {
    // Money that lands on an order already expired or cancelled (its stock released) is not lost and the
    // order is not reopened behind the merchant's back: it stays as it is, paid, and the merchant gets a
    // task to refund it or fulfil it by hand (docs/order-status.md, "Late payments").
    if (next.status === "expired" || next.status === "cancelled") {
      await emit(tx, "order.paid_late", { orderId, status: next.status });
      await addTask(tx, { kind: "paid_late", orderId, subjectId: orderId, title: `A payment arrived on an order that is already ${next.status}: refund it, or fulfil the order by hand.` });
    } else await emit(tx, "order.paid", { orderId });
  }
  if (next.fulfillmentStatus === "fulfilled" && facts.fulfillmentStatus !== "fulfilled") await emit(tx, "order.fulfilled", { orderId });
  if (next.fulfillmentStatus === "delivered" && facts.fulfillmentStatus !== "delivered") await emit(tx, "order.delivered", { orderId });
  if (next.status !== facts.status) await emit(tx, next.status === "completed" ? "order.completed" : "order.reopened", { orderId });
  return next;
}
