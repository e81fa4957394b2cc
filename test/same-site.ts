import { Hono, type Env } from "hono";
import { isSameSiteGuard } from "#shared/http/csrf";

/** The methods a route is registered for when it changes something. */
const UNSAFE = new Set(["POST", "PUT", "PATCH", "DELETE"]);

export const SAMPLE_ID = "00000000-0000-4000-8000-000000000000";

/** A concrete path a route pattern answers: each `:param` a UUID (or the value given), a trailing `*` one segment. */
export function samplePath(pattern: string, values: Record<string, string> = {}): string {
  return pattern.replace(/:(\w+)(\{[^}]*\})?\??/g, (_, name: string) => values[name] ?? SAMPLE_ID).replace(/\*$/, "x");
}

/** Whether a route pattern answers `path` for `method`, as Hono's own router matches it. */
async function answers(pattern: string, method: string, path: string): Promise<boolean> {
  const probe = new Hono();
  probe.on(method, pattern, (c) => c.text("hit"));
  return (await probe.request(path, { method })).status === 200;
}

export interface UnsafeRoute {
  method: string;
  path: string;
  /** Whether a same-site guard (shared/http/csrf.ts) runs before the route's handler. */
  guarded: boolean;
}

/**
 * Every route of `app` for a method that changes something, in the order registered, with whether a same-site
 * guard runs before its handler: a guard registered earlier for its method (or all methods) on a pattern that
 * answers the route's path. Route-level middleware before the guard (a body limit) does not matter.
 */
export async function unsafeRoutes<E extends Env>(app: Hono<E>): Promise<UnsafeRoute[]> {
  // Each route's handler is its last entry; the guards that run before it are those registered ahead of that.
  const handlerAt = new Map<string, number>();
  app.routes.forEach((r, i) => {
    if (UNSAFE.has(r.method) && !isSameSiteGuard(r.handler)) handlerAt.set(`${r.method} ${r.path}`, i);
  });
  const found: UnsafeRoute[] = [];
  for (const at of handlerAt.values()) {
    const { method, path } = app.routes[at]!;
    let guarded = false;
    for (const g of app.routes.slice(0, at)) {
      if (isSameSiteGuard(g.handler) && (g.method === "ALL" || g.method === method) && (await answers(g.path, method, samplePath(path)))) {
        guarded = true;
        break;
      }
    }
    found.push({ method, path, guarded });
  }
  return found;
}

/** "METHOD path" of the routes with no guard in front. */
export const unguarded = (routes: UnsafeRoute[]) => routes.filter((r) => !r.guarded).map((r) => `${r.method} ${r.path}`);
