import { and, eq, sql } from "drizzle-orm";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { getCookie, setCookie } from "hono/cookie";
import { z } from "zod";
import { pageView, shortLink } from "#shared/db/schema";
import { CURRENT_STORE } from "#shared/db/openings";
import { plan } from "#shared/db/plan";
import { sendStoreUnit } from "#shared/db/unit";
import { withStore } from "#shared/db/with-store";
import { sameSiteOnly } from "#shared/http/csrf";
import { AppError, badRequest } from "#shared/core/errors";
import { issuesOf } from "#shared/core/errors";
import { enforceClient } from "#shared/limits/limit";
import type { LimitPolicy } from "#shared/limits/window";
import { LINK_COOKIE, LINK_COOKIE_MAX_AGE, LINK_SLUG, linkDestination } from "#shared/storefront/short-links";
import type { StorefrontEnv } from "./context";
import type { ShopRequest } from "./shop-env";

/**
 * Short links and the page beacon (issue 10 part 5). `/l/<slug>` is a page of the store (served at
 * `/-s/<storeId>/l/<slug>`, so while the storefront password is on it shows the password page like
 * every page); the beacon is an API route of the public app.
 */

const secureCookie = (hostname: string) => !/^(localhost|.+\.localhost)$/.test(hostname);
const noSuchLink = () => new AppError("NOT_FOUND", "There is no page at this address in this store.");

export const shortLinks = new Hono<{ Variables: { shop: ShopRequest } }>();

shortLinks.get("/-s/:storeId/l/:slug", async (c) => {
  const { db, store, hostname } = c.var.shop;
  const slug = c.req.param("slug");
  if (!LINK_SLUG.test(slug)) throw noSuchLink();
  // One atomic statement: concurrent clicks each add exactly one.
  const link = await sendStoreUnit(
    db,
    store.id,
    (q) =>
      plan(
        [
          q
            .update(shortLink)
            .set({ clicks: sql`${shortLink.clicks} + 1` })
            .where(and(eq(shortLink.storeId, CURRENT_STORE), eq(shortLink.slug, slug)))
            .returning({
              id: shortLink.id,
              target: shortLink.target,
              source: shortLink.utmSource,
              medium: shortLink.utmMedium,
              campaign: shortLink.utmCampaign,
              term: shortLink.utmTerm,
              content: shortLink.utmContent,
            }),
        ] as const,
        ([[row]]) => row,
      ),
    { readOnly: false },
  );
  if (!link) throw noSuchLink();
  setCookie(c, LINK_COOKIE, link.id, { maxAge: LINK_COOKIE_MAX_AGE, path: "/", sameSite: "Lax", httpOnly: true, secure: secureCookie(hostname) });
  c.header("cache-control", "no-store");
  return c.redirect(linkDestination(link.target, link, new URL(c.req.url).origin), 302);
});

const BEACON_MAX_BYTES = 4096;
/** Page views per IP per store: a shopper sends one per page, far below this; a script hammering the table does not. */
export const BEACON_POLICY: LimitPolicy = { limit: 120, windowMs: 60_000 };
const beaconBody = z.object({
  path: z
    .string()
    .max(2048)
    .regex(/^\/[^\u0000-\u001f\u007f]*$/, "A path that starts with / (no control characters)."),
});

export const beacon = new Hono<StorefrontEnv>();

beacon.post(
  "/api/beacon",
  bodyLimit({
    maxSize: BEACON_MAX_BYTES,
    onError: () => {
      throw new AppError("PAYLOAD_TOO_LARGE", `The beacon body is limited to ${BEACON_MAX_BYTES} bytes.`, { issues: [{ path: "", message: "too large" }] });
    },
  }),
  sameSiteOnly("the store"),
  async (c) => {
    // Counted before the body is read and before any database work, so a refused beacon costs no connection.
    // Per address as the limiters count it (IPv6 by its /64, and its /48 too: decision 0019).
    const limitHeaders = await enforceClient(c.env.RATE_LIMITER, `storefront-beacon:${c.var.storeId}`, c.req.header("cf-connecting-ip"), BEACON_POLICY, `page views per ${BEACON_POLICY.windowMs / 1000} s`);
    for (const [name, value] of Object.entries(limitHeaders)) c.header(name, value);
    // Any content type: navigator.sendBeacon sends a string as text/plain.
    let json: unknown;
    try {
      json = JSON.parse(await c.req.text());
    } catch {
      throw badRequest([{ path: "", message: 'Send JSON such as {"path": "/"}.' }]);
    }
    const parsed = beaconBody.safeParse(json);
    if (!parsed.success) throw badRequest(issuesOf(parsed.error));
    const cookie = getCookie(c, LINK_COOKIE);
    const linkId = cookie && z.uuid().safeParse(cookie).success ? cookie : null;
    await withStore(c.var.db, c.var.storeId, async (tx) => {
      // Credited only to a link that exists in this store: another store's id or a deleted link gives null.
      const credited = linkId ? sql`(select s.id from short_link s where s.store_id = ${tx.storeId} and s.id = ${linkId})` : null;
      await tx.insert(pageView).values({ storeId: tx.storeId, path: parsed.data.path, linkId: credited });
    });
    c.header("cache-control", "no-store");
    return c.body(null, 204);
  },
);
