import type { Context } from "hono";

/**
 * CSRF for cookie-authenticated requests. Browsers mark every request with Sec-Fetch-Site, which pages
 * cannot forge: anything but same-origin is refused. Without it (older browsers), a present Origin must
 * be the request's own. `Origin: null` (sent by pages with a no-referrer policy, sandboxes, redirects) is
 * accepted only when Sec-Fetch-Site vouches for the request.
 */
export function isCrossSite(c: Context): boolean {
  const site = c.req.header("sec-fetch-site");
  if (site !== undefined && site !== "same-origin") return true;
  const origin = c.req.header("origin");
  if (origin === undefined) return false;
  if (origin === "null") return site !== "same-origin";
  return origin !== new URL(c.req.url).origin;
}
