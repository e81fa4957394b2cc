import { uuidFrom } from "../db/ids";
import { emit } from "../db/outbox";
import { plan } from "../db/plan";
import { sql } from "../db/steps";
import { changeOn, readOn, type StoreTx } from "../db/with-store";
import { AppError } from "../http/errors";
import { isGatewayError, type PaymentGateway } from "../payments/gateway";
import { conflict, lockOrder } from "./actions";
import { gatewayRefundChange, gatewayRefundReadingPlan } from "./gateway-refunds";
import { applyPaymentStatus, recomputeOrderStatuses } from "./routines";
import type { OrderStatuses } from "./status";
import { addTask } from "./tasks";

/**
 * Refunds (docs/order-status.md, "Refunds"). Money goes back the way it came: a gateway payment through
 * the gateway, a payment recorded by hand ('Mark as paid') by the merchant outside it (the row says so).
 * A refund row is written for each attempt it draws on, newest payment first; only processed rows count
 * in the recompute. The gateway is called inside the transaction with the row's id as its idempotency
 * key, and that id is derived from the order and the refund's number: a retry after a lost commit asks
 * for the same refund again, and the gateway answers the one it already made instead of paying twice.
 */

export interface RefundInput {
  orderId: string;
  /** Minor units; absent: everything still refundable. */
  amount?: number | undefined;
  reason?: string | undefined;
  returnId?: string | undefined;
}

export interface RefundView {
  id: string;
  amount: number;
  status: "pending" | "processed" | "failed";
  outsideGateway: boolean;
}

interface PaidAttempt {
  id: string;
  provider: string;
  provider_payment_id: string | null;
  amount: number;
  held: number;
}

export async function refundOrder(
  tx: StoreTx,
  input: RefundInput,
  gateway: PaymentGateway | undefined,
  memberId: string | null,
): Promise<{ refunds: RefundView[]; order: OrderStatuses }> {
  const order = await lockOrder(tx, input.orderId);
  const { rows: attempts } = await tx.$client.query<PaidAttempt>(
    `select a.id, a.provider, a.provider_payment_id, a.amount::float8 as amount,
       a.amount::float8 - coalesce((select sum(r.amount) from refund r where r.store_id = a.store_id and r.payment_attempt_id = a.id
                                     and r.status in ('pending', 'processed')), 0)::float8 as held
     from payment_attempt a where a.store_id = $1 and a.order_id = $2 and a.status in ('captured', 'refunded')
     order by a.attempt desc`,
    [tx.storeId, order.id],
  );
  const refundable = attempts.reduce((n, a) => n + Math.max(0, a.held), 0);
  if (refundable === 0) throw conflict("nothing_to_refund", `Order #${order.number} holds no captured money to refund.`);
  const amount = input.amount ?? refundable;
  if (amount > refundable) {
    throw new AppError("CONFLICT", `At most ${refundable} (minor units) of order #${order.number} can be refunded.`, {
      reason: "exceeds_refundable",
      issues: [{ path: "amount", message: `at most ${refundable}` }],
    });
  }
  const { rows: counted } = await tx.$client.query<{ n: number }>("select count(*)::int as n from refund where store_id = $1 and order_id = $2", [tx.storeId, order.id]);
  let number = counted[0]!.n;
  let left = amount;
  const refunds: RefundView[] = [];
  for (const attempt of attempts) {
    if (left === 0) break;
    const piece = Math.min(left, Math.max(0, attempt.held));
    if (piece === 0) continue;
    left -= piece;
    const id = await uuidFrom(`${order.id}:refund:${++number}`);
    const viaGateway = attempt.provider !== "manual" && attempt.provider_payment_id !== null;
    const outcome = viaGateway ? await askGateway(gateway, attempt, piece, id) : { status: "processed" as const, refundId: null, error: null };
    await tx.$client.query(
      `insert into refund (id, store_id, order_id, payment_attempt_id, return_id, amount, reason, status, provider_refund_id, last_error, created_by)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [id, tx.storeId, order.id, attempt.id, input.returnId ?? null, piece, input.reason ?? null, outcome.status, outcome.refundId, outcome.error, memberId],
    );
    refunds.push({ id, amount: piece, status: outcome.status, outsideGateway: !viaGateway });
    if (outcome.status === "processed") await settle(tx, order.id, attempt.id, id, piece, input.returnId);
    if (outcome.status === "failed") {
      await addTask(tx, { kind: "refund_failed", orderId: order.id, subjectId: id, title: `Order #${order.number}: the gateway refused a refund of ${piece}. Refund the customer another way.` });
      await emit(tx, "refund.failed", { orderId: order.id, refundId: id, amount: piece });
    }
  }
  return { refunds, order: await recomputeOrderStatuses(tx, order.id) };
}

async function askGateway(gateway: PaymentGateway | undefined, attempt: PaidAttempt, amount: number, key: string) {
  if (!gateway || gateway.provider !== attempt.provider) {
    throw new AppError("SERVICE_UNAVAILABLE", `This payment went through ${attempt.provider}, which cannot be reached from here: nothing was refunded.`, { reason: "gateway_unavailable" });
  }
  try {
    const result = await gateway.refund(attempt.provider_payment_id!, amount, key);
    return { status: result.status, refundId: result.refundId, error: result.status === "failed" ? "The gateway reported the refund failed." : null };
  } catch (e) {
    if (!isGatewayError(e)) throw e;
    const message = `The gateway (${e.provider}) did not refund: ${e.message}. Nothing was refunded`;
    if (e.retryable) throw new AppError("SERVICE_UNAVAILABLE", `${message}; try again in a minute.`, { reason: `gateway_${e.kind}` });
    throw new AppError("CONFLICT", `${message}.`, { reason: `gateway_${e.kind}`, issues: [{ path: "amount", message: e.message }] });
  }
}

/** A processed refund: `order.refunded` for it, and the attempt moves to `refunded` once all of it went back. */
async function settle(tx: StoreTx, orderId: string, attemptId: string, refundId: string, amount: number, returnId: string | null | undefined): Promise<void> {
  await emit(tx, "order.refunded", { orderId, refundId, amount, ...(returnId ? { returnId } : {}) });
  const { rows } = await tx.$client.query<{ full: boolean }>(
    `select a.amount <= coalesce((select sum(r.amount) from refund r where r.store_id = a.store_id and r.payment_attempt_id = a.id and r.status = 'processed'), 0) as full
     from payment_attempt a where a.store_id = $1 and a.id = $2`,
    [tx.storeId, attemptId],
  );
  if (rows[0]?.full) await applyPaymentStatus(tx, attemptId, "refunded", "refund");
}

/**
 * A refund the gateway reports by webhook, on an open transaction (./gateway-refunds.ts): read with the
 * attempt, the order and the refund row locked, then changed. Returns whether anything changed.
 */
export async function recordGatewayRefund(
  tx: StoreTx,
  attempt: { id: string; orderId: string },
  report: { refundId: string; amount: number },
): Promise<boolean> {
  const store = sql`${tx.storeId}::uuid`;
  const reading = await readOn(tx, (q) => gatewayRefundReadingPlan(q, store, attempt.id, report.refundId, true));
  if (!reading) throw new AppError("NOT_FOUND", "No such payment attempt in this store.");
  const newId = await gatewayRefundId(attempt.id, report.refundId);
  return changeOn(tx, (q) => {
    const made = gatewayRefundChange(q, store, reading, report, newId);
    return plan(made.steps, () => made.changed);
  });
}

/** The row id of a refund made in the gateway's dashboard: the same for every report of it. */
export const gatewayRefundId = (attemptId: string, refundId: string) => uuidFrom(`${attemptId}:gateway-refund:${refundId}`);
