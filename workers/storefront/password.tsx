import { Hono, type Context, type Next } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import type { FC } from "hono/jsx";
import { z } from "zod";
import { verifyPassword } from "#shared/auth/password";
import { constantTimeEqual } from "#shared/core/crypto";
import { sha256Hex } from "#shared/core/tokens";
import { sameSiteOnly } from "#shared/http/csrf";
import { AppError } from "#shared/core/errors";
import { Page } from "#shared/http/page";
import { safeRedirectPath } from "#shared/http/redirect";
import { CHALLENGE_FIELD, type ChallengeWidget as Widget } from "#shared/challenge/challenge";
import { CHALLENGE_RETRY_SECONDS, challengeMessage, checkChallenge } from "#shared/challenge/check";
import { ChallengeWidget } from "#shared/challenge/widget";
import { clientOf } from "#shared/limits/address";
import { challengeAhead, giveBackAll, passThrough } from "#shared/limits/doors";
import { passwordKeys } from "#shared/limits/shopper";
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

export const PasswordPage: FC<{ storeName: string; returnTo: string; message?: string | undefined; widget?: Widget | null }> = ({ storeName, returnTo, message, widget }) => (
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
        {widget ? <ChallengeWidget widget={widget} action="password" /> : null}
        <button type="submit">Enter</button>
      </form>
    </div>
  </Page>
);

const form = z.object({ password: z.string().max(1024).default(""), return: z.string().max(2048).optional() });

export const password = new Hono<StorefrontEnv>();

// POST /api/storefront/password: the password form. Every attempt is counted per address (IPv6 by /64 and
// /48), wrong ones per store (counted before the password is checked, so racing guesses cannot pass the
// count, and given back when it was right); past either threshold an attempt carries a passed person
// check (decision 0019).
password.post("/api/storefront/password", sameSiteOnly("the store"), async (c) => {
  c.header("cache-control", "no-store");
  const origin = new URL(c.req.url).origin;
  const body = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
  const parsed = form.safeParse(body);
  const { password: given, return: rawReturn } = parsed.success ? parsed.data : { password: "", return: undefined };
  const returnTo = safeRedirectPath(rawReturn, origin);
  const shop = c.var.store;
  const page = (status: 401 | 403 | 429 | 503, message: string, widget?: Widget | null) => c.html(<PasswordPage storeName={shop.name} returnTo={returnTo} message={message} widget={widget} />, status);
  // Read at every attempt, not only once a check is due: a deployment without it fails at once.
  const challenge = c.var.providers.challenge();
  const ip = c.req.header("cf-connecting-ip");
  const keys = passwordKeys(c.var.storeId, clientOf(ip));
  const limiter = c.env.RATE_LIMITER;
  const through = await passThrough(limiter, keys, async () => {
    const token = typeof body[CHALLENGE_FIELD] === "string" ? body[CHALLENGE_FIELD] : undefined;
    const check = await checkChallenge(challenge, token, ip, c.var.log);
    if (check !== "unavailable" && check.passed) return null;
    if (check === "unavailable") c.header("retry-after", String(CHALLENGE_RETRY_SECONDS));
    return page(check === "unavailable" ? 503 : 403, challengeMessage(check, "enter this store"), challenge.widget);
  });
  if (!through.allowed) {
    if ("checkRefused" in through) return through.checkRefused;
    for (const [name, value] of Object.entries(through.headers)) c.header(name, value);
    const minutes = Math.ceil(through.retryAfterSeconds / 60);
    return page(429, `Too many attempts. Try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`);
  }
  const hash = await loadPasswordHash(c.var.db, shop.id);
  if (!hash || (given && (await verifyPassword(given, hash)))) {
    // Not a wrong password: the store's count is given back (the address's counts every attempt).
    await giveBackAll(limiter, through.counted.filter(({ key }) => key === keys.store?.key));
    if (!hash) return c.redirect(returnTo, 303); // the store is open: nothing to enter
    setCookie(c, PASSWORD_COOKIE, await passwordCookieValue(shop.id, hash), {
      httpOnly: true,
      sameSite: "Lax",
      path: "/",
      secure: !/^(localhost|.+\.localhost)$/.test(c.var.hostname),
      maxAge: COOKIE_DAYS * 86_400,
    });
    return c.redirect(returnTo, 303);
  }
  // Past a threshold now, the form carries the person check ahead.
  const widget = (await challengeAhead(limiter, keys)) ? challenge.widget : null;
  return page(401, "That password is not right. Check it and try again.", widget);
});
