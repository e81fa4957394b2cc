import type { Database } from "../db/database";
import { withStore } from "../db/with-store";
import { AppError } from "../core/errors";
import type { Logger } from "../core/log";
import { isGatewayError, type ClientConfirmation, type PaymentRedirect } from "../payments/gateway";
import type { StoreGateway } from "../payments/select";
import { buyerAccess, orderPath, unknownOrder, type CheckedProof } from "./access";
import { placeOrderInUnits, type AttemptRow, type CheckoutInput } from "./checkout";
import { loadOrderView, type OrderView } from "./order-view";
import { attemptByRef, newAttempt, paymentRequest } from "./payments";
import { applyPaymentInUnits, applyPaymentStatus, type PaymentReading } from "./routines";

/**
 * Checkout and payment as the storefront's doors call them (workers/storefront/checkout.ts, the checkout
 * page): place → pay → apply. The order commits before the gateway is called; then the gateway makes the
 * attempt's payment, and its answer moves the attempt (pending, or failed: the order stays placed) through
 * the one status routine. A new attempt for an order still waiting for its money comes from the buyer (the
 * cart cookie that became the order, or the order's key); the gateway's signed confirmation, once its door
 * has verified it, is applied through the same routine. Every answer names the order's link
 * `/orders/<id>?k=<key>` (docs/decisions/0009-order-access-key.md).
 */

/** What paying needs, from either door (the API route or the checkout page). */
export interface PayDeps {
  db: Database;
  log: Logger;
  storeId: string;
  /** The store's payment gateway, from the Worker's provider services. */
  providers: { storeGateway(storeId: string): Promise<StoreGateway> };
  /** The shopper-facing origin of the store (the Host the shopper used, port included). */
  origin: string;
  /** The shopper's address (cf-connecting-ip): the per-network limit on unpaid orders counts by it. */
  ip?: string | null | undefined;
}

export interface PaymentAnswer {
  attemptId: string;
  attempt: number;
  idempotencyKey: string;
  status: string;
  redirectUrl?: string;
  redirect?: PaymentRedirect;
}

const answerOf = (a: AttemptRow, status = a.status, redirect?: PaymentRedirect): PaymentAnswer => ({
  attemptId: a.id,
  attempt: a.attempt,
  idempotencyKey: a.idempotencyKey,
  status,
  ...(redirect ? { redirect, ...(redirect.method === "GET" ? { redirectUrl: redirect.url } : {}) } : {}),
});

/**
 * After the commit: asks the gateway for the attempt's payment and applies its answer through the status
 * routine (pending with the provider's reference, or failed with the reason). Never throws for a gateway
 * failure: the order is placed either way and the shopper may retry.
 */
async function startPayment(
  d: PayDeps,
  sg: StoreGateway,
  order: OrderView,
  attempt: AttemptRow,
  key: string | null,
  known?: PaymentReading,
): Promise<{ payment: PaymentAnswer; order: OrderView }> {
  // The shopper comes back with the key, so the order page they land on opens in any browser.
  const returnUrl = `${d.origin}/api/checkout/${order.id}/confirm${key ? `?k=${key}` : ""}`;
  try {
    const created = await sg.gateway.createPayment(paymentRequest(order, attempt, returnUrl));
    const applied = await applyPaymentInUnits(d.db, d.storeId, attempt.id, "pending", "gateway", { providerRef: created.providerRef }, known);
    return { payment: answerOf(attempt, applied.status, created.redirect), order: { ...order, ...applied.order } };
  } catch (e) {
    if (!isGatewayError(e)) throw e;
    d.log.warn("payment.gateway_failed", { orderId: order.id, attempt: attempt.attempt, kind: e.kind, retryable: e.retryable });
    const applied = await applyPaymentInUnits(d.db, d.storeId, attempt.id, "failed", "gateway", { error: `${e.kind}: ${e.message}` }, known);
    return { payment: answerOf(attempt, applied.status), order: { ...order, ...applied.order } };
  }
}

/**
 * What the payment routine would read of an order checkout has just placed: its first attempt, created,
 * and no money, refund or shipment yet. The change checks it, so a webhook that raced in sends checkout
 * back to a real reading.
 */
function freshOrderReading(order: OrderView, attempt: AttemptRow): PaymentReading {
  return {
    attempt: { id: attempt.id, orderId: order.id, attempt: attempt.attempt, status: "created" },
    order: {
      orderId: order.id,
      facts: {
        status: "open",
        total: order.total,
        currency: order.currency,
        paymentStatus: order.paymentStatus,
        fulfillmentStatus: order.fulfillmentStatus,
        attempts: [{ attempt: attempt.attempt, status: "created", amount: attempt.amount }],
        refunds: [],
        parcels: order.parcels.map((p) => ({ id: p.id })).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
        shipments: [],
        closed: null,
      },
    },
  };
}

/**
 * Places the order from the shopper's cart and, for a gateway order, starts its payment. A second submit
 * of the converted cart answers the same order with `replayed: true`.
 */
export async function checkoutAndPay(d: PayDeps, cartToken: string | undefined, input: CheckoutInput) {
  const sg = await d.providers.storeGateway(d.storeId);
  const placed = await placeOrderInUnits(d.db, d.storeId, cartToken, input, sg.provider, new Date(), { ip: d.ip });
  const orderUrl = orderPath(placed.order.id, placed.accessKey);
  if (placed.replayed) return { order: placed.order, payment: answerOf(placed.attempt), replayed: true, orderUrl };
  if (input.paymentMethod !== "gateway") return { order: placed.order, payment: answerOf(placed.attempt), replayed: false, orderUrl };
  // The routine answered the order's statuses after the attempt moved: no second read of the order.
  const known = freshOrderReading(placed.order, placed.attempt);
  return { ...(await startPayment(d, sg, placed.order, placed.attempt, placed.accessKey, known)), replayed: false, orderUrl };
}

/** A new attempt (`<orderId>:<n>`) for an order still waiting for its money, from the buyer's proof. */
export async function payAgain(d: PayDeps, orderId: string, proof: CheckedProof | null): Promise<{ order: OrderView; payment: PaymentAnswer; orderUrl: string }> {
  if (!proof) throw unknownOrder();
  const sg = await d.providers.storeGateway(d.storeId);
  const made = await withStore(d.db, d.storeId, async (tx) => {
    const access = await buyerAccess(tx, proof);
    if (!access) throw unknownOrder();
    return { key: access.key, attempt: await newAttempt(tx, orderId, sg.provider), order: (await loadOrderView(tx, orderId))! };
  });
  const { payment, order } = await startPayment(d, sg, made.order, made.attempt, made.key);
  return { order, payment, orderUrl: orderPath(orderId, made.key) };
}

/**
 * The gateway's signed confirmation (verified by its door before anything is read), applied through the
 * one status routine. The signature is what makes it authentic; a key it carries must be the order's.
 * Answers the order and the buyer's key when the request proved one.
 */
export async function applyConfirmation(
  d: Pick<PayDeps, "db" | "storeId">,
  orderId: string,
  provider: string,
  confirmation: ClientConfirmation,
  buyer: { proof: CheckedProof | null; keyGiven: boolean },
): Promise<{ order: OrderView | null; key: string | null }> {
  return withStore(d.db, d.storeId, async (tx) => {
    // Without a key the signature alone still confirms (an attempt started before keys existed).
    const access = buyer.proof ? await buyerAccess(tx, buyer.proof) : null;
    if (buyer.keyGiven && !access) throw unknownOrder();
    const attempt = await attemptByRef(tx, provider, confirmation.providerRef);
    if (!attempt || attempt.orderId !== orderId) throw new AppError("NOT_FOUND", "There is no such payment for this order.", { reason: "unknown_payment" });
    // A confirmation that carries its amount (the local gateway's) is checked like a webhook's report.
    const reported = confirmation.amount === undefined ? undefined : { amount: confirmation.amount, currency: confirmation.currency, paymentId: confirmation.providerPaymentId };
    await applyPaymentStatus(tx, attempt.id, confirmation.status, "client_confirmation", { providerPaymentId: confirmation.providerPaymentId, reported });
    return { order: await loadOrderView(tx, orderId), key: access?.key ?? null };
  });
}
