import { Hono, type Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { z } from "zod";
import type { Database } from "#shared/db/database";
import { CART_LINE_QUANTITY_MAX } from "#shared/db/schema";
import { sendStoreUnit } from "#shared/db/unit";
import type { HonoEnv } from "#shared/http/app";
import { sameSiteOnly } from "#shared/http/csrf";
import { AppError, isAppError } from "#shared/core/errors";
import { cartKeyOf, newCartToken, readCart, type CartView } from "#shared/storefront/cart";
import { cartChangePlan, type CartChange } from "#shared/storefront/cart-changes";
import { parse, readBody, safeReturn, type Body } from "./cart-input";
import { codeWasWrong } from "./limits";
import type { StorefrontBindings } from "./env";

type CartEnv = HonoEnv<StorefrontBindings, { storeId: string; hostname: string }>;
type CartContext = Context<CartEnv>;

export const CART_COOKIE = "wc_cart";
const COOKIE_MAX_AGE = 30 * 24 * 60 * 60;

const quantity = (min: number) => z.number().int().min(min).max(CART_LINE_QUANTITY_MAX);
const addInput = z.strictObject({ variantId: z.uuid(), quantity: quantity(1).default(1) });
const setInput = z.strictObject({ quantity: quantity(0) });
const discountInput = z.strictObject({ code: z.string().trim().min(1).max(40) });
const lineIdParam = z.uuid();

/**
 * One request's change in one round trip (shared/storefront/cart-changes.ts): the shopper's cart found
 * (locked) or, for a change that needs one (`create`), made with a fresh token; the change; the cart as it
 * now is. A cookie of another store's cart finds nothing here (RLS), so it counts as no cart.
 */
async function runCart(db: Database, storeId: string, token: string | undefined, create: boolean, change: CartChange) {
  const known = await cartKeyOf(token);
  const fresh = create ? await newCartToken() : undefined;
  const keys = { tokenHash: known && "tokenHash" in known ? known.tokenHash : null, freshHash: fresh?.hash ?? null };
  const { view, usedFresh } = await sendStoreUnit(db, storeId, (q) => cartChangePlan(q, keys, change), { readOnly: false });
  return { view, token: view.id ? (usedFresh ? fresh!.token : token) : undefined };
}

/** The cart cookie's attributes on a hostname (also for a cart handed over at its checkout link: storefront-mcp-checkout.tsx). */
export function cartCookieOptions(host: string) {
  const local = host === "localhost" || host.endsWith(".localhost");
  return { httpOnly: true, sameSite: "Lax", path: "/", secure: !local, maxAge: COOKIE_MAX_AGE } as const;
}

function setCartCookie(c: CartContext, token: string): void {
  setCookie(c, CART_COOKIE, token, cartCookieOptions(c.var.hostname));
}

/** The code a form post's redirect carries on a client error (the reason where there is one). */
function errorCode(e: AppError): string {
  const reason = e.data?.["reason"];
  return typeof reason === "string" ? reason : e.code.toLowerCase();
}

/**
 * Runs a change and answers JSON `{cart}` or, for a form, 303 back to its page (with ?cartError= on a
 * 4xx). `build` validates the input before any database work and returns the change.
 */
async function answer(c: CartContext, body: Body, create: boolean, build: () => CartChange) {
  let result: { view: CartView; token: string | undefined };
  try {
    result = await runCart(c.var.db, c.var.storeId, getCookie(c, CART_COOKIE), create, build());
  } catch (e) {
    // A code that is not the store's is a guess as far as we know: it stays counted against the guesses'
    // own, smaller limit (counted at the door before the lookup; any other outcome is given back there).
    if (isAppError(e) && e.data?.["reason"] === "unknown_code") codeWasWrong(c);
    if (body.kind === "form" && isAppError(e) && e.status < 500) return c.redirect(safeReturn(body.returnTo, errorCode(e)), 303);
    throw e;
  }
  if (result.token) setCartCookie(c, result.token);
  if (body.kind === "form") return c.redirect(body.returnTo, 303);
  return c.json({ cart: result.view });
}

export const cartRoutes = new Hono<CartEnv>();

// Form posts carry the shopper's cookie, so a cross-site page must not be able to send them (CSRF).
cartRoutes.use("/api/cart/*", sameSiteOnly("the shop"));

cartRoutes.get("/api/cart", async (c) => c.json({ cart: await readCart(c.var.db, c.var.storeId, getCookie(c, CART_COOKIE)) }));

const addRoute = async (c: CartContext) => {
  const body = await readBody(c);
  return answer(c, body, true, () => {
    const input = parse(addInput, body.fields);
    return { kind: "add", variantId: input.variantId, quantity: input.quantity };
  });
};

function lineId(c: CartContext): string {
  const result = lineIdParam.safeParse(c.req.param("lineId"));
  if (!result.success) throw new AppError("NOT_FOUND", "This line is not in your cart.", { reason: "unknown_line" });
  return result.data;
}

const setRoute = (c: CartContext, body: Body) =>
  answer(c, body, false, () => {
    const id = lineId(c);
    const input = parse(setInput, body.fields);
    return { kind: "set", lineId: id, quantity: input.quantity };
  });

const removeRoute = (c: CartContext, body: Body) =>
  answer(c, body, false, () => {
    const id = lineId(c);
    return { kind: "set", lineId: id, quantity: 0 };
  });

const applyRoute = (c: CartContext, body: Body) =>
  answer(c, body, true, () => {
    const input = parse(discountInput, body.fields);
    return { kind: "applyCode", code: input.code };
  });

const dropRoute = (c: CartContext, body: Body) => answer(c, body, false, () => ({ kind: "dropCode" }));

cartRoutes.post("/api/cart/lines", addRoute);
cartRoutes.patch("/api/cart/lines/:lineId", async (c) => setRoute(c, await readBody(c)));
cartRoutes.delete("/api/cart/lines/:lineId", async (c) => removeRoute(c, await readBody(c)));
cartRoutes.post("/api/cart/discount", async (c) => {
  const body = await readBody(c);
  return body.kind === "form" && body.method === "DELETE" ? dropRoute(c, body) : applyRoute(c, body);
});
cartRoutes.delete("/api/cart/discount", async (c) => dropRoute(c, await readBody(c)));

// Forms can only POST: a line's form posts here with `quantity` (0 removes) or `_method=DELETE`.
cartRoutes.post("/api/cart/lines/:lineId", async (c) => {
  const body = await readBody(c);
  if (body.kind !== "form") throw new AppError("METHOD_NOT_ALLOWED", "Use PATCH or DELETE on a cart line.", { reason: "method" });
  return body.method === "DELETE" ? removeRoute(c, body) : setRoute(c, body);
});
