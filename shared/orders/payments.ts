import type { SQL } from "drizzle-orm";
import { plan, type Plan } from "../db/plan";
import { raw, sql, type Q, type StatementClient } from "../db/steps";
import { runPlanOn } from "../db/unit";
import type { StoreTx } from "../db/with-store";
import { AppError } from "../core/errors";
import type { CreatePaymentInput } from "../payments/gateway";
import { unknownOrder } from "./access";
import type { AttemptRow } from "./checkout-input";

/**
 * Payment attempts around the gateway (SPEC "Checkout and payment behaviour" 1): the rows a retry and the
 * gateway's answers work on. Every status change still goes through `applyPaymentStatus`.
 */

/**
 * A new attempt for an order still waiting for its money: the order row locked, the attempt numbered
 * after the last, keyed `<orderId>:<attempt>`, for what is due now: the total, or with a pre-order
 * deposit (docs/order-status.md, "Pre-orders") the deposit first and, once the balance was requested,
 * what is left (the attempt the balance job made is used while it has not been sent to the gateway).
 * An order already paid (or being paid), whose balance is not asked for yet or expired, or no longer
 * open, is refused with 409 and the reason.
 */
export async function newAttempt(tx: StoreTx, orderId: string, provider: string): Promise<AttemptRow> {
  const { rows } = await tx.$client.query<{
    status: string; payment_method: string; total: string; balance: string; captured: string; authorized: boolean; last: number;
    balance_open: boolean; balance_expired: boolean; fresh: { id: string; attempt: number; amount: number; provider: string } | null;
  }>(
    `select o.status, o.payment_method, o.total::text, o.balance_amount::text as balance,
       (o.balance_requested_at is not null and o.balance_expired_at is null) as balance_open, o.balance_expired_at is not null as balance_expired,
       coalesce((select sum(a.amount) from payment_attempt a where a.store_id = o.store_id and a.order_id = o.id and a.status in ('captured', 'refunded')), 0)::text as captured,
       exists (select 1 from payment_attempt a where a.store_id = o.store_id and a.order_id = o.id and a.status = 'authorized') as authorized,
       coalesce((select max(attempt) from payment_attempt a where a.store_id = o.store_id and a.order_id = o.id), 0) as last,
       (select json_build_object('id', a.id, 'attempt', a.attempt, 'amount', a.amount, 'provider', a.provider) from payment_attempt a
        where a.store_id = o.store_id and a.order_id = o.id and a.status = 'created' and a.provider_ref is null order by a.attempt desc limit 1) as fresh
     from shop_order o where o.store_id = $1 and o.id = $2 for update of o`,
    [tx.storeId, orderId],
  );
  const o = rows[0];
  if (!o) throw unknownOrder();
  if (o.status !== "open") throw new AppError("CONFLICT", `This order is ${o.status}: it takes no payment.`, { reason: `order_${o.status}` });
  const captured = Number(o.captured);
  const paid = () => new AppError("CONFLICT", "This order is already paid.", { reason: "already_paid" });
  if (o.authorized || (captured > 0 && (Number(o.balance) === 0 || captured >= Number(o.total)))) throw paid();
  if (o.payment_method !== "gateway") throw new AppError("CONFLICT", "This order is paid by bank transfer.", { reason: "manual_transfer" });
  let amount = Number(o.total) - Number(o.balance);
  if (captured > 0) {
    if (o.balance_expired) throw new AppError("CONFLICT", "The time to pay this pre-order's balance is over: please contact the store.", { reason: "balance_expired" });
    if (!o.balance_open) throw new AppError("CONFLICT", "The balance is asked for when your pre-ordered items arrive.", { reason: "balance_not_due" });
    amount = Number(o.total) - captured;
    if (o.fresh && o.fresh.amount === amount && o.fresh.provider === provider) {
      return { id: o.fresh.id, attempt: o.fresh.attempt, idempotencyKey: `${orderId}:${o.fresh.attempt}`, status: "created", provider, amount };
    }
  }
  const attempt = o.last + 1;
  const key = `${orderId}:${attempt}`;
  const inserted = await tx.$client.query<{ id: string }>(
    "insert into payment_attempt (store_id, order_id, attempt, idempotency_key, provider, amount) values ($1, $2, $3, $4, $5, $6) returning id",
    [tx.storeId, orderId, attempt, key, provider, amount],
  );
  return { id: inserted.rows[0]!.id, attempt, idempotencyKey: key, status: "created", provider, amount };
}

/** The attempt a gateway reference names, as SQL a unit's statements take for its id (routines.ts IdIn). */
export const attemptIdByRef = (store: SQL, provider: string, providerRef: string): SQL =>
  sql`(select id from payment_attempt where store_id = ${store} and provider = ${provider} and provider_ref = ${providerRef} limit 1)`;

/** The attempt a gateway reference belongs to, in this store (null when none): one statement. */
export function attemptByRefPlan(q: Q, store: SQL, provider: string, providerRef: string): Plan<{ id: string; orderId: string; amount: number } | null> {
  return plan(
    [raw<{ id: string; order_id: string; amount: string }>(q, sql`select id, order_id, amount::text from payment_attempt where store_id = ${store} and id = ${attemptIdByRef(store, provider, providerRef)}`)] as const,
    ([[r]]) => (r ? { id: r.id, orderId: r.order_id, amount: Number(r.amount) } : null),
  );
}

/** The same inside a transaction that is open already. */
export function attemptByRef(tx: StoreTx, provider: string, providerRef: string): Promise<{ id: string; orderId: string; amount: number } | null> {
  return runPlanOn(tx.$client as unknown as StatementClient, (q) => attemptByRefPlan(q, sql`${tx.storeId}::uuid`, provider, providerRef));
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
