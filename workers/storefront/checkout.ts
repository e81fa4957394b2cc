import { Hono } from "hono";
import { getCookie } from "hono/cookie";
import { withStore } from "#shared/db/with-store";
import { crossSiteRefused, isCrossSite } from "#shared/http/csrf";
import { checkoutInput, placeOrder, type Placed } from "#shared/orders/checkout";
import { CART_COOKIE } from "./cart";
import { parse, readBody } from "./cart-input";
import type { StorefrontEnv } from "./context";

/**
 * POST /api/checkout (issue 11 part 1): the shopper's cart becomes an order in one transaction (cart
 * locked, stock reserved, parcels with their GST, the first payment attempt), committed before any
 * payment gateway is called. A second submit of the converted cart answers the same order with
 * `replayed: true` and 200.
 */
export const checkout = new Hono<StorefrontEnv>();

/** The gateway this deployment uses for `paymentMethod: "gateway"`. */
const GATEWAY_PROVIDER = "local";

export function paymentView(p: Placed, redirectUrl?: string) {
  return {
    attemptId: p.attempt.id,
    attempt: p.attempt.attempt,
    idempotencyKey: p.attempt.idempotencyKey,
    status: p.attempt.status,
    ...(redirectUrl ? { redirectUrl } : {}),
  };
}

checkout.post("/api/checkout", async (c) => {
  if (isCrossSite(c)) throw crossSiteRefused("the shop");
  c.header("cache-control", "no-store");
  const body = await readBody(c);
  const input = parse(checkoutInput, body.fields);
  const placed = await withStore(c.var.db, c.var.storeId, (tx) => placeOrder(tx, getCookie(c, CART_COOKIE), input, GATEWAY_PROVIDER, new Date()));
  return c.json({ order: placed.order, payment: paymentView(placed), replayed: placed.replayed }, placed.replayed ? 200 : 201);
});
