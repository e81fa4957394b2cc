import type { SQL } from "drizzle-orm";
import { uuidFrom } from "../db/ids";
import { constant, mapPlan, plan, type Plan } from "../db/plan";
import { sql, type Q } from "../db/steps";
import { changeOn, readOn, type StoreTx } from "../db/with-store";
import { AppError } from "../core/errors";
import { isGatewayError, type PaymentGateway } from "../payments/gateway";
import { gatewayRefundChange, gatewayRefundReadingPlan } from "./gateway-refunds";
import { refundClaimPlan, refundRereadPlan, type ClaimedPiece, type RefundClaim } from "./refund-claims";
import { answered, recordRefunds, viaGateway, type RefundCalls, type RefundOutcome, type RefundView } from "./refund-record";
import type { OrderStatuses } from "../rules/status";

export type { RefundCalls, RefundView } from "./refund-record";
export type { RefundClaim } from "./refund-claims";

/**
 * Refunds (docs/order-status.md, "Refunds"; docs/payments.md, "Refunds in two round trips"). Money goes
 * back the way it came: a gateway payment through the gateway, a payment recorded by hand ('Mark as
 * paid') by the merchant outside it (the row says so). A refund row is written for each attempt it draws
 * on, newest payment first; only processed rows count in the recompute.
 *
 * Two units with the gateway's calls between them: the claim (./refund-claims.ts) writes the rows
 * `pending`, their ids being the gateway's idempotency keys, and commits; each is sent to the gateway;
 * the record (./refund-record.ts) writes the answers. A retry of a failed refund asks with the same key,
 * and the gateway answers the refund it already made instead of paying twice.
 */

export interface RefundInput {
  orderId: string;
  /** Minor units; absent: everything still refundable. */
  amount?: number | undefined;
  reason?: string | undefined;
}

/** The claim of `orders.refund`: the order's refund as asked. */
export function orderRefundClaimPlan(q: Q, store: SQL, memberId: SQL, input: RefundInput): Plan<RefundClaim> {
  const ask = { order: sql`${input.orderId}::uuid`, amount: sql`${input.amount ?? null}`, reason: sql`${input.reason ?? null}`, returnId: null };
  return mapPlan(refundClaimPlan(q, store, memberId, ask, constant(undefined)), (made) => made.claim);
}

/** Each claimed piece sent to the gateway (its key: the row's id), in order, until one fails. Never throws. */
export async function callGateway(claim: RefundClaim, gatewayOf: () => Promise<PaymentGateway | undefined>): Promise<RefundCalls> {
  const outcomes: RefundOutcome[] = [];
  try {
    let gateway: Promise<PaymentGateway | undefined> | undefined;
    for (const piece of claim.pieces) {
      const row = claim.reading.rows[piece.id];
      // A row answered already (a repeated call finishing what a report settled) is not asked again.
      if (row && (row.status !== "pending" || row.providerRefundId !== null)) outcomes.push({ status: row.status, refundId: row.providerRefundId, error: null });
      else if (!viaGateway(piece)) outcomes.push({ status: "processed", refundId: null, error: null });
      else outcomes.push(await askGateway(await (gateway ??= gatewayOf()), piece));
    }
    return { claim, outcomes, failure: null };
  } catch (error) {
    return { claim, outcomes, failure: { error } };
  }
}

async function askGateway(gateway: PaymentGateway | undefined, piece: ClaimedPiece): Promise<RefundOutcome> {
  if (!gateway || gateway.provider !== piece.provider) {
    throw new AppError("SERVICE_UNAVAILABLE", `This payment went through ${piece.provider}, which cannot be reached from here: nothing was refunded.`, { reason: "gateway_unavailable" });
  }
  try {
    const result = await gateway.refund(piece.providerPaymentId!, piece.amount, piece.id);
    return { status: result.status, refundId: result.refundId, error: result.status === "failed" ? "The gateway reported the refund failed." : null };
  } catch (e) {
    if (!isGatewayError(e)) throw e;
    const message = `The gateway (${e.provider}) did not refund: ${e.message}. Nothing was refunded`;
    if (e.retryable) throw new AppError("SERVICE_UNAVAILABLE", `${message}; try again in a minute.`, { reason: `gateway_${e.kind}` });
    throw new AppError("CONFLICT", `${message}.`, { reason: `gateway_${e.kind}`, issues: [{ path: "amount", message: e.message }] });
  }
}

/** What the record decides from, read again after its unit lost a race; the gateway's answers stay as they were. */
export function rereadCalls(q: Q, store: SQL, calls: RefundCalls): Plan<RefundCalls> {
  const refundIds = calls.outcomes.flatMap((o) => (o.refundId ? [o.refundId] : []));
  return mapPlan(refundRereadPlan(q, store, calls.claim, refundIds), (reading) => ({ ...calls, claim: { ...calls.claim, reading } }));
}

const storeOf = (tx: StoreTx) => sql`${tx.storeId}::uuid`;

/**
 * The same on an open transaction (tests): the claim, the gateway, the record, in the transaction, whose
 * locks keep the reading current; a failure rolls the whole back.
 */
export async function refundOrder(
  tx: StoreTx,
  input: RefundInput,
  gateway: PaymentGateway | undefined,
  memberId: string | null,
): Promise<{ refunds: RefundView[]; order: OrderStatuses }> {
  const member = sql`${memberId}::uuid`;
  const claim = await changeOn(tx, (q) => orderRefundClaimPlan(q, storeOf(tx), member, input));
  const calls = await callGateway(claim, async () => gateway);
  return changeOn(tx, (q) => {
    const made = recordRefunds(q, storeOf(tx), member, calls);
    return plan(made.steps, () => ({ refunds: answered(made), order: made.next! }));
  });
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
  const store = storeOf(tx);
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
