import { and, eq, type SQL } from "drizzle-orm";
import { emitStep, unchanged } from "../db/changes";
import { refund } from "../db/schema";
import { sql, type Q, type Step } from "../db/steps";
import { lockSteps, type ClaimedPiece, type RefundClaim, type RowState } from "./refund-claims";
import { readingAfter, withAttemptStatus } from "./readings";
import { paymentChange, recomputeSteps, type OrderReading } from "./routines";
import type { OrderStatuses } from "../rules/status";
import { lockRefunds } from "./statements/locks";
import { dropClaim } from "./statements/refunds";
import { addTaskStep } from "./tasks";

/**
 * A refund's second unit: what the gateway answered, recorded on the claimed rows (./refund-claims.ts),
 * under guards, with the routines' changes: a processed refund writes `order.refunded`, moves its attempt
 * to `refunded` through the payment routine once all of it went back, and the order is recomputed; a
 * refused one keeps its row `failed` with a `refund_failed` task and `refund.failed`. When a call failed
 * the claims are dropped: a failed refund leaves nothing behind, and its numbers (its keys) are free for
 * the retry. The gateway is never asked again here: a lost race reads again and records the same
 * answers, so a report that came first (the webhook settled the claim) is found, not paid twice.
 */
export interface RefundView {
  id: string;
  amount: number;
  status: "pending" | "processed" | "failed";
  outsideGateway: boolean;
}

export interface RefundOutcome {
  status: RefundView["status"];
  /** The gateway's refund id; null for a refund made outside it. */
  refundId: string | null;
  error: string | null;
}

/** A claim and the gateway's answers: one per piece, in order, until `failure` stopped the calls. */
export interface RefundCalls {
  claim: RefundClaim;
  outcomes: RefundOutcome[];
  failure: { error: unknown } | null;
}

export const viaGateway = (piece: Pick<ClaimedPiece, "provider" | "providerPaymentId">) => piece.provider !== "manual" && piece.providerPaymentId !== null;

const unanswered = (row: RowState | undefined) => row?.status === "pending" && row.providerRefundId === null;

/** The change: its statements, the refunds it answers and the order's statuses after it, or the failure to answer once it committed. */
export interface RecordedRefunds {
  steps: Step[];
  refunds: RefundView[];
  next: OrderStatuses | null;
  failure: { error: unknown } | null;
}

/** What the reading said of each row and refund id the decisions below rest on; the unit stops as a lost race otherwise. */
function asRead(q: Q, store: SQL, calls: RefundCalls): Step {
  const { pieces, reading } = calls.claim;
  const rows = pieces.map((p) => {
    const now = reading.rows[p.id];
    return sql`(select jsonb_build_object('status', status, 'ref', provider_refund_id) from refund where store_id = ${store} and id = ${p.id})
               is not distinct from ${now ? JSON.stringify({ status: now.status, ref: now.providerRefundId }) : null}::jsonb`;
  });
  const held = calls.outcomes.flatMap((o) =>
    o.refundId ? [sql`(select id from refund where store_id = ${store} and provider_refund_id = ${o.refundId}) is not distinct from ${reading.holders[o.refundId]?.id ?? null}::uuid`] : [],
  );
  return unchanged(q, sql.join([sql`true`, ...rows, ...held], sql` and `));
}

/** Drops a claim nobody answered, when this call still holds it. */
const dropStep = (q: Q, store: SQL, piece: ClaimedPiece) => dropClaim(q, store, piece.id, piece.lease);

/**
 * The change recording `calls` (the gateway's answers) against the reading in `calls.claim`. When a call
 * failed, nothing of the refund is recorded and every claim nobody answered is dropped, also those the
 * gateway did refund before the failure: the retry gets the same numbers, so the same keys, and the
 * gateway answers what it made (as the single transaction did, rolled back whole). Unless the failing call
 * was the last and a gateway's report settled its row meanwhile: the refund was made, and is answered.
 */
export function recordRefunds(q: Q, store: SQL, memberId: SQL, calls: RefundCalls): RecordedRefunds {
  const { claim } = calls;
  const { reading, orderId } = claim;
  const ids = claim.pieces.map((p) => p.id);
  const steps: Step[] = [
    ...lockSteps(q, store, sql`${orderId}::uuid`),
    lockRefunds(q, store, ids),
    asRead(q, store, calls),
  ];
  let outcomes = calls.outcomes;
  if (calls.failure) {
    const failing = claim.pieces[outcomes.length];
    const row = failing && reading.rows[failing.id];
    if (outcomes.length !== claim.pieces.length - 1 || !row || unanswered(row)) {
      return { steps: [...steps, ...claim.pieces.map((p) => dropStep(q, store, p))], refunds: [], next: null, failure: calls.failure };
    }
    outcomes = [...outcomes, { status: row.status, refundId: row.providerRefundId, error: null }];
  }
  const attempts = structuredClone(reading.attempts);
  const processedIds = [...reading.processedIds];
  let order: OrderReading = reading.order;
  const refunds: RefundView[] = [];

  claim.pieces.forEach((piece, i) => {
    const outcome = outcomes[i]!;
    const now = reading.rows[piece.id];
    const outsideGateway = !viaGateway(piece);
    const answer = (id: string, status: RefundView["status"]) => refunds.push({ id, amount: piece.amount, status, outsideGateway });
    // Recorded already: by a report of the gateway, or a repeated call finishing what one settled.
    if (now && !unanswered(now) && now.providerRefundId === outcome.refundId) return answer(piece.id, now.status);
    const holder = outcome.refundId ? reading.holders[outcome.refundId] : undefined;
    if (holder) {
      // Recorded on another row already (a report took it for that row): this claim is not needed.
      steps.push(dropStep(q, store, piece));
      return answer(holder.id, holder.status);
    }
    // The claim as claimed; else it was dropped (write it again) or a report gave it another refund (this one is new).
    const row = unanswered(now)
      ? { id: piece.id, returnId: claim.returnId, write: "update" as const }
      : now
        ? { id: crypto.randomUUID(), returnId: null, write: "insert" as const, reason: "Refunded at the gateway" }
        : { id: piece.id, returnId: claim.returnId, write: "insert" as const, reason: claim.reason };
    steps.push(
      row.write === "update"
        ? q
            .update(refund)
            .set({ status: outcome.status, providerRefundId: outcome.refundId, lastError: outcome.error, updatedAt: sql`now()` })
            .where(and(eq(refund.storeId, store), eq(refund.id, row.id)))
        : q.insert(refund).values({
            id: row.id,
            storeId: store,
            orderId,
            paymentAttemptId: piece.attemptId,
            returnId: row.returnId,
            amount: piece.amount,
            reason: row.reason,
            status: outcome.status,
            providerRefundId: outcome.refundId,
            lastError: outcome.error,
            createdBy: memberId,
          }),
    );
    answer(row.id, outcome.status);
    if (outcome.status === "failed") {
      steps.push(
        addTaskStep(q, store, {
          kind: "refund_failed",
          orderId,
          subjectId: row.id,
          title: `Order #${claim.orderNumber}: the gateway refused a refund of ${piece.amount}. Refund the customer another way.`,
        }),
        emitStep(q, "refund.failed", { orderId, refundId: row.id, amount: piece.amount }),
      );
    }
    if (outcome.status !== "processed") return;
    steps.push(emitStep(q, "order.refunded", { orderId, refundId: row.id, amount: piece.amount, ...(row.returnId ? { returnId: row.returnId } : {}) }));
    // The order's processed refunds are listed by id: this one takes its place among them.
    const at = processedIds.filter((id) => id < row.id).length;
    processedIds.splice(at, 0, row.id);
    order = { orderId, facts: { ...order.facts, refunds: [...order.facts.refunds.slice(0, at), { amount: piece.amount }, ...order.facts.refunds.slice(at)] } };
    const attempt = attempts[piece.attemptId]!;
    attempt.refunded += piece.amount;
    if (attempt.amount > attempt.refunded) return;
    // All of the attempt went back: it moves to `refunded` through the payment routine.
    const moved = paymentChange(q, store, { attempt: { id: piece.attemptId, orderId, attempt: attempt.attempt, status: attempt.status }, order }, "refunded", "refund");
    steps.push(...moved.steps);
    attempt.status = moved.applied.status;
    order = readingAfter(order, moved.applied.order, withAttemptStatus(attempt.attempt, moved.applied.status));
  });
  const recompute = recomputeSteps(q, store, order);
  return { steps: [...steps, ...recompute.guard, ...recompute.steps], refunds, next: recompute.next, failure: null };
}

/** The refunds a recorded change answers, or the failure that stopped its calls (thrown once its unit committed). */
export function answered(made: Pick<RecordedRefunds, "refunds" | "failure">): RefundView[] {
  if (made.failure) throw made.failure.error;
  return made.refunds;
}
