import { Hono, type Context } from "hono";
import { setCookie } from "hono/cookie";
import { isAppError } from "#shared/core/errors";
import { sendStoreUnit } from "#shared/db/unit";
import { sameSiteOnly } from "#shared/http/csrf";
import { Page } from "#shared/http/page";
import { newCartToken } from "#shared/storefront/cart";
import { cartChangePlan, type CartChange } from "#shared/storefront/cart-changes";
import { formatMoney } from "#shared/storefront/catalog";
import { getSession, type UcpCheckout } from "#shared/ucp/checkout-sessions";
import { CART_COOKIE, cartCookieOptions } from "./cart";
import type { StorefrontEnv } from "./context";
import { hasPasswordCookie, PasswordPage } from "./password";
import { isUuid } from "#shared/db/ids";

/**
 * A UCP checkout session's `continue_url` (docs/ucp.md): `/cart/session/<id>` on the store's domain, where the
 * buyer takes over what their agent prepared. GET shows the session's items and totals and a button; nothing
 * changes on a GET (a link preview cannot use it). The button posts (same-site) to `/api/cart/session/<id>`,
 * which makes a fresh cart for this browser with the session's lines and code through the cart's own change
 * (its stock and code checks), then goes on to /checkout. The id is random (UUID v4) and looked up under the
 * store's row-level security: another store's id finds nothing; an ended or expired session has no page.
 */
export const ucpHandoff = new Hono<StorefrontEnv>();

type HandoffContext = Context<StorefrontEnv>;

export { continuePath } from "#shared/ucp/profile";

/** Only a session still being prepared hands over: one that placed its order sends the buyer to the order (continue_url). */
const OPEN = new Set(["incomplete", "ready_for_complete"]);

function privately(c: HandoffContext) {
  c.header("cache-control", "no-store");
  c.header("referrer-policy", "no-referrer");
  c.header("x-robots-tag", "noindex");
}

/** The open session the link names, priced now; null for an unknown, ended or expired one, or while agentic checkout is off. */
async function openSession(c: HandoffContext, id: string): Promise<UcpCheckout | null> {
  if (!isUuid(id)) return null;
  const found = await getSession(c.var.db, c.var.storeId, null, id);
  return found.ok && OPEN.has(found.checkout.status) ? found.checkout : null;
}

const gone = (c: HandoffContext, message: string, status: 404 | 409) =>
  c.html(
    <Page title={`${c.var.store.name} · Checkout`}>
      <div class="card">
        <h1>{status === 404 ? "This checkout link is not open" : "This cart could not be made"}</h1>
        <p>{message}</p>
        <p>
          <a href="/cart">Your cart</a> · <a href="/products">All products</a>
        </p>
      </div>
    </Page>,
    status,
  );

const NOT_OPEN = "This checkout was finished, cancelled or has expired. Ask your assistant for a new link, or browse the store.";

ucpHandoff.get("/cart/session/:id", async (c) => {
  const { store } = c.var;
  privately(c);
  if (store.passwordCookieHash !== null && !(await hasPasswordCookie(c, store))) return c.html(<PasswordPage storeName={store.name} returnTo={c.req.path} />, 401);
  const session = await openSession(c, c.req.param("id"));
  if (!session) return gone(c, NOT_OPEN, 404);
  const money = (minor: number) => formatMoney(minor, session.currency);
  return c.html(
    <Page title={`${store.name} · Your checkout`}>
      <div class="card">
        <h1>Your checkout at {store.name}</h1>
        <p class="muted">Prepared for you by your assistant. Check it, then continue to enter your details and pay.</p>
        <ul>
          {session.line_items.map((l) => (
            <li>
              {l.quantity} × {l.item.title} — {money(l.totals.find((t) => t.type === "total")?.amount ?? 0)}
            </li>
          ))}
        </ul>
        <dl>
          {session.totals.map((t) => (
            <>
              <dt>{t.display_text ?? t.type}</dt>
              <dd>{money(t.amount)}</dd>
            </>
          ))}
        </dl>
        <p class="muted">Prices include GST. Continuing makes these items the cart of this browser.</p>
        <form method="post" action={`/api/cart/session/${session.id}`}>
          <button type="submit">Continue to checkout</button>
        </form>
      </div>
    </Page>,
  );
});

// A cross-site page must not put a cart in a shopper's browser (cart fixation): same-site posts only.
ucpHandoff.use("/api/cart/session/:id", sameSiteOnly("the shop"));
ucpHandoff.post("/api/cart/session/:id", async (c) => {
  privately(c);
  const session = await openSession(c, c.req.param("id"));
  if (!session) return gone(c, NOT_OPEN, 404);
  if (session.line_items.some((l) => !isUuid(l.item.id))) return gone(c, "An item of this checkout is not sold in this store. Ask your assistant to change the checkout, or shop on this site.", 409);
  const changes: CartChange[] = session.line_items.map((l) => ({ kind: "add", variantId: l.item.id, quantity: l.quantity }));
  const code = session.discounts.applied[0]?.code;
  if (code) changes.push({ kind: "applyCode", code });
  const fresh = await newCartToken();
  try {
    await sendStoreUnit(c.var.db, c.var.storeId, (q) => cartChangePlan(q, { tokenHash: null, freshHash: fresh.hash }, changes), { readOnly: false });
  } catch (e) {
    // The cart's own refusals (an item no longer sold, not enough stock), in its words.
    if (isAppError(e) && e.status < 500) return gone(c, `${e.message} Ask your assistant to change the checkout, or shop on this site.`, 409);
    throw e;
  }
  setCookie(c, CART_COOKIE, fresh.token, cartCookieOptions(c.var.hostname));
  return c.redirect("/checkout", 303);
});
