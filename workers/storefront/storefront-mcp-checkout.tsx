import { Hono, type Context } from "hono";
import type { FC } from "hono/jsx";
import { sendStoreUnit } from "#shared/db/unit";
import { sameSiteOnly } from "#shared/http/csrf";
import { Page } from "#shared/http/page";
import { CART_TOKEN, cartPlan, newCartToken, type CartView } from "#shared/storefront/cart";
import { handOverCartPlan } from "#shared/storefront/cart-handoff";
import { formatMoney } from "#shared/storefront/catalog";
import { sha256Hex } from "#shared/core/tokens";
import { setCookie } from "hono/cookie";
import { CART_COOKIE, cartCookieOptions } from "./cart";
import type { StorefrontEnv } from "./context";
import { CartSummary } from "./layout";
import { hasPasswordCookie, PasswordPage } from "./password";

/**
 * A cart's checkout link (the Storefront MCP's `checkout_url`, docs/storefront-mcp.md): `/cart/open/<cart_id>`
 * on the store's domain. GET shows the cart (its lines and totals) and a button; nothing changes on a GET,
 * so a chat app's link preview or a mail scanner cannot use the link up. The button posts (same-site) to
 * `/api/cart/open/<cart_id>`, which hands the cart to this browser: a fresh token in its cart cookie, the
 * agent's cart_id no longer naming it (shared/storefront/cart-handoff.ts), then on to /checkout. The id
 * is 256 random bits, looked up by its hash under the store's row-level security: another store's link
 * finds nothing. Never cached, never indexed, never sent on as a Referer.
 */
export const cartHandoff = new Hono<StorefrontEnv>();

type HandoffContext = Context<StorefrontEnv>;

const GONE = "This cart link has been opened already, or the order was placed. Ask your assistant for a new link, or browse the store.";

function privately(c: HandoffContext) {
  c.header("cache-control", "no-store");
  c.header("referrer-policy", "no-referrer");
  c.header("x-robots-tag", "noindex");
}

const hashOf = async (token: string | undefined) => (token && CART_TOKEN.test(token) ? sha256Hex(token) : null);

const HandedCart: FC<{ cart: CartView; currency: string; token: string; storeName: string }> = ({ cart, currency, token, storeName }) => (
  <div class="card">
    <h1>Your cart at {storeName}</h1>
    <p class="muted">Made for you by your assistant. Check it, then continue to enter your address and pay.</p>
    <CartSummary cart={cart} money={(minor) => formatMoney(minor, currency)} />
    <p class="muted">Prices include GST. Continuing makes this the cart of this browser.</p>
    <form method="post" action={`/api/cart/open/${token}`}>
      <button type="submit">Continue to checkout</button>
    </form>
  </div>
);

cartHandoff.get("/cart/open/:token", async (c) => {
  const { store } = c.var;
  const token = c.req.param("token");
  privately(c);
  if (store.passwordCookieHash !== null && !(await hasPasswordCookie(c, store))) return c.html(<PasswordPage storeName={store.name} returnTo={c.req.path} />, 401);
  const tokenHash = await hashOf(token);
  const cart = tokenHash ? await sendStoreUnit(c.var.db, store.id, (q) => cartPlan(q, { tokenHash })) : null;
  if (!cart?.id) {
    return c.html(
      <Page title={`${store.name} · Cart`}>
        <div class="card">
          <h1>This link is used up</h1>
          <p>{GONE}</p>
          <p>
            <a href="/cart">Your cart</a> · <a href="/products">All products</a>
          </p>
        </div>
      </Page>,
      404,
    );
  }
  return c.html(
    <Page title={`${store.name} · Your cart`}>
      <HandedCart cart={cart} currency={cart.currency || store.currency} token={token} storeName={store.name} />
    </Page>,
  );
});

// A cross-site page must not hand its cart to a shopper's browser (cart fixation): same-site posts only.
cartHandoff.use("/api/cart/open/:token", sameSiteOnly("the shop"));
cartHandoff.post("/api/cart/open/:token", async (c) => {
  const token = c.req.param("token");
  privately(c);
  const tokenHash = await hashOf(token);
  const fresh = await newCartToken();
  const handed = tokenHash ? await sendStoreUnit(c.var.db, c.var.storeId, (q) => handOverCartPlan(q, tokenHash, fresh.hash), { readOnly: false }) : false;
  if (!handed) return c.redirect(`/cart/open/${CART_TOKEN.test(token) ? token : "-"}`, 303);
  setCookie(c, CART_COOKIE, fresh.token, cartCookieOptions(c.var.hostname));
  return c.redirect("/checkout", 303);
});
