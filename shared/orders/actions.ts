import { and, eq, isNull, type SQL } from "drizzle-orm";
import { emitStep } from "../db/changes";
import { mapPlan, plan, thenPlan, together, type Plan } from "../db/plan";
import { paymentAttempt, shopOrder } from "../db/schema";
import { sql, type Q, type Step } from "../db/steps";
import { readOn, type StoreTx } from "../db/with-store";
import { AppError } from "../core/errors";
import { orderNotFound } from "./order-detail";
import { orderViewStatement, type OrderView } from "./order-view";
import { orderReadingPlan, paymentChange, recomputeSteps, type OrderReading, type PaymentReading } from "./routines";
import type { AttemptStatus, OrderStatus, PaymentStatus } from "../rules/status";
import { clearParcelReservations, heldStock, lockHeldStock, lockOrderRow, releaseHeldStock, returnDiscountUse } from "./statements/actions";

/**
 * The admin's actions on an order (issue 11 part 8): 'Mark as paid' through the payment routine, and
 * cancel, which releases the order's reservations. Each reads the order in one unit, decides here, and
 * changes it in a second unit that locks the order as `lockOrderPlan` does and stops as a lost race when
 * the order is no longer as read.
 */

export type LockedOrder = {
  id: string;
  number: number;
  status: OrderStatus;
  paymentStatus: PaymentStatus;
  fulfillmentStatus: string;
  total: number;
};

/**
 * Locks the order's payment attempts (in id order), then the order row: the order every writer takes
 * (the payment routine locks an attempt, then the order), so an action and a racing webhook queue
 * behind each other instead of deadlocking. Statements after it read what the lock holders committed.
 */
export function lockOrderPlan(q: Q, store: SQL, orderId: string): Plan<LockedOrder | null> {
  return plan(
    [
      lockAttemptsStep(q, store, orderId),
      lockOrderRow(q, store, orderId),
    ] as const,
    ([, [row]]) => row ?? null,
  );
}

/** An order's payment attempts, locked in id order. */
export function lockAttemptsStep(q: Q, store: SQL, orderId: string | SQL) {
  return q
    .select({ id: paymentAttempt.id })
    .from(paymentAttempt)
    .where(and(eq(paymentAttempt.storeId, store), eq(paymentAttempt.orderId, orderId)))
    .orderBy(paymentAttempt.id)
    .for("update");
}

/** One payment attempt (by id, or SQL that finds it), locked. */
export function lockAttemptStep(q: Q, store: SQL, attemptId: string | SQL) {
  return q
    .select({ id: paymentAttempt.id })
    .from(paymentAttempt)
    .where(and(eq(paymentAttempt.storeId, store), eq(paymentAttempt.id, attemptId)))
    .for("update");
}

/** The order row alone, locked (after its payment attempts, where a writer takes those). */
export function lockOrderStep(q: Q, store: SQL, orderId: string | SQL) {
  return q
    .select({ id: shopOrder.id })
    .from(shopOrder)
    .where(and(eq(shopOrder.storeId, store), eq(shopOrder.id, orderId)))
    .for("update");
}

const storeOf = (tx: StoreTx) => sql`${tx.storeId}::uuid`;

/** The same lock inside a transaction that is open already; the order as locked. */
export async function lockOrder(tx: StoreTx, orderId: string): Promise<LockedOrder> {
  const order = await readOn(tx, (q) => lockOrderPlan(q, storeOf(tx), orderId));
  if (!order) throw orderNotFound();
  return order;
}

export const conflict = (reason: string, message: string) => new AppError("CONFLICT", message, { reason, issues: [{ path: "orderId", message }] });

/** Money was captured and is still held: the order counts as paid for 'Mark as paid' and cannot be cancelled. */
const HOLDS_MONEY: ReadonlySet<PaymentStatus> = new Set(["paid", "partially_paid", "partially_refunded"]);
/** Nothing captured yet: an open attempt may be the one the money came through. */
export const NOTHING_CAPTURED: ReadonlySet<PaymentStatus> = new Set(["unpaid", "pending", "authorized"]);

export function refuseClosed(order: Pick<LockedOrder, "status" | "number">, action: string): void {
  if (order.status === "cancelled") throw conflict("order_cancelled", `Order #${order.number} is cancelled: it cannot be ${action}.`);
  if (order.status === "expired") {
    throw conflict("order_expired", `Order #${order.number} expired unpaid and its stock was released: it cannot be ${action}.`);
  }
}

/** The order as an action answers it, read by the action's own unit after its change. */
function thenOrderView(q: Q, store: SQL, orderId: string, change: readonly Step[] = []): Plan<OrderView> {
  return thenPlan(
    change,
    plan([orderViewStatement(q, store, orderId)] as const, ([[row]]) => {
      if (!row) throw orderNotFound();
      return row.order;
    }),
  );
}

/** What 'Mark as paid' does, decided from the order as read. */
export type MarkPaid =
  | { kind: "as_is" }
  | { kind: "capture"; reading: PaymentReading }
  | { kind: "manual"; order: OrderReading; attempt: { id: string; attempt: number; amount: number } };

const OPEN_ATTEMPT: readonly AttemptStatus[] = ["created", "pending", "authorized"];

/**
 * 'Mark as paid': the money arrived outside the gateway (a bank transfer, cash). Captures, through the
 * payment routine, the newest attempt still open (created, pending or authorized) while nothing is
 * captured (with a pre-order deposit, that is the deposit's), or the open attempt of a requested pre-order
 * balance; otherwise (every attempt failed, none exists, or part is already paid) it adds a `manual`
 * attempt for the balance and captures that. A failed gateway attempt is never revived: the gateway said
 * that payment did not happen, and a refund must go back the way the money came. Already paid (or
 * partly refunded since): nothing changes.
 */
export function markPaidReadingPlan(q: Q, store: SQL, orderId: string): Plan<MarkPaid> {
  const reading = together({
    order: orderReadingPlan(q, store, orderId),
    number: plan([q.select({ number: shopOrder.number }).from(shopOrder).where(and(eq(shopOrder.storeId, store), eq(shopOrder.id, orderId)))] as const, ([[row]]) => row?.number),
    ids: plan(
      [q.select({ id: paymentAttempt.id, attempt: paymentAttempt.attempt }).from(paymentAttempt).where(and(eq(paymentAttempt.storeId, store), eq(paymentAttempt.orderId, orderId)))] as const,
      ([rows]) => new Map(rows.map((a) => [a.attempt, a.id])),
    ),
  });
  return mapPlan(reading, ({ order, number, ids }) => {
    if (!order || number === undefined) throw orderNotFound();
    const { facts } = order;
    const paymentStatus = facts.paymentStatus as PaymentStatus;
    if (paymentStatus === "paid" || paymentStatus === "partially_refunded") return { kind: "as_is" };
    if (paymentStatus === "refunded") throw conflict("order_refunded", `Order #${number} was refunded: it cannot be marked as paid again.`);
    refuseClosed({ status: facts.status, number }, "marked as paid");
    const captured = facts.attempts.filter((a) => a.status === "captured" || a.status === "refunded").reduce((sum, a) => sum + a.amount, 0);
    // Part paid: only an open attempt for exactly what is left (a requested pre-order balance) is taken.
    const partly = paymentStatus === "partially_paid";
    // Attempts are read in attempt order: the last open one is the newest.
    const open = facts.attempts.filter((a) => OPEN_ATTEMPT.includes(a.status) && (!partly || a.amount === facts.total - captured)).at(-1);
    const id = open && ids.get(open.attempt);
    if (open && id) return { kind: "capture", reading: { attempt: { id, orderId: order.orderId, attempt: open.attempt, status: open.status }, order } };
    const next = facts.attempts.reduce((n, a) => Math.max(n, a.attempt), 0) + 1;
    return { kind: "manual", order, attempt: { id: crypto.randomUUID(), attempt: next, amount: Math.max(facts.total - captured, 0) } };
  });
}

/** 'Mark as paid' as decided, then the order as it is now. */
export function markPaidPlan(q: Q, store: SQL, orderId: string, decision: MarkPaid): Plan<OrderView> {
  if (decision.kind === "as_is") return thenOrderView(q, store, orderId);
  const locked = lockOrderPlan(q, store, orderId).steps;
  if (decision.kind === "capture") return thenOrderView(q, store, orderId, [...locked, ...paymentChange(q, store, decision.reading, "captured", "mark_paid").steps]);
  const { order, attempt } = decision;
  // The manual attempt is written as created, then moved by the payment routine like any other: its
  // reading is the order's with the new attempt in it.
  const added: PaymentReading = {
    attempt: { id: attempt.id, orderId: order.orderId, attempt: attempt.attempt, status: "created" },
    order: { ...order, facts: { ...order.facts, attempts: [...order.facts.attempts, { attempt: attempt.attempt, status: "created", amount: attempt.amount }] } },
  };
  return thenOrderView(q, store, orderId, [
    ...locked,
    ...recomputeSteps(q, store, order).guard,
    q.insert(paymentAttempt).values({
      id: attempt.id,
      storeId: store,
      orderId: order.orderId,
      attempt: attempt.attempt,
      idempotencyKey: `${order.orderId.toLowerCase()}:${attempt.attempt}`,
      provider: "manual",
      amount: attempt.amount,
    }),
    ...paymentChange(q, store, added, "captured", "mark_paid").steps,
  ]);
}

/**
 * Gives back the stock an order holds: per variant and location, `inventory_level.reserved` goes down by
 * what the order's parcel lines reserved (never below zero), the stock rows locked in id order like
 * checkout locks them, and the parcel lines then reserve nothing, so a second release finds nothing.
 * `released` is the inventory.released payload, for a statement between the lock and the change.
 */
function releaseSteps(q: Q, store: SQL, orderId: string) {
  const held = heldStock(store, orderId);
  return {
    lock: lockHeldStock(q, store, orderId),
    released: sql`jsonb_build_object('orderId', ${orderId}::text, 'items', coalesce((
      select jsonb_agg(jsonb_build_object('variantId', x.variant_id, 'locationId', x.location_id, 'quantity', x.quantity) order by x.id)
      from (${held}) x where x.quantity > 0), '[]'::jsonb))`,
    change: [releaseHeldStock(q, store, orderId), clearParcelReservations(q, store, orderId)] as const,
  };
}

/** What cancelling does, decided from the order as read. */
export type Cancel =
  | { kind: "as_is" }
  | { kind: "cancel"; order: Pick<LockedOrder, "number" | "status" | "paymentStatus" | "fulfillmentStatus">; reading: OrderReading };

/**
 * Cancels an open order that holds no money and has shipped nothing: releases its reservations, gives
 * back its discount's use, writes its fact (`cancelled_at`) and lets the recompute make it `cancelled`
 * (which it never leaves), with `order.cancelled` and `inventory.released`. An order already cancelled is
 * answered as it is.
 */
export function cancelReadingPlan(q: Q, store: SQL, orderId: string): Plan<Cancel> {
  const read = together({
    number: plan([q.select({ number: shopOrder.number }).from(shopOrder).where(and(eq(shopOrder.storeId, store), eq(shopOrder.id, orderId)))] as const, ([[row]]) => row?.number),
    reading: orderReadingPlan(q, store, orderId),
  });
  return mapPlan(read, ({ number, reading }): Cancel => {
    if (number === undefined || !reading) throw orderNotFound();
    const { facts } = reading;
    const order = { number, status: facts.status, paymentStatus: facts.paymentStatus as PaymentStatus, fulfillmentStatus: facts.fulfillmentStatus };
    if (order.status === "cancelled") return { kind: "as_is" };
    refuseClosed(order, "cancelled");
    if (HOLDS_MONEY.has(order.paymentStatus) || order.status === "completed") {
      throw conflict("refund_first", `Order #${order.number} is ${order.paymentStatus.replace(/_/g, " ")}: refund it first, then cancel.`);
    }
    if (order.fulfillmentStatus !== "unfulfilled") {
      throw conflict("already_shipped", `Order #${order.number} is ${order.fulfillmentStatus.replace(/_/g, " ")}: a shipped order cannot be cancelled.`);
    }
    return { kind: "cancel", order, reading };
  });
}


/** Cancelling as decided, then the order as it is now. */
export function cancelPlan(q: Q, store: SQL, orderId: string, reason: string | undefined, decision: Cancel): Plan<OrderView> {
  if (decision.kind === "as_is") return thenOrderView(q, store, orderId);
  const { order, reading } = decision;
  const release = releaseSteps(q, store, orderId);
  // The order checked as read (its statuses, attempts, parcels, shipments), then its fact and the recompute.
  const recompute = recomputeSteps(q, store, reading, (facts) => ({ ...facts, closed: "cancelled" }));
  return thenOrderView(q, store, orderId, [
    ...lockOrderPlan(q, store, orderId).steps,
    ...recompute.guard,
    emitStep(q, "order.cancelled", { orderId, number: order.number, paymentStatus: order.paymentStatus, ...(reason ? { reason } : {}) }),
    release.lock,
    emitStep(q, "inventory.released", release.released),
    ...release.change,
    returnDiscountUse(q, store, sql`array[${orderId}]::uuid[]`),
    q
      .update(shopOrder)
      .set({ cancelledAt: sql`now()`, updatedAt: sql`now()` })
      .where(and(eq(shopOrder.storeId, store), eq(shopOrder.id, orderId), isNull(shopOrder.cancelledAt))),
    ...recompute.steps,
  ]);
}
