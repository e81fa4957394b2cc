import type { StoreTx } from "../db/with-store";
import { AppError } from "../http/errors";
import type { CreatePaymentInput } from "../payments/gateway";
import { unknownOrder } from "./access";
import type { AttemptRow } from "./checkout";

/**
 * Payment attempts around the gateway (SPEC "Checkout and payment behaviour" 1): the rows a retry and the
 * gateway's answers work on. Every status change still goes through `applyPaymentStatus`.
 */

/**
 * A new attempt for an order still waiting for its money: the order row locked, the attempt numbered
 * after the last, keyed `<orderId>:<attempt>`. An order already paid (or being paid), or no longer open,
 * is refused with 409 and the reason.
 */
export async function newAttempt(tx: StoreTx, orderId: string, provider: string): Promise<AttemptRow> {
  const { rows } = await tx.$client.query<{ status: string; payment_method: string; total: string; busy: boolean; last: number }>(
    `select o.status, o.payment_method, o.total::text,
       exists (select 1 from payment_attempt a where a.store_id = o.store_id and a.order_id = o.id and a.status in ('authorized', 'captured', 'refunded')) as busy,
       coalesce((select max(attempt) from payment_attempt a where a.store_id = o.store_id and a.order_id = o.id), 0) as last
     from shop_order o where o.store_id = $1 and o.id = $2 for update of o`,
    [tx.storeId, orderId],
  );
  const o = rows[0];
  if (!o) throw unknownOrder();
  if (o.status !== "open") throw new AppError("CONFLICT", `This order is ${o.status}: it takes no payment.`, { reason: `order_${o.status}` });
  if (o.busy) throw new AppError("CONFLICT", "This order is already paid.", { reason: "already_paid" });
  if (o.payment_method !== "gateway") throw new AppError("CONFLICT", "This order is paid by bank transfer.", { reason: "manual_transfer" });
  const attempt = o.last + 1;
  const key = `${orderId}:${attempt}`;
  const inserted = await tx.$client.query<{ id: string }>(
    "insert into payment_attempt (store_id, order_id, attempt, idempotency_key, provider, amount) values ($1, $2, $3, $4, $5, $6) returning id",
    [tx.storeId, orderId, attempt, key, provider, o.total],
  );
  return { id: inserted.rows[0]!.id, attempt, idempotencyKey: key, status: "created", provider, amount: Number(o.total) };
}

/** The attempt a gateway reference belongs to, in this store (null when none). */
export async function attemptByRef(tx: StoreTx, provider: string, providerRef: string): Promise<{ id: string; orderId: string; amount: number } | null> {
  const { rows } = await tx.$client.query<{ id: string; order_id: string; amount: string }>(
    "select id, order_id, amount::text from payment_attempt where store_id = $1 and provider = $2 and provider_ref = $3",
    [tx.storeId, provider, providerRef],
  );
  const r = rows[0];
  return r ? { id: r.id, orderId: r.order_id, amount: Number(r.amount) } : null;
}

/** What the gateway is asked for an attempt of an order (the one shape every caller builds). */
export function paymentRequest(
  order: { id: string; number: number; currency: string; email: string },
  attempt: { attempt: number; idempotencyKey: string; amount: number },
  returnUrl: string,
): CreatePaymentInput {
  return {
    orderId: order.id,
    orderNumber: String(order.number),
    attempt: attempt.attempt,
    idempotencyKey: attempt.idempotencyKey,
    amount: attempt.amount,
    currency: order.currency,
    customer: { email: order.email },
    returnUrl,
  };
}
