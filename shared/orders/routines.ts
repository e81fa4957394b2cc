import { and, eq, type SQL } from "drizzle-orm";
import { emitStep, unchanged } from "../db/changes";
import type { Database } from "../db/database";
import { pgErrorOf } from "../db/pg-errors";
import { sendStoreUnit } from "../db/unit";
import { plan, type Plan } from "../db/plan";
import { paymentAttempt, shopOrder } from "../db/schema";
import { EXAMPLE, orNull, pg, statement } from "../db/statement";
import { sql, type Q, type Step } from "../db/steps";
import { changeOn, readOn, type StoreTx } from "../db/with-store";
import { AppError } from "../core/errors";
import { countDiscountUseAgainSql } from "./discount-uses";
import { addTaskStep, moneyWords } from "./tasks";
import {
  decideAttemptStatus,
  recomputeOrder as decideOrder,
  reviewOf,
  type AttemptStatus,
  type OrderStatuses,
  type PaymentReview,
} from "../rules/status";
import type { AttemptChange, Applied, Facts, OrderReading, PaymentReading, PaymentTrigger } from "./routine-facts";

export type { AttemptChange, Applied, OrderReading, PaymentReading, PaymentTrigger } from "./routine-facts";

/**
 * The two routines of ARCHITECTURE §15 around their pure decisions (shared/rules/status.ts):
 *
 * - the payment routine is the only writer of a payment attempt's status, whatever the trigger (the
 *   gateway call, a webhook, the client's confirmation, 'Mark as paid', expiry reconciliation); it only
 *   moves forward;
 * - the recompute routine is the only writer of an order's `payment_status`, `fulfillment_status` and
 *   the open ↔ completed move, from the attempt, processed refund and shipment rows.
 *
 * Each is a reading (one read statement or two) and a change decided in TypeScript from it. The change's
 * first statements lock the attempt, then the order (always in that order, so racing triggers queue
 * instead of deadlocking) and stop the unit as a lost race (CR409) when either is no longer as read: a
 * change sent in its own unit after its reading (two round trips) is then read and decided again, and a
 * change on an open transaction reads with the locks taken, so it never loses.
 *
 * The facts of one order in one jsonb value. Every aggregate has a fixed order, so the same rows always
 * give an equal value: the change compares a fresh reading with the one it decided from.
 */
function factsOf(store: SQL, orderId: SQL, lock: boolean): SQL {
  return sql`select jsonb_build_object(
       'status', o.status, 'total', o.total, 'currency', o.currency, 'paymentStatus', o.payment_status, 'fulfillmentStatus', o.fulfillment_status,
       'attempts', coalesce((select jsonb_agg(jsonb_build_object('attempt', a.attempt, 'status', a.status, 'amount', a.amount) order by a.attempt)
                              from payment_attempt a where a.store_id = o.store_id and a.order_id = o.id), '[]'::jsonb),
       'refunds', coalesce((select jsonb_agg(jsonb_build_object('amount', r.amount) order by r.id) from refund r
                            where r.store_id = o.store_id and r.order_id = o.id and r.status = 'processed'), '[]'::jsonb),
       'parcels', coalesce((select jsonb_agg(jsonb_build_object('id', f.id) order by f.id) from fulfillment_order f
                             where f.store_id = o.store_id and f.order_id = o.id), '[]'::jsonb),
       'shipments', coalesce((select jsonb_agg(jsonb_build_object('parcelId', s.fulfillment_order_id, 'status', s.status) order by s.id)
                               from shipment s where s.store_id = o.store_id and s.order_id = o.id), '[]'::jsonb),
       'closed', case when o.cancelled_at is not null then 'cancelled' when o.expired_at is not null then 'expired' end)
     from shop_order o where o.store_id = ${store} and o.id = ${orderId}${lock ? sql` for update of o` : sql``}`;
}

/** An order's facts as the recompute reads them, as SQL a statement compares or selects (the expiry's reading). */
export const orderFactsSql = (store: SQL, orderId: SQL): SQL => factsOf(store, orderId, false);

// The routines' statements. This file is a statement module of its own (decision 0026): the recompute is
// the one writer of an order's statuses, and shared/orders/status-writers.test.ts holds it to this file.

const { id: ID, store: STORE } = EXAMPLE;

const orderFacts = statement("orders.orderFacts", {
  row: { order_id: orNull(pg.uuid()), facts: orNull(pg.jsonb<Facts>()) },
  examples: [
    [STORE, sql`${ID}::uuid`, false],
    [STORE, sql`${ID}::uuid`, true],
  ],
  sql: (store: SQL, id: SQL, lock: boolean) => sql`select (select id from shop_order where store_id = ${store} and id = ${id}) as order_id, (${factsOf(store, id, lock)}) as facts`,
});

const attemptToMove = statement("orders.attemptToMove", {
  row: { id: paymentAttempt.id, order_id: paymentAttempt.orderId, attempt: paymentAttempt.attempt, status: paymentAttempt.status },
  examples: [
    [STORE, ID, false],
    [STORE, ID, true],
  ],
  sql: (store: SQL, attemptId: IdIn, lock: boolean) =>
    sql`select id, order_id, attempt, status from payment_attempt where store_id = ${store} and id = ${attemptId}${lock ? sql` for update` : sql``}`,
});

const attemptOrderFacts = statement("orders.attemptOrderFacts", {
  row: { facts: orNull(pg.jsonb<Facts>()) },
  examples: [
    [STORE, ID, false],
    [STORE, ID, true],
  ],
  sql: (store: SQL, attemptId: IdIn, lock: boolean) =>
    sql`select (${factsOf(store, sql`(select order_id from payment_attempt where store_id = ${store} and id = ${attemptId})`, lock)}) as facts`,
});

/** The order's statuses as the recompute decided them (only while its facts are `when`, for a conditional recompute). */
const writeOrderStatuses = statement("orders.writeOrderStatuses", {
  row: {},
  examples: [
    [STORE, ID, { paymentStatus: "paid", fulfillmentStatus: "unfulfilled", status: "open" }, undefined],
    [STORE, ID, { paymentStatus: "paid", fulfillmentStatus: "unfulfilled", status: "open" }, sql`true`],
  ],
  sql: (store: SQL, orderId: string, next: OrderStatuses, when: SQL | undefined) =>
    sql`update shop_order set payment_status = ${next.paymentStatus}, fulfillment_status = ${next.fulfillmentStatus}, status = ${next.status}, updated_at = now()
        where store_id = ${store} and id = ${orderId}${when ? sql` and ${when}` : sql``}`,
});

const countDiscountUseAgain = statement("orders.countDiscountUseAgain", {
  row: {},
  examples: [[STORE, ID]],
  sql: (store: SQL, orderId: string) => countDiscountUseAgainSql(store, orderId),
});

/** The first report of money that did not add up, kept on its attempt. */
const markAttemptReview = statement("orders.markAttemptReview", {
  row: {},
  examples: [[STORE, ID, "amount_below", "{}"]],
  sql: (store: SQL, attemptId: string, review: PaymentReview, report: string) =>
    sql`update payment_attempt set review_reason = ${review}, review_report = ${report}::jsonb, review_at = now(), updated_at = now()
        where store_id = ${store} and id = ${attemptId} and review_reason is null`,
});

/** References learnt late kept on an attempt that does not move. */
const keepAttemptRefs = statement("orders.keepAttemptRefs", {
  row: {},
  examples: [[STORE, ID, { ref: null, paymentId: "pay_1" }]],
  sql: (store: SQL, attemptId: string, refs: { ref: string | null; paymentId: string | null }) =>
    sql`update payment_attempt set provider_ref = coalesce(provider_ref, ${refs.ref}), provider_payment_id = coalesce(provider_payment_id, ${refs.paymentId})
        where store_id = ${store} and id = ${attemptId}`,
});

/** The payment routine's move of an attempt (the only writer of its status). */
const moveAttempt = statement("orders.moveAttempt", {
  row: {},
  examples: [[STORE, ID, "failed", { ref: null, paymentId: null }, "Declined."]],
  sql: (store: SQL, attemptId: string, to: AttemptStatus, refs: { ref: string | null; paymentId: string | null }, error: string | null) =>
    sql`update payment_attempt set status = ${to}, provider_ref = coalesce(${refs.ref}, provider_ref), provider_payment_id = coalesce(${refs.paymentId}, provider_payment_id),
          last_error = case when ${to} = 'failed' then ${error} else last_error end, updated_at = now()
        where store_id = ${store} and id = ${attemptId}`,
});

/**
 * An id where a reading takes one: the id itself, or SQL that finds it in the same unit (a subquery, e.g.
 * the attempt a gateway reference names), so a unit need not read the id first. Readings answer the ids
 * from their rows.
 */
export type IdIn = string | SQL;

/** Reads an order's facts (with `lock`, the order row is locked for the rest of the transaction). */
export function orderReadingPlan(q: Q, store: SQL, orderId: IdIn, lock = false): Plan<OrderReading | null> {
  const id = sql`${orderId}::uuid`;
  return plan(
    [orderFacts(q, store, id, lock)] as const,
    ([[row]]) => (row?.order_id && row.facts ? { orderId: row.order_id, facts: row.facts } : null),
  );
}

/** Reads an attempt and its order's facts (with `lock`: the attempt, then the order, locked). */
export function paymentReadingPlan(q: Q, store: SQL, attemptId: IdIn, lock = false): Plan<PaymentReading | null> {
  return plan(
    [attemptToMove(q, store, attemptId, lock), attemptOrderFacts(q, store, attemptId, lock)] as const,
    ([[a], [o]]) =>
      a && o?.facts ? { attempt: { id: a.id, orderId: a.order_id, attempt: a.attempt, status: a.status }, order: { orderId: a.order_id, facts: o.facts } } : null,
  );
}

/**
 * Locks the order, then stops the unit as a lost race unless its facts are still as read. Two statements:
 * a statement that waits for a lock still reads other tables as they were when it began, so the facts
 * are compared by the next one, which starts after the lock is held.
 */
function orderAsRead(q: Q, store: SQL, reading: OrderReading): Step[] {
  return [
    q
      .select({ id: shopOrder.id })
      .from(shopOrder)
      .where(and(eq(shopOrder.storeId, store), eq(shopOrder.id, reading.orderId)))
      .for("update"),
    unchanged(q, sql`(${factsOf(store, sql`${reading.orderId}::uuid`, false)}) = ${JSON.stringify(reading.facts)}::jsonb`),
  ];
}

/**
 * The recompute routine's change for an order read as `reading`, after `adjust` (what the same unit
 * changes first, e.g. an attempt's new status). Its statements assume the order is locked and as read
 * (`orderAsRead` runs first in the unit), unless `conditional`: then each writes only if the order's facts
 * are, when it runs, what it was decided from (see recomputeWhenAsRead).
 */
function recomputeChange(q: Q, store: SQL, reading: OrderReading, adjust: (facts: Facts) => Facts = (f) => f, conditional = false): { steps: Step[]; next: OrderStatuses } {
  const facts = adjust(reading.facts);
  const next = decideOrder(facts);
  const { orderId } = reading;
  const was = reading.facts;
  if (next.paymentStatus === was.paymentStatus && next.fulfillmentStatus === was.fulfillmentStatus && next.status === was.status) return { steps: [], next };
  const factsAre = (f: Facts) => sql`(${factsOf(store, sql`${orderId}::uuid`, false)}) = ${JSON.stringify(f)}::jsonb`;
  // The writes after the statuses' own find the order with its new statuses.
  const written = conditional ? factsAre({ ...facts, paymentStatus: next.paymentStatus, fulfillmentStatus: next.fulfillmentStatus, status: next.status }) : undefined;
  const emit = (kind: string, payload: Record<string, unknown>) => emitStep(q, kind, payload, written ? { when: written } : {});
  const steps: Step[] = [writeOrderStatuses(q, store, orderId, next, conditional ? factsAre(facts) : undefined)];
  if (next.paymentStatus === "paid" && was.paymentStatus !== "paid") {
    // Money that lands on an order already expired or cancelled (its stock released) is not lost and the
    // order is not reopened behind the merchant's back: it stays as it is, paid, and the merchant gets a
    // task to refund it or fulfil it by hand (docs/order-status.md, "Late payments").
    if (next.status === "expired" || next.status === "cancelled") {
      if (conditional) throw new Error("A conditional recompute does not write a late payment's task");
      steps.push(
        emit("order.paid_late", { orderId, status: next.status }),
        // The close gave the discount's use back; the money came with the code, so the use counts again,
        // once (before the task, whose first write marks it done).
        countDiscountUseAgain(q, store, orderId),
        addTaskStep(q, store, { kind: "paid_late", orderId, subjectId: orderId, title: `A payment arrived on an order that is already ${next.status}: refund it, or fulfil the order by hand.` }),
      );
    } else steps.push(emit("order.paid", { orderId }));
  }
  if (next.fulfillmentStatus === "fulfilled" && was.fulfillmentStatus !== "fulfilled") steps.push(emit("order.fulfilled", { orderId }));
  if (next.fulfillmentStatus === "delivered" && was.fulfillmentStatus !== "delivered") steps.push(emit("order.delivered", { orderId }));
  // Cancelled and expired are entered from their facts, whose actions write their own events.
  if (next.status !== was.status && (next.status === "completed" || next.status === "open")) {
    steps.push(emit(next.status === "completed" ? "order.completed" : "order.reopened", { orderId }));
  }
  return { steps, next };
}

/**
 * The recompute routine as a change: its guard (the order locked, then its facts checked as read, two
 * statements: see orderAsRead) and its writes. For a unit whose earlier statements change the order's
 * rows on purpose, use `adjust` to say how; the guard then goes first.
 */
export function recomputeSteps(q: Q, store: SQL, reading: OrderReading, adjust?: (facts: Facts) => Facts): { guard: Step[]; steps: Step[]; next: OrderStatuses } {
  return { guard: orderAsRead(q, store, reading), ...recomputeChange(q, store, reading, adjust) };
}

/**
 * The recompute routine for a unit that must not stop when one order moved (the expiry job closes many
 * orders in one unit): no guard, and its writes happen only if the order's facts are, when they run,
 * `adjust(reading.facts)`, i.e. the unit's earlier statements made that change to the order as read.
 * Otherwise it writes nothing, and the order is left for the next run. A late payment's task is never
 * its decision (it is written with the payment, under the guarded form).
 */
export function recomputeWhenAsRead(q: Q, store: SQL, reading: OrderReading, adjust: (facts: Facts) => Facts): { steps: Step[]; next: OrderStatuses } {
  return recomputeChange(q, store, reading, adjust, true);
}

/**
 * A report of money that did not add up (status.ts reviewOf), kept on its attempt: the first such report
 * (a replay or a later one changes nothing), a `payment_review` task for the merchant (one per attempt)
 * and `payment.review`, written only by the statement that marked it.
 */
function reviewSteps(q: Q, store: SQL, attempt: PaymentReading["attempt"], review: PaymentReview, report: Record<string, unknown>, expected: { amount: number; currency: string }): Step[] {
  const marked = sql`(select review_at from payment_attempt where store_id = ${store} and id = ${attempt.id}) = now()`;
  const said = moneyWords(Number(report.amount), typeof report.currency === "string" ? report.currency : expected.currency);
  const why = review === "currency_differs" ? `not in ${expected.currency}` : `less than the ${moneyWords(expected.amount, expected.currency)} it asked`;
  return [
    markAttemptReview(q, store, attempt.id, review, JSON.stringify(report)),
    addTaskStep(q, store, {
      kind: "payment_review",
      orderId: attempt.orderId,
      subjectId: attempt.id,
      title: `Payment attempt ${attempt.attempt} was reported ${String(report.status)} for ${said}, ${why}: it does not count and the order stays unpaid. Check the payment at the gateway and refund it.`,
    }),
    emitStep(q, "payment.review", { orderId: attempt.orderId, attempt: attempt.attempt, reason: review, trigger: report.trigger }, { when: marked }),
  ];
}

/**
 * The payment routine as a change, decided from `reading`: the attempt and the order checked as read
 * (and locked, attempt first), the attempt moved forward (or only refs learnt late kept), its events, and
 * the order's recompute with the attempt's new status. A report of money that does not add up to the
 * attempt (less than its amount, or another currency) moves nothing: the attempt is put under review.
 */
export function paymentChange(q: Q, store: SQL, reading: PaymentReading, requested: AttemptStatus, trigger: PaymentTrigger, change: AttemptChange = {}): { steps: Step[]; applied: Applied } {
  const { attempt } = reading;
  const decision = decideAttemptStatus(attempt.status, requested);
  const guards = [
    q
      .select({ id: paymentAttempt.id })
      .from(paymentAttempt)
      .where(and(eq(paymentAttempt.storeId, store), eq(paymentAttempt.id, attempt.id)))
      .for("update"),
    unchanged(q, sql`(select status from payment_attempt where store_id = ${store} and id = ${attempt.id}) = ${attempt.status}`),
    ...orderAsRead(q, store, reading.order),
  ];
  const expected = { amount: amountOf(reading), currency: reading.order.facts.currency };
  const review = decision.apply ? reviewOf(decision.to, expected, change.reported) : null;
  // A payment that does not count is not the attempt's: its id is kept with the review, not as the attempt's.
  const refs = { ref: change.providerRef ?? null, paymentId: review ? null : (change.providerPaymentId ?? null) };
  if (!decision.apply || review) {
    // Nothing moves; refs learnt late (e.g. a provider payment id) are still kept.
    const keep =
      refs.ref || refs.paymentId
        ? [keepAttemptRefs(q, store, attempt.id, refs)]
        : [];
    const report = review
      ? { status: requested, amount: change.reported!.amount, currency: change.reported!.currency ?? null, paymentId: change.reported!.paymentId ?? change.providerPaymentId ?? null, trigger }
      : undefined;
    const held = review && report ? reviewSteps(q, store, attempt, review, report, expected) : [];
    const { steps, next } = recomputeChange(q, store, reading.order);
    const applied: Applied = { orderId: attempt.orderId, attempt: attempt.attempt, applied: false, status: attempt.status, order: next, ...(review ? { review } : {}) };
    return { steps: [...guards, ...keep, ...held, ...steps], applied };
  }
  const to = decision.to;
  const moved: Step[] = [
    moveAttempt(q, store, attempt.id, to, refs, change.error?.slice(0, 1000) ?? null),
    ...(to === "failed" ? [emitStep(q, "payment.failed", { orderId: attempt.orderId, attempt: attempt.attempt, trigger })] : []),
  ];
  // The order's facts with this attempt at its new status (attempts are listed by attempt number).
  const adjust = (facts: Facts): Facts => ({ ...facts, attempts: facts.attempts.map((a) => (a.attempt === attempt.attempt ? { ...a, status: to } : a)) });
  const { steps, next } = recomputeChange(q, store, reading.order, adjust);
  return { steps: [...guards, ...moved, ...steps], applied: { orderId: attempt.orderId, attempt: attempt.attempt, applied: true, status: to, order: next } };
}

/** The attempt's amount, from its order's facts (read by the same statement as the attempt). */
function amountOf(reading: PaymentReading): number {
  const row = reading.order.facts.attempts.find((a) => a.attempt === reading.attempt.attempt);
  if (!row) throw new Error(`Attempt ${reading.attempt.attempt} is not among its order's attempts`);
  return row.amount;
}

const storeOf = (tx: StoreTx) => sql`${tx.storeId}::uuid`;

/** The payment routine on an open transaction: read with locks, decide, change. */
export async function applyPaymentStatus(tx: StoreTx, attemptId: string, requested: AttemptStatus, trigger: PaymentTrigger, change: AttemptChange = {}): Promise<Applied> {
  const reading = await readOn(tx, (q) => paymentReadingPlan(q, storeOf(tx), attemptId, true));
  if (!reading) throw new AppError("NOT_FOUND", "No such payment attempt in this store.");
  return changeOn(tx, (q) => {
    const made = paymentChange(q, storeOf(tx), reading, requested, trigger, change);
    return plan(made.steps, () => made.applied);
  });
}

/** The recompute routine on an open transaction: read with the order locked, decide, write when it changes. */
export async function recomputeOrderStatuses(tx: StoreTx, orderId: string): Promise<OrderStatuses> {
  const reading = await readOn(tx, (q) => orderReadingPlan(q, storeOf(tx), orderId, true));
  if (!reading) throw new AppError("NOT_FOUND", "No such order in this store.");
  return changeOn(tx, (q) => {
    const made = recomputeChange(q, storeOf(tx), reading);
    return plan(made.steps, () => made.next);
  });
}

/** How many times a payment change reads again after losing a race. */
const PAYMENT_RETRIES = 3;

/**
 * The payment routine in its own units: the reading (one round trip) and the change (one), read and
 * decided again after a lost race. A caller that knows the reading already (checkout, which has just
 * written the attempt and its order) passes it, and the change alone is sent.
 */
export async function applyPaymentInUnits(
  db: Database,
  storeId: string,
  attemptId: string,
  requested: AttemptStatus,
  trigger: PaymentTrigger,
  change: AttemptChange = {},
  known?: PaymentReading,
): Promise<Applied> {
  const store = sql`${storeId}::uuid`;
  let reading = known;
  for (let attempt = 1; ; attempt++) {
    reading ??= (await sendStoreUnit(db, storeId, (q) => paymentReadingPlan(q, store, attemptId))) ?? undefined;
    if (!reading) throw new AppError("NOT_FOUND", "No such payment attempt in this store.");
    const read = reading;
    try {
      return await sendStoreUnit(
        db,
        storeId,
        (q) => {
          const made = paymentChange(q, store, read, requested, trigger, change);
          return plan(made.steps, () => made.applied);
        },
        { readOnly: false },
      );
    } catch (e) {
      if (pgErrorOf(e)?.code !== "CR409" || attempt >= PAYMENT_RETRIES) throw e;
      reading = undefined;
    }
  }
}
