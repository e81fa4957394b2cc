import { storeIdsWithUnpaidOrdersDue } from "../db/privileged";
import { withStore } from "../db/with-store";
import { dueUnpaidOrders, expireOrder, PAYMENT_REMINDER_BEFORE_MS, remindUnpaid, type DueOrder, type SeenAttempt } from "../orders/expiry";
import { applyPaymentStatus } from "../orders/routines";
import { isGatewayError, type GatewayPayment, type PaymentGateway } from "../payments/gateway";
import { forEachStore, type Counts } from "./per-store";
import type { JobContext } from "./types";

/** Orders (and reminders) one store's run takes at most; the rest wait for the next minute. */
export const EXPIRY_BATCH = 50;

/** What the gateway holds for an attempt that means money is in or on its way: the order is not expired. */
const MONEY: ReadonlySet<string> = new Set(["authorized", "captured"]);
/** Attempts worth asking about: any with a gateway reference that is not yet known captured (a failure report is not final). */
const askable = (a: SeenAttempt) => a.providerRef !== null && a.status !== "captured" && a.status !== "refunded";

type Verdict = { kind: "paid"; found: { attempt: SeenAttempt; payment: GatewayPayment }[] } | { kind: "unpaid" } | { kind: "left" };

/**
 * {payments}-unpaid-expiry (every minute): for each store the privileged list names, reminds the
 * manual-transfer orders whose window closes within a day (once each), then for each order whose window
 * closed asks the gateway first, outside any transaction, about every attempt it has a reference for.
 * Money found is applied through the payment routine (`expiry_reconciliation`): the order is paid, not
 * expired. Otherwise one store unit re-checks under the order's lock and expires it. A gateway that errors
 * (or an attempt of another gateway than the configured one) leaves the order for the next run.
 */
export async function expireUnpaidOrders(ctx: JobContext): Promise<Record<string, unknown>> {
  const { db, now } = ctx;
  const ids = await storeIdsWithUnpaidOrdersDue(db, now, new Date(now.getTime() + PAYMENT_REMINDER_BEFORE_MS));
  return forEachStore(ctx, ids, async (storeId) => {
    const { reminded, due } = await withStore(db, storeId, async (tx) => ({
      reminded: await remindUnpaid(tx, now, EXPIRY_BATCH),
      due: await dueUnpaidOrders(tx, now, EXPIRY_BATCH),
    }));
    const counts: Counts = { reminded, expired: 0, reconciled: 0, left: 0, changed: 0 };
    let gateway: PaymentGateway | undefined;
    const gatewayOf = async () => (gateway ??= await ctx.services.gateway(storeId));
    for (const order of due) {
      const verdict = order.attempts.some(askable) ? await askGateway(ctx, storeId, order, await gatewayOf()) : { kind: "unpaid" as const };
      if (verdict.kind === "left") counts["left"]!++;
      else if (verdict.kind === "paid") {
        await withStore(db, storeId, async (tx) => {
          for (const { attempt, payment } of verdict.found) {
            await applyPaymentStatus(tx, attempt.id, payment.status, "expiry_reconciliation", payment.providerPaymentId ? { providerPaymentId: payment.providerPaymentId } : {});
          }
        });
        counts["reconciled"]!++;
      } else {
        const expired = await withStore(db, storeId, (tx) => expireOrder(tx, order.id, order.attempts, now));
        counts[expired ? "expired" : "changed"]!++;
      }
    }
    return counts;
  });
}

/** Asks the gateway about each attempt of the order it has a reference for; any failure leaves the order. */
async function askGateway(ctx: JobContext, storeId: string, order: DueOrder, gateway: PaymentGateway): Promise<Verdict> {
  const found: { attempt: SeenAttempt; payment: GatewayPayment }[] = [];
  for (const attempt of order.attempts.filter(askable)) {
    const where = { storeId, orderId: order.id, number: order.number, attempt: attempt.attempt };
    if (attempt.provider !== gateway.provider) {
      ctx.log.warn("unpaid_expiry.unverifiable", { ...where, provider: attempt.provider, configured: gateway.provider });
      return { kind: "left" };
    }
    try {
      const payment = await gateway.getPayment(attempt.providerRef!);
      if (!MONEY.has(payment.status)) continue;
      if (payment.amount !== attempt.amount) ctx.log.warn("payment.amount_mismatch", { ...where, expected: attempt.amount, received: payment.amount });
      found.push({ attempt, payment });
    } catch (e) {
      if (!isGatewayError(e)) throw e;
      ctx.log.warn("unpaid_expiry.gateway_error", { ...where, kind: e.kind, retryable: e.retryable });
      return { kind: "left" };
    }
  }
  return found.length > 0 ? { kind: "paid", found } : { kind: "unpaid" };
}
