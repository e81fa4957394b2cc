import { Hono, type Context } from "hono";
import { getCookie } from "hono/cookie";
import { z } from "zod";
import { sameSiteOnly } from "#shared/http/csrf";
import { AppError } from "#shared/core/errors";
import { checkProof, orderPath, unknownOrder } from "#shared/orders/access";
import { checkoutInput } from "#shared/orders/checkout";
import { applyConfirmation, checkoutAndPay, payAgain, type PayDeps } from "#shared/orders/checkout-flow";
import { CART_COOKIE } from "./cart";
import { parse, readBody } from "./cart-input";
import type { StorefrontEnv } from "./context";

/**
 * Checkout and payment on the storefront (issue 11 parts 1 and 4), as HTTP: each route parses what the
 * shopper sent, calls the orders area's checkout flow (shared/orders/checkout-flow.ts) and answers.
 *
 * - `POST /api/checkout`: the cart becomes an order, committed before the gateway is called, and its
 *   payment starts (201); a second submit of the converted cart answers the same order with
 *   `replayed: true` and 200.
 * - `POST /api/checkout/<orderId>/pay`: a new attempt (`<orderId>:<n>`) for an order still waiting for its
 *   money, from the buyer: the cart cookie that became the order, or the order's key as `?k=`.
 * - `POST /api/checkout/<orderId>/confirm`: the gateway's signed confirmation, as the shopper's browser
 *   brings it back (to the return URL, which carries `?k=`); verified here before anything is read, then
 *   applied through the one status routine.
 *
 * Every answer names the order's link `/orders/<id>?k=<key>` (docs/decisions/0009-order-access-key.md).
 */
type CheckoutContext = Context<StorefrontEnv>;

const depsOf = (c: CheckoutContext): PayDeps => ({
  db: c.var.db,
  log: c.var.log,
  storeId: c.var.storeId,
  providers: c.var.providers,
  origin: `${new URL(c.req.url).protocol}//${c.req.header("host") ?? c.var.hostname}`,
  ip: c.req.header("cf-connecting-ip") ?? null,
});

export const checkout = new Hono<StorefrontEnv>();

// Every checkout route carries the shopper's cookie: a cross-site page must not be able to post them.
checkout.use("/api/checkout", sameSiteOnly("the shop"));
checkout.use("/api/checkout/:orderId/pay", sameSiteOnly("the shop"));
// Their answers and redirects name the order's key: kept by no cache, and sent to no other site.
checkout.use("/api/checkout", keepPrivate);
checkout.use("/api/checkout/*", keepPrivate);

async function keepPrivate(c: CheckoutContext, next: () => Promise<void>) {
  await next();
  c.res.headers.set("cache-control", "private, no-store");
  c.res.headers.set("referrer-policy", "no-referrer");
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
  const { payment, order, orderUrl } = await payAgain(depsOf(c), orderId, proofOf(c, orderId));
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
  const sg = await c.var.providers.storeGateway(c.var.storeId);
  const isForm = (c.req.header("content-type") ?? "").startsWith("application/x-www-form-urlencoded");
  const fields: unknown = isForm ? await c.req.parseBody().catch(() => ({})) : await c.req.json().catch(() => ({}));
  const confirmation = await sg.gateway.verifyClientConfirmation(fields, sg.confirmationSecret);
  if (!confirmation) throw new AppError("UNAUTHORIZED", "This payment confirmation is not signed by the store's gateway.", { reason: "bad_signature" });
  const buyer = { proof: proofOf(c, orderId), keyGiven: c.req.query("k") !== undefined };
  const { order, key } = await applyConfirmation(depsOf(c), orderId, sg.provider, confirmation, buyer);
  if (isForm) return c.redirect(orderPath(orderId, key), 303);
  return c.json({ order });
});
