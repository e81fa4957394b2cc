import type { SQL } from "drizzle-orm";
import { storeIdsWithUnpaidOrdersDue } from "../db/privileged";
import { plan, together, type Plan } from "../db/plan";
import { sql, type Q, type Step } from "../db/steps";
import { sendStoreUnit } from "../db/unit";
import { dueUnpaidPlan, expiryPlan, PAYMENT_REMINDER_BEFORE_MS, remindUnpaidPlan, type DueOrder, type SeenAttempt } from "../orders/expiry";
import { all, changeFrom, readingAfter, withAttemptStatus } from "../orders/readings";
import { paymentChange, paymentReadingPlan, type OrderReading, type PaymentReading } from "../orders/routines";
import { reviewOf } from "../rules/status";
import { isGatewayError, type GatewayPayment, type PaymentGateway } from "../payments/gateway";
import { forEachStore, type Counts } from "./per-store";
import type { JobContext } from "./types";

/** Orders (and reminders) one store's run takes at most; the rest wait for the next minute. */
export const EXPIRY_BATCH = 50;

/** What the gateway holds for an attempt that means money is in or on its way: the order is not expired. */
const MONEY: ReadonlySet<string> = new Set(["authorized", "captured"]);
/** Attempts worth asking about: any with a gateway reference that is not yet known captured (a failure report is not final). */
const askable = (a: SeenAttempt) => a.providerRef !== null && a.status !== "captured" && a.status !== "refunded";

type Found = { attempt: SeenAttempt; payment: GatewayPayment };
/** `held`: money the gateway holds that does not add up to its attempt: it pays nothing, and is put under review. */
type Verdict = { kind: "paid"; found: Found[] } | { kind: "unpaid"; held?: Found[] } | { kind: "left" };

/**
 * {payments}-unpaid-expiry (every minute): for each store the privileged list names, reminds the
 * manual-transfer orders whose window closes within a day (once each), then for each order whose window
 * closed asks the gateway first, outside any transaction, about every attempt it has a reference for.
 * Money found is applied through the payment routine (`expiry_reconciliation`): the order is paid, not
 * expired. Otherwise the store's unit re-checks each order under its lock and expires it. A gateway that
 * errors (or an attempt of another gateway than the configured one) leaves the order for the next run.
 */
export async function expireUnpaidOrders(ctx: JobContext): Promise<Record<string, unknown>> {
  const { db, now } = ctx;
  const ids = await storeIdsWithUnpaidOrdersDue(db, now, new Date(now.getTime() + PAYMENT_REMINDER_BEFORE_MS));
  return forEachStore(ctx, ids, (storeId) => expireStoreUnpaid(ctx, storeId));
}

/**
 * One store's run in two round trips, the gateway asked in between: the reminders written with the due
 * orders read, then the expiries. Money found at the gateway costs a third: its attempts are read with
 * the expiries and changed through the payment routine after them.
 */
export async function expireStoreUnpaid(ctx: Pick<JobContext, "db" | "log" | "now" | "services">, storeId: string): Promise<Counts> {
  const { db, now } = ctx;
  const store = sql`${storeId}::uuid`;
  const { reminded, due } = await sendStoreUnit(
    db,
    storeId,
    (q) => together({ reminded: remindUnpaidPlan(q, store, now, EXPIRY_BATCH), due: dueUnpaidPlan(q, store, now, EXPIRY_BATCH) }),
    { readOnly: false },
  );
  const counts: Counts = { reminded, expired: 0, reconciled: 0, left: 0, changed: 0 };
  let gateway: PaymentGateway | undefined;
  const gatewayOf = async () => (gateway ??= await ctx.services.gateway(storeId));
  const unpaid: DueOrder[] = [];
  const found: Found[] = [];
  for (const order of due) {
    const verdict = order.attempts.some(askable) ? await askGateway(ctx, storeId, order, await gatewayOf()) : { kind: "unpaid" as const };
    if (verdict.kind === "left") counts["left"]!++;
    else if (verdict.kind === "paid") {
      found.push(...verdict.found);
      counts["reconciled"]!++;
    } else {
      unpaid.push(order);
      found.push(...(verdict.held ?? []));
    }
  }
  if (unpaid.length === 0 && found.length === 0) return counts;
  const readings = (q: Q) => all(found.map((f) => paymentReadingPlan(q, store, f.attempt.id)));
  const { expired, read } = await sendStoreUnit(db, storeId, (q) => together({ expired: expiryPlan(q, store, unpaid, now), read: readings(q) }), { readOnly: false });
  for (const e of expired) counts[e ? "expired" : "changed"]!++;
  if (found.length > 0) {
    await changeFrom(
      read,
      () => sendStoreUnit(db, storeId, readings),
      (read) => sendStoreUnit(db, storeId, (q) => reconciliation(q, store, found, read), { readOnly: false }),
    );
  }
  return counts;
}

/**
 * Each attempt the gateway holds money for moves through the payment routine, decided from its reading;
 * a second attempt of the same order is decided from the order as the first one's change left it.
 */
function reconciliation(q: Q, store: SQL, found: readonly Found[], readings: readonly (PaymentReading | null)[]): Plan<void> {
  const orders = new Map<string, OrderReading>();
  const steps: Step[] = [];
  found.forEach(({ payment }, i) => {
    const read = readings[i];
    if (!read) return;
    const reading = { attempt: read.attempt, order: orders.get(read.attempt.orderId) ?? read.order };
    const reported = { amount: payment.amount, currency: payment.currency, paymentId: payment.providerPaymentId };
    const made = paymentChange(q, store, reading, payment.status, "expiry_reconciliation", { ...(payment.providerPaymentId ? { providerPaymentId: payment.providerPaymentId } : {}), reported });
    steps.push(...made.steps);
    orders.set(read.attempt.orderId, readingAfter(reading.order, made.applied.order, withAttemptStatus(read.attempt.attempt, made.applied.status)));
  });
  return plan(steps, () => undefined);
}

/** Asks the gateway about each attempt of the order it has a reference for; any failure leaves the order. */
async function askGateway(ctx: Pick<JobContext, "log">, storeId: string, order: DueOrder, gateway: PaymentGateway): Promise<Verdict> {
  const found: Found[] = [];
  for (const attempt of order.attempts.filter(askable)) {
    const where = { storeId, orderId: order.id, number: order.number, attempt: attempt.attempt };
    if (attempt.provider !== gateway.provider) {
      ctx.log.warn("unpaid_expiry.unverifiable", { ...where, provider: attempt.provider, configured: gateway.provider });
      return { kind: "left" };
    }
    try {
      const payment = await gateway.getPayment(attempt.providerRef!);
      if (!MONEY.has(payment.status)) continue;
      found.push({ attempt, payment });
    } catch (e) {
      if (!isGatewayError(e)) throw e;
      ctx.log.warn("unpaid_expiry.gateway_error", { ...where, kind: e.kind, retryable: e.retryable });
      return { kind: "left" };
    }
  }
  // Money that does not add up (less than the attempt, another currency) pays nothing: the order expires
  // as unpaid, and the routine puts those attempts under review after the expiry.
  const adds = (f: Found) => reviewOf(f.payment.status, { amount: f.attempt.amount, currency: order.currency }, f.payment) === null;
  if (found.some(adds)) return { kind: "paid", found };
  return found.length > 0 ? { kind: "unpaid", held: found } : { kind: "unpaid" };
}
