import { parse as parseCookies } from "hono/utils/cookie";
import type { StoreFacts } from "#shared/storefront/hosts";

/**
 * The edge cache of anonymous catalogue pages (issue 10 part 7; ARCHITECTURE §13), in the Workers Cache
 * API. A page is kept under its store, its catalogue version, the hostname and the path with its query;
 * every change to what the pages show bumps the version in the same transaction (migration 0008) and the
 * committing runtime pushes the store's new facts to the HOSTS namespace, so the next request looks under
 * a key that holds nothing yet and renders afresh. Old versions are never purged: nothing asks for them
 * again and the cache evicts them (their TTL bounds how long they are kept).
 *
 * Never cached: anything but GET, requests with credentials, any of our shopper cookies other than the
 * short-link cookie `wc_lk` (a cart, the storefront password), pages outside the catalogue (the cart,
 * short links, which count clicks), the password page, and answers other than 200 and the store's 404.
 */
const CATALOGUE_PATH = /^\/(products(\/[a-z0-9-]{1,100})?|collections(\/[a-z0-9-]{1,100})?|search|pages\/[a-z0-9-]{1,100}|robots\.txt|sitemap\.xml)?$/;
/** How long a stored page is kept at most; the version, not this, decides when it is out of date. */
export const EDGE_TTL_SECONDS = 3_600;
/** Browsers and shared caches between us and the shopper store nothing without asking again. */
export const BROWSER_CACHE_CONTROL = "no-cache";

export type CacheStatus = "hit" | "miss" | "bypass";

/** The cache key of this request's page, or null when the page must not be cached. */
export function edgeCacheKey(req: Request, store: StoreFacts, hostname: string): Request | null {
  if (req.method !== "GET" || req.headers.has("authorization")) return null;
  const url = new URL(req.url);
  if (!CATALOGUE_PATH.test(url.pathname)) return null;
  const cookies = parseCookies(req.headers.get("cookie") ?? "");
  if (Object.keys(cookies).some((name) => name.startsWith("wc_") && name !== "wc_lk")) return null;
  return new Request(`https://${hostname}/-edge/${store.id}/${store.version}${url.pathname}${url.search}`);
}

function edgeCache(): Cache {
  return (caches as unknown as { default: Cache }).default;
}

/**
 * The page for `key` from the cache, or rendered by `render` and stored. Answers with the cache's verdict
 * (Server-Timing `edge;desc=hit|miss`) and, whatever it was, the browser's cache policy.
 */
export async function cachedPage(key: Request, render: () => Promise<Response>): Promise<{ res: Response; status: CacheStatus }> {
  const cache = edgeCache();
  const found = await cache.match(key).catch(() => undefined);
  if (found) return { res: forBrowser(found), status: "hit" };
  const rendered = await render();
  if ((rendered.status !== 200 && rendered.status !== 404) || rendered.headers.has("set-cookie")) return { res: rendered, status: "bypass" };
  const body = await rendered.arrayBuffer();
  const stored = new Headers(rendered.headers);
  stored.set("cache-control", `public, max-age=${EDGE_TTL_SECONDS}`);
  for (const name of ["x-request-id", "server-timing"]) stored.delete(name);
  // A cache that cannot take the page right now costs the next shopper one render, nothing more.
  await cache.put(key, new Response(body, { status: rendered.status, headers: stored })).catch(() => undefined);
  return { res: forBrowser(new Response(body, rendered)), status: "miss" };
}

function forBrowser(res: Response): Response {
  const headers = new Headers(res.headers);
  headers.set("cache-control", BROWSER_CACHE_CONTROL);
  return new Response(res.body, { status: res.status, headers });
}
