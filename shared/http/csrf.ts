import { Hono, type Context, type Env, type MiddlewareHandler } from "hono";
import { AppError } from "../core/errors";

/**
 * The same-site rule (CSRF) of every door a browser's cookie opens, as middleware: a request that may change
 * something (any method but GET and HEAD) sent by another site's page is refused before any handler runs.
 * It is not app-wide like the security headers createApp mounts (./app.ts): each Worker mounts it beside them
 * on its cookie doors (workers/<name>/app.ts, and the sub-apps that answer a refusal with a page of their
 * own). Bearer-token doors, signed webhooks and a mail client's one-click unsubscribe take other sites'
 * requests, and so have no guard. The check itself is private to this module: no door calls it.
 */

/** What a link, an image or a prefetch sends: never refused. */
const SAFE_METHODS = new Set(["GET", "HEAD"]);

/**
 * Browsers mark every request with Sec-Fetch-Site, which pages cannot forge: anything but same-origin is
 * refused. Without it (older browsers), a present Origin must be the site's own. `Origin: null` (sent by pages
 * with a no-referrer policy, sandboxes, redirects) is accepted only when Sec-Fetch-Site vouches for the request.
 */
function isCrossSite(c: Context): boolean {
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

/** The answer a form's own page gives a cross-site post instead of the 403 (the form again with a message). */
export type CrossSiteRefusal<E extends Env> = (c: Context<E>) => Response | Promise<Response>;

const guards = new WeakSet<object>();

/**
 * The guard. `refusal` names where to use the site from in the 403 (crossSiteRefused), or answers the
 * refused request itself (a page that shows the form again, a 404 where the page does not exist).
 */
export function sameSiteOnly<E extends Env = Env>(refusal: string | CrossSiteRefusal<E> = "the admin"): MiddlewareHandler<E> {
  const guard: MiddlewareHandler<E> = async function sameSiteOnly(c, next) {
    if (SAFE_METHODS.has(c.req.method) || !isCrossSite(c)) return next();
    if (typeof refusal === "string") throw crossSiteRefused(refusal);
    return refusal(c);
  };
  guards.add(guard);
  return guard;
}

/** Whether a route's handler is a same-site guard (the tests walk each Worker's routes with it). */
export const isSameSiteGuard = (handler: unknown): boolean => typeof handler === "function" && guards.has(handler);

/**
 * A sub-app of cookie doors with the guard in front of each of its routes for a method other than GET and
 * HEAD, to mount with `app.route`: a route added to the sub-app later is guarded without anyone remembering
 * to. Only its own routes: a path the sub-app does not answer stays the next sub-app's (or a 404).
 */
export function sameSiteRoutes<E extends Env>(routes: Hono<E>, refusal?: string | CrossSiteRefusal<E>): Hono<E> {
  const guard = sameSiteOnly<E>(refusal);
  const guarded = new Hono<E>();
  const seen = new Set<string>();
  for (const { method, path } of routes.routes) {
    // "ALL" is middleware (and the answers that say which method to use): never a door of its own.
    if (SAFE_METHODS.has(method) || method === "ALL" || seen.has(`${method} ${path}`)) continue;
    seen.add(`${method} ${path}`);
    guarded.on(method, path, guard);
  }
  return guarded.route("/", routes);
}
