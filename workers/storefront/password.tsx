import { Hono, type Context, type Next } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import type { FC } from "hono/jsx";
import { z } from "zod";
import { constantTimeEqual, verifyPassword } from "#shared/auth/password";
import { sha256Hex } from "#shared/auth/tokens";
import { crossSiteRefused, isCrossSite } from "#shared/http/csrf";
import { AppError } from "#shared/http/errors";
import { Page } from "#shared/http/page";
import { safeRedirectPath } from "#shared/http/redirect";
import { hit } from "#shared/limits/limit";
import { rateLimitHeaders, type LimitPolicy } from "#shared/limits/window";
import type { StorefrontEnv } from "./context";
import { isForm } from "./limits";
import { passwordCookieValue } from "#shared/storefront/store-facts";
import { loadPasswordHash, type ShopStore } from "./store";

/**
 * The storefront password (SPEC "Storefront behaviour" 3): while it is on, every page is the password
 * page. The right password sets an HttpOnly cookie for this store on this hostname whose value is
 * derived from the store id and the password's hash (`passwordCookieValue`), so changing the password (or
 * turning it off and on) signs every shopper out, and a cookie of one store never opens another. The gate
 * checks the cookie against the store's held facts, which keep only the SHA-256 of the value that opens it.
 */
export const PASSWORD_COOKIE = "wc_sf_pass";
export const PASSWORD_POLICY: LimitPolicy = { limit: 10, windowMs: 10 * 60_000 };
const COOKIE_DAYS = 30;

/** Whether this request carries the cookie that opens the store now. */
export async function hasPasswordCookie(c: Context, store: ShopStore): Promise<boolean> {
  const sent = getCookie(c, PASSWORD_COOKIE);
  if (!store.passwordCookieHash || !sent || !/^[0-9a-f]{64}$/.test(sent)) return false;
  const enc = new TextEncoder();
  return constantTimeEqual(enc.encode(await sha256Hex(sent)), enc.encode(store.passwordCookieHash));
}

/** The cart and checkout: what the password keeps from strangers besides the pages (issue 20 item 7). */
const SELLING = /^\/api\/(cart|checkout)(\/|$)/;
/** Paying an order placed before the password went on, through its link (the order's key in `?k=`). */
const PAYING_AN_ORDER = /^\/api\/checkout\/[^/]+\/(pay|confirm)$/;

/**
 * Pages a shopper reaches while the password is on, besides those the app opens itself: an order's page
 * reached with its key, and the local gateway's page that pays it.
 */
export function orderOpenWhileLocked(url: URL): boolean {
  return (/^\/orders\/[^/]+$/.test(url.pathname) && url.searchParams.has("k")) || /^\/-gateway\/pay\/[^/]+$/.test(url.pathname);
}

/**
 * While the password is on, the cart and checkout answer 401 with the password page's address to whoever
 * has not entered it (JSON `passwordUrl` for the API; the password page for a form): a variant id alone
 * must not buy from a closed store. Runs after the gate, which holds the store's password state.
 */
export async function sellingLock(c: Context<StorefrontEnv>, next: Next) {
  const { store } = c.var;
  const path = c.req.path;
  const selling = SELLING.test(path) || (path === "/checkout" && c.req.method === "POST");
  if (!selling || store.passwordCookieHash === null) return next();
  if (PAYING_AN_ORDER.test(path) && c.req.query("k")) return next();
  if (await hasPasswordCookie(c, store)) return next();
  // Every page is the password page while it is on; this one brings the shopper back to the cart.
  const passwordUrl = `${new URL(c.req.url).protocol}//${c.req.header("host") ?? c.var.hostname}/cart`;
  c.header("cache-control", "no-store");
  if (path.startsWith("/api/") && !isForm(c)) {
    throw new AppError("UNAUTHORIZED", `This store is open only to people with its password. Enter it at ${passwordUrl}`, { reason: "password_required", passwordUrl }, { "cache-control": "no-store" });
  }
  return c.html(<PasswordPage storeName={store.name} returnTo="/cart" />, 401);
}

export const PasswordPage: FC<{ storeName: string; returnTo: string; message?: string | undefined }> = ({ storeName, returnTo, message }) => (
  <Page title={`${storeName} · Password`}>
    <div class="card">
      <h1>{storeName}</h1>
      <p class="muted">This store is open to people with its password.</p>
      {message ? (
        <p class="alert" role="alert">
          {message}
        </p>
      ) : null}
      <form method="post" action="/api/storefront/password">
        <input type="hidden" name="return" value={returnTo} />
        <label for="password">Store password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required />
        <button type="submit">Enter</button>
      </form>
    </div>
  </Page>
);

const form = z.object({ password: z.string().max(1024).default(""), return: z.string().max(2048).optional() });

export const password = new Hono<StorefrontEnv>();

// POST /api/storefront/password: the password form (all attempts limited per IP).
password.post("/api/storefront/password", async (c) => {
  if (isCrossSite(c)) throw crossSiteRefused("the store");
  c.header("cache-control", "no-store");
  const origin = new URL(c.req.url).origin;
  const parsed = form.safeParse(await c.req.parseBody().catch(() => ({})));
  const { password: given, return: rawReturn } = parsed.success ? parsed.data : { password: "", return: undefined };
  const returnTo = safeRedirectPath(rawReturn, origin);
  const ip = c.req.header("cf-connecting-ip") ?? "unknown";
  const decision = await hit(c.env.RATE_LIMITER, `storefront-password:${c.var.storeId}:${ip}`, PASSWORD_POLICY);
  const shop = c.var.store;
  if (!decision.allowed) {
    for (const [name, value] of Object.entries(rateLimitHeaders(decision))) c.header(name, value);
    const minutes = Math.ceil((decision.retryAfterSeconds ?? 60) / 60);
    return c.html(<PasswordPage storeName={shop.name} returnTo={returnTo} message={`Too many attempts. Try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`} />, 429);
  }
  const hash = await loadPasswordHash(c.var.db, shop.id);
  if (!hash) return c.redirect(returnTo, 303); // the store is open: nothing to enter
  if (!given || !(await verifyPassword(given, hash))) {
    return c.html(<PasswordPage storeName={shop.name} returnTo={returnTo} message="That password is not right. Check it and try again." />, 401);
  }
  setCookie(c, PASSWORD_COOKIE, await passwordCookieValue(shop.id, hash), {
    httpOnly: true,
    sameSite: "Lax",
    path: "/",
    secure: !/^(localhost|.+\.localhost)$/.test(c.var.hostname),
    maxAge: COOKIE_DAYS * 86_400,
  });
  return c.redirect(returnTo, 303);
});
