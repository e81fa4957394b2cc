import type { Context } from "hono";
import { AppError } from "../core/errors";

/**
 * CSRF for cookie-authenticated requests and form posts. Browsers mark every request with
 * Sec-Fetch-Site, which pages cannot forge: anything but same-origin is refused. Without it (older
 * browsers), a present Origin must be the site's own. `Origin: null` (sent by pages with a no-referrer
 * policy, sandboxes, redirects) is accepted only when Sec-Fetch-Site vouches for the request.
 */
export function isCrossSite(c: Context): boolean {
  const site = c.req.header("sec-fetch-site");
  if (site !== undefined && site !== "same-origin") return true;
  const origin = c.req.header("origin");
  if (origin === undefined) return false;
  if (origin === "null") return site !== "same-origin";
  return origin !== new URL(c.req.url).origin;
}

export function crossSiteRefused(where = "the admin"): AppError {
  return new AppError("FORBIDDEN", `Cross-site request refused. Use ${where} from its own address.`, { reason: "csrf" });
}
