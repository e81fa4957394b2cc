import type { SQL } from "drizzle-orm";
import { paymentAttempt } from "../db/schema";
import { plan, type Plan } from "../db/plan";
import { sql, type Q } from "../db/steps";
import { changeOn, readOn, type StoreTx } from "../db/with-store";
import { AppError } from "../core/errors";
import type { CreatePaymentInput } from "../payments/gateway";
import { unknownOrder } from "./access";
import type { AttemptRow } from "./checkout-input";
import { attemptIdByRef, attemptOfRef, orderForNewAttempt } from "./statements/payments";

export { attemptIdByRef };

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
  const store = sql`${tx.storeId}::uuid`;
  const o = await readOn(tx, (q) => plan([orderForNewAttempt(q, store, orderId)] as const, ([[row]]) => row));
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
  const id = await changeOn(tx, (q) =>
    plan([q.insert(paymentAttempt).values({ storeId: store, orderId, attempt, idempotencyKey: key, provider, amount }).returning({ id: paymentAttempt.id })] as const, ([[row]]) => row!.id),
  );
  return { id, attempt, idempotencyKey: key, status: "created", provider, amount };
}

/** The attempt a gateway reference belongs to, in this store (null when none): one statement. */
export function attemptByRefPlan(q: Q, store: SQL, provider: string, providerRef: string): Plan<{ id: string; orderId: string; amount: number } | null> {
  return plan(
    [attemptOfRef(q, store, provider, providerRef)] as const,
    ([[r]]) => (r ? { id: r.id, orderId: r.order_id, amount: Number(r.amount) } : null),
  );
}

/** The same inside a transaction that is open already. */
export function attemptByRef(tx: StoreTx, provider: string, providerRef: string): Promise<{ id: string; orderId: string; amount: number } | null> {
  return readOn(tx, (q) => attemptByRefPlan(q, sql`${tx.storeId}::uuid`, provider, providerRef));
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
