import { Hono, type Context } from "hono";
import { getCookie } from "hono/cookie";
import { z } from "zod";
import { withStore } from "#shared/db/with-store";
import { crossSiteRefused, isCrossSite } from "#shared/http/csrf";
import { AppError } from "#shared/core/errors";
import type { Database } from "#shared/db/database";
import type { Logger } from "#shared/core/log";
import { buyerAccess, checkProof, orderPath, unknownOrder } from "#shared/orders/access";
import { checkoutInput, placeOrderInUnits, type AttemptRow, type CheckoutInput } from "#shared/orders/checkout";
import { loadOrderView, type OrderView } from "#shared/orders/order-view";
import { attemptByRef, newAttempt, paymentRequest } from "#shared/orders/payments";
import { applyPaymentInUnits, applyPaymentStatus, type PaymentReading } from "#shared/orders/routines";
import { isGatewayError, type PaymentRedirect } from "#shared/payments/gateway";
import { gatewayConfigFromEnv, storeGateway, type StoreGateway } from "#shared/payments/select";
import { CART_COOKIE } from "./cart";
import { parse, readBody } from "./cart-input";
import type { StorefrontEnv } from "./context";

/**
 * Checkout and payment on the storefront (issue 11 parts 1 and 4):
 *
 * - `POST /api/checkout`: the cart becomes an order in one transaction, committed before the gateway is
 *   called; then the gateway makes the attempt's payment, and its answer moves the attempt (pending, or
 *   failed: the order stays placed) through the one status routine. A second submit of the converted cart
 *   answers the same order with `replayed: true` and 200.
 * - `POST /api/checkout/<orderId>/pay`: a new attempt (`<orderId>:<n>`) for an order still waiting for its
 *   money, from the buyer: the cart cookie that became the order, or the order's key as `?k=`.
 * - `POST /api/checkout/<orderId>/confirm`: the gateway's signed confirmation, as the shopper's browser
 *   brings it back (to the return URL, which carries `?k=`); verified before anything is read, then
 *   applied through the same routine. The signature is what makes it authentic; a key it carries must
 *   be the order's.
 *
 * Every answer names the order's link `/orders/<id>?k=<key>` (docs/decisions/0009-order-access-key.md).
 */
type CheckoutContext = Context<StorefrontEnv>;

/** What paying needs, from either door (the API route or the checkout page). */
export interface PayDeps {
  db: Database;
  log: Logger;
  storeId: string;
  env: object;
  /** The shopper-facing origin of the store (the Host the shopper used, port included). */
  origin: string;
  /** The shopper's address (cf-connecting-ip): the per-network limit on unpaid orders counts by it. */
  ip?: string | null | undefined;
}

const depsOf = (c: CheckoutContext): PayDeps => ({
  db: c.var.db,
  log: c.var.log,
  storeId: c.var.storeId,
  env: c.env,
  origin: `${new URL(c.req.url).protocol}//${c.req.header("host") ?? c.var.hostname}`,
  ip: c.req.header("cf-connecting-ip") ?? null,
});

export const checkout = new Hono<StorefrontEnv>();

interface PaymentAnswer {
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

export function gatewayFor(d: Pick<PayDeps, "env" | "storeId">): Promise<StoreGateway> {
  return storeGateway(gatewayConfigFromEnv(d.env as Record<string, unknown>), d.storeId);
}

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

// Every checkout route carries the shopper's cookie: a cross-site page must not be able to post them.
checkout.use("/api/checkout", refuseCrossSite);
checkout.use("/api/checkout/:orderId/pay", refuseCrossSite);
// Their answers and redirects name the order's key: kept by no cache, and sent to no other site.
checkout.use("/api/checkout", keepPrivate);
checkout.use("/api/checkout/*", keepPrivate);

async function refuseCrossSite(c: CheckoutContext, next: () => Promise<void>) {
  if (isCrossSite(c)) throw crossSiteRefused("the shop");
  await next();
}

async function keepPrivate(c: CheckoutContext, next: () => Promise<void>) {
  await next();
  c.res.headers.set("cache-control", "private, no-store");
  c.res.headers.set("referrer-policy", "no-referrer");
}

/** Places the order from the shopper's cart and, for a gateway order, starts its payment. */
export async function checkoutAndPay(d: PayDeps, cartToken: string | undefined, input: CheckoutInput) {
  const sg = await gatewayFor(d);
  const placed = await placeOrderInUnits(d.db, d.storeId, cartToken, input, sg.provider, new Date(), { ip: d.ip });
  const orderUrl = orderPath(placed.order.id, placed.accessKey);
  if (placed.replayed) return { order: placed.order, payment: answerOf(placed.attempt), replayed: true, orderUrl };
  if (input.paymentMethod !== "gateway") return { order: placed.order, payment: answerOf(placed.attempt), replayed: false, orderUrl };
  // The routine answered the order's statuses after the attempt moved: no second read of the order.
  const known = freshOrderReading(placed.order, placed.attempt);
  return { ...(await startPayment(d, sg, placed.order, placed.attempt, placed.accessKey, known)), replayed: false, orderUrl };
}

checkout.post("/api/checkout", async (c) => {
  const body = await readBody(c);
  const input = parse(checkoutInput, body.fields);
  const result = await checkoutAndPay(depsOf(c), getCookie(c, CART_COOKIE), input);
  return c.json(result, result.replayed ? 200 : 201);
});

const orderIdParam = z.uuid();
const orderIdOf = (c: CheckoutContext) => {
  const id = orderIdParam.safeParse(c.req.param("orderId"));
  if (!id.success) throw unknownOrder();
  return id.data;
};
/** The buyer's proof this request carries (the cart cookie, the order's key in `?k=`), when it could be one. */
const proofOf = (c: CheckoutContext, orderId: string) => checkProof(orderId, { cartToken: getCookie(c, CART_COOKIE), key: c.req.query("k") });

checkout.post("/api/checkout/:orderId/pay", async (c) => {
  const orderId = orderIdOf(c);
  const proof = proofOf(c, orderId);
  if (!proof) throw unknownOrder();
  const sg = await gatewayFor(depsOf(c));
  const made = await withStore(c.var.db, c.var.storeId, async (tx) => {
    const access = await buyerAccess(tx, proof);
    if (!access) throw unknownOrder();
    return { key: access.key, attempt: await newAttempt(tx, orderId, sg.provider), order: (await loadOrderView(tx, orderId))! };
  });
  const { payment, order } = await startPayment(depsOf(c), sg, made.order, made.attempt, made.key);
  const orderUrl = orderPath(orderId, made.key);
  // The order page's "Pay now" is a form: it goes on to the gateway's page (or back to the order).
  if ((c.req.header("content-type") ?? "").startsWith("application/x-www-form-urlencoded")) {
    return c.redirect(payment.redirectUrl ?? orderUrl, 303);
  }
  return c.json({ order, payment, orderUrl }, 201);
});

// The gateway's page sends the shopper back here with its signed fields (a form POST from the gateway's
// page, so no CSRF check: the signature is what makes it authentic, and it only moves an attempt forward).
checkout.post("/api/checkout/:orderId/confirm", async (c) => {
  const orderId = orderIdOf(c);
  const sg = await gatewayFor(depsOf(c));
  const isForm = (c.req.header("content-type") ?? "").startsWith("application/x-www-form-urlencoded");
  const fields: unknown = isForm ? await c.req.parseBody().catch(() => ({})) : await c.req.json().catch(() => ({}));
  const confirmation = await sg.gateway.verifyClientConfirmation(fields, sg.confirmationSecret);
  if (!confirmation) throw new AppError("UNAUTHORIZED", "This payment confirmation is not signed by the store's gateway.", { reason: "bad_signature" });
  const proof = proofOf(c, orderId);
  const keyGiven = c.req.query("k") !== undefined;
  const { order, key } = await withStore(c.var.db, c.var.storeId, async (tx) => {
    // Without a key the signature alone still confirms (an attempt started before keys existed).
    const access = proof ? await buyerAccess(tx, proof) : null;
    if (keyGiven && !access) throw unknownOrder();
    const attempt = await attemptByRef(tx, sg.provider, confirmation.providerRef);
    if (!attempt || attempt.orderId !== orderId) throw new AppError("NOT_FOUND", "There is no such payment for this order.", { reason: "unknown_payment" });
    // A confirmation that carries its amount (the local gateway's) is checked like a webhook's report.
    const reported = confirmation.amount === undefined ? undefined : { amount: confirmation.amount, currency: confirmation.currency, paymentId: confirmation.providerPaymentId };
    await applyPaymentStatus(tx, attempt.id, confirmation.status, "client_confirmation", { providerPaymentId: confirmation.providerPaymentId, reported });
    return { order: await loadOrderView(tx, orderId), key: access?.key ?? null };
  });
  if (isForm) return c.redirect(orderPath(orderId, key), 303);
  return c.json({ order });
});
