import { and, eq, type SQL } from "drizzle-orm";
import { emitStep, unchanged } from "../db/changes";
import { mapPlan, plan, together, type Plan } from "../db/plan";
import { refund as refundTable } from "../db/schema";
import { sql, type Q, type Step } from "../db/steps";
import { lockAttemptStep, lockOrderStep } from "./actions";
import { readingAfter, withAttemptStatus } from "./readings";
import { paymentChange, paymentReadingPlan, recomputeSteps, type IdIn, type PaymentReading } from "./routines";
import type { AttemptStatus, ReportedMoney } from "../rules/status";
import { attemptRefunded, refundByProviderId, settleRefund, unansweredClaims } from "./statements/refunds";
import { addTaskStep, moneyWords } from "./tasks";

/**
 * A refund the gateway reports (webhook), as a reading and a change: the pending row it answers becomes
 * processed; so does a claim still waiting for the gateway's answer (./refund-claims.ts: no provider
 * refund id yet) of the attempt and the amount reported, the newest claimed first, since the report may
 * come before the claim's own call records it; a refund made in the gateway's own dashboard (no row) is
 * recorded, so payment_status never disagrees with the money. A refund proves a capture, so an attempt
 * whose capture report has not arrived yet is captured first; an attempt all of whose money went back
 * moves to `refunded`. The change replays the routines in the order they ran on a transaction (capture,
 * the refund row, the attempt refunded, the recompute), each guarded against the order as the ones before
 * it left it.
 */
export interface GatewayRefundReport {
  refundId: string;
  amount: number;
  /** The refunded payment's own amount and currency, when the report carries them: its capture is checked. */
  payment?: ReportedMoney | undefined;
}

export interface GatewayRefundReading {
  payment: PaymentReading;
  /** The attempt's amount, and what processed refunds gave back of it so far. */
  attemptAmount: number;
  refunded: number;
  /** The row the report answers (a refund made here), or null (one made in the gateway's dashboard). */
  known: { id: string; attemptId: string; status: "pending" | "processed" | "failed"; amount: number; returnId: string | null } | null;
  /** The order's processed refunds, as its facts list them (by id). */
  processedIds: string[];
  /** The attempt's claims no answer reached yet, the newest claimed first. */
  claims: { id: string; amount: number; returnId: string | null }[];
}

/** Reads the attempt, its order's facts and the refund rows a report changes (with `lock`: attempt, order, refund row). */
export function gatewayRefundReadingPlan(q: Q, store: SQL, attemptId: IdIn, refundId: string, lock = false): Plan<GatewayRefundReading | null> {
  const read = together({
    // With `lock`, the attempt, then its order, locked by statements of their own (one that waited for a lock reads other rows as they were when it began).
    locks: lock
      ? plan(
          [
            lockAttemptStep(q, store, attemptId),
            lockOrderStep(q, store, sql`(select order_id from payment_attempt where store_id = ${store} and id = ${attemptId})`),
          ] as const,
          () => undefined,
        )
      : plan([], () => undefined),
    payment: paymentReadingPlan(q, store, attemptId, lock),
    rows: plan(
      [
        attemptRefunded(q, store, attemptId),
        refundByProviderId(q, store, refundId, lock),
        q
          .select({ id: refundTable.id })
          .from(refundTable)
          .where(
            and(
              eq(refundTable.storeId, store),
              eq(refundTable.status, "processed"),
              eq(refundTable.orderId, sql`(select order_id from payment_attempt where store_id = ${store} and id = ${attemptId})`),
            ),
          )
          .orderBy(refundTable.id),
        unansweredClaims(q, store, attemptId, lock),
      ] as const,
      ([[attempt], [known], processed, claims]) => ({ attempt, known: known ?? null, processedIds: processed.map((r) => r.id), claims }),
    ),
  });
  return mapPlan(read, ({ payment, rows }) =>
    payment && rows.attempt
      ? { payment, attemptAmount: rows.attempt.amount, refunded: rows.attempt.refunded, known: rows.known, processedIds: rows.processedIds, claims: rows.claims }
      : null,
  );
}

/** The row a report answers: one made here (by its refund id, or the claim it settles), or none (a dashboard refund). */
function answeredRow(reading: GatewayRefundReading, report: GatewayRefundReport) {
  const claimed = reading.known ? undefined : reading.claims.find((c) => c.amount === report.amount);
  const known = reading.known ?? (claimed ? { ...claimed, attemptId: reading.payment.attempt.id, status: "pending" as const } : null);
  return { claimed, known };
}

/** The guard that the row (or its absence) is as read, the refund id not taken meanwhile. */
function rowAsRead(q: Q, store: SQL, report: GatewayRefundReport, { claimed, known }: ReturnType<typeof answeredRow>): Step[] {
  return [
    ...(known ? [q.select({ id: refundTable.id }).from(refundTable).where(and(eq(refundTable.storeId, store), eq(refundTable.id, known.id))).for("update")] : []),
    unchanged(
      q,
      claimed
        ? sql`(select status = 'pending' and provider_refund_id is null from refund where store_id = ${store} and id = ${claimed.id})
              and not exists (select 1 from refund where store_id = ${store} and provider_refund_id = ${report.refundId})`
        : known
          ? sql`(select status from refund where store_id = ${store} and id = ${known.id}) = ${known.status}`
          : sql`not exists (select 1 from refund where store_id = ${store} and provider_refund_id = ${report.refundId})`,
    ),
  ];
}

/** The row a report answers, settled as the report says; a dashboard refund's row written so (`newId`). */
function settledRow(
  q: Q,
  store: SQL,
  r: { known: { id: string } | null; newId: string; attempt: { id: string; orderId: string }; report: GatewayRefundReport },
  status: "processed" | "failed",
  error: string | null,
): Step {
  const { known, newId, attempt, report } = r;
  if (known) return settleRefund(q, store, known.id, report.refundId, status, error);
  return q.insert(refundTable).values({
    id: newId,
    storeId: store,
    orderId: attempt.orderId,
    paymentAttemptId: attempt.id,
    amount: report.amount,
    reason: "Refunded at the gateway",
    status,
    providerRefundId: report.refundId,
    lastError: error,
  });
}

/**
 * The change for a report read as `reading`; `newId` names the row of a dashboard refund. Answers whether
 * anything changed (a refund already processed changes nothing; nor does a refund of a payment that does
 * not add up to its attempt: that payment never counted, and its attempt is put under review instead).
 */
export function gatewayRefundChange(q: Q, store: SQL, reading: GatewayRefundReading, report: GatewayRefundReport, newId: string): { steps: Step[]; changed: boolean } {
  const { payment } = reading;
  const row = answeredRow(reading, report);
  const { known } = row;
  if (known?.status === "processed") return { steps: [], changed: false };
  const { attempt } = payment;
  const withStatus = (status: AttemptStatus) => withAttemptStatus(attempt.attempt, status);
  const captured = paymentChange(q, store, payment, "captured", "webhook", { reported: report.payment });
  if (captured.applied.review) return { steps: captured.steps, changed: false };
  const refund = known ? { id: known.id, amount: known.amount, returnId: known.returnId } : { id: newId, amount: report.amount, returnId: null };
  // The order's processed refunds are listed by id: this one takes its place among them.
  const at = reading.processedIds.filter((id) => id < refund.id).length;
  const refundedOrder = readingAfter(payment.order, captured.applied.order, (facts) => ({
    ...withStatus(captured.applied.status)(facts),
    refunds: [...facts.refunds.slice(0, at), { amount: refund.amount }, ...facts.refunds.slice(at)],
  }));
  const ofThisAttempt = !known || known.attemptId === attempt.id;
  const full = reading.attemptAmount <= reading.refunded + (ofThisAttempt ? refund.amount : 0);
  const afterCapture: PaymentReading = { attempt: { ...attempt, status: captured.applied.status }, order: refundedOrder };
  const refunded = full ? paymentChange(q, store, afterCapture, "refunded", "refund") : undefined;
  const last = refunded ? readingAfter(refundedOrder, refunded.applied.order, withStatus(refunded.applied.status)) : refundedOrder;
  const recompute = recomputeSteps(q, store, last);
  return {
    steps: [
      ...captured.steps,
      ...rowAsRead(q, store, report, row),
      settledRow(q, store, { known, newId, attempt, report }, "processed", null),
      emitStep(q, "order.refunded", { orderId: attempt.orderId, refundId: refund.id, amount: refund.amount, ...(refund.returnId ? { returnId: refund.returnId } : {}) }),
      ...(refunded ? refunded.steps : []),
      ...recompute.guard,
      ...recompute.steps,
    ],
    changed: true,
  };
}

/**
 * A refund the gateway reports failed (Razorpay's `refund.failed`: it gave up, and the money stayed with
 * the merchant), as a change: the pending row it answers (by its refund id, or the claim still waiting for
 * its call's record) becomes `failed`; a dashboard refund we never saw is recorded as a failed row. Either
 * way the merchant gets a `refund_failed` task and `refund.failed` is written. A failed row counts for
 * nothing in the recompute, so the order's statuses do not change. A row already processed or failed
 * changes nothing: the first final report wins, as the gateway's own refund does not come back.
 */
export function gatewayRefundFailedChange(q: Q, store: SQL, reading: GatewayRefundReading, report: GatewayRefundReport, newId: string): { steps: Step[]; changed: boolean } {
  const row = answeredRow(reading, report);
  const { known } = row;
  if (known && known.status !== "pending") return { steps: [], changed: false };
  const { attempt } = reading.payment;
  const id = known?.id ?? newId;
  const error = "The gateway reported the refund failed.";
  return {
    steps: [
      // The lock order of every writer: the attempt, its order, then the refund row.
      lockAttemptStep(q, store, attempt.id),
      lockOrderStep(q, store, attempt.orderId),
      ...rowAsRead(q, store, report, row),
      settledRow(q, store, { known, newId, attempt, report }, "failed", error),
      addTaskStep(q, store, {
        kind: "refund_failed",
        orderId: attempt.orderId,
        subjectId: id,
        title: `The gateway reported a refund of ${moneyWords(known?.amount ?? report.amount, reading.payment.order.facts.currency)} failed: the money stayed with you. Refund the customer another way, or refund again.`,
      }),
      emitStep(q, "refund.failed", { orderId: attempt.orderId, refundId: id, amount: known?.amount ?? report.amount }),
    ],
    changed: true,
  };
}
