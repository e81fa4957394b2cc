import { createApp } from "#shared/http/app";
import { AppError } from "#shared/core/errors";
import { errorPage } from "#shared/http/html";
import { normaliseHostname, resolveHost, resolveStoreFacts, type StoreFacts } from "#shared/storefront/hosts";
import { loadHostAndFacts, loadStoreFacts } from "#shared/storefront/store-facts";
import type { StorefrontEnv } from "./context";
import { cachedPage, edgeCacheKey, type CacheStatus } from "./edge-cache";
import { inputGuard } from "./input-guard";
import { beacon } from "./links";
import { shopperLimits } from "./limits";
import { hasPasswordCookie, orderOpenWhileLocked, password, sellingLock } from "./password";
import { cartRoutes } from "./cart";
import { checkout } from "./checkout";
import { serveInternal } from "./shop";
import { suggestRoutes } from "./search-suggest";
import { mediaFile } from "./media";
import { mcpRefusals, storefrontMcp } from "./storefront-mcp";
import { cartHandoff } from "./storefront-mcp-checkout";
import { ucpRefusals, ucpSessions } from "./ucp";
import { ucpHandoff } from "./ucp-handoff";
import { UCP_PROFILE_PATH, ucpProfile } from "./ucp-profile";

/** The catalogue's pages: the home page, product lists and pages, search and content pages. */
const FRAMEABLE = /^\/(products(\/[^/]+)?|search|pages\/[^/]+)?\/?$/;

export const app = createApp<StorefrontEnv["Bindings"], StorefrontEnv["Variables"]>({
  service: "storefront",
  htmlErrors: {
    when: (path) => !path.startsWith("/api/") && path !== UCP_PROFILE_PATH,
    page: (error) => errorPage(error, error.status === 404 ? "Nothing here" : undefined),
  },
  // Catalogue pages may be framed by the store's own site; the cart, checkout, order, consent and every
  // other page may not be framed at all (clickjacking).
  headers: { framing: (path) => (FRAMEABLE.test(path) ? "self" : "none") },
});

/**
 * Paths that already begin with `/-s` or `/-p` are refused from outside (SPEC "Storefront behaviour" 2), to
 * the letter: `/-sale` and `/-pages` too, not only the internal prefixes themselves.
 */
const INTERNAL_PATH = /^\/-(s|p)/;
/** Pages a shopper must reach even while the storefront password is on: leaving a mailing list, confirming a subscription. */
const OPEN_WHILE_LOCKED = /^\/(unsubscribe|consent)\//;

/** Paths that pass through unchanged, to the storefront's API and the front end's assets. */
const PASS_THROUGH = /^\/(api|_next)(\/|$)/;

const timing = (name: string, cached: boolean, started: number) =>
  `${name};desc="${cached ? "hit" : "miss"}";dur=${(performance.now() - started).toFixed(1)}`;

// The Storefront MCP's refusals on its way (the guard, the limit, the gate, the password) as JSON-RPC errors.
app.use("/api/mcp", mcpRefusals);
// The UCP checkout sessions' refusals on their way, in the protocol's shape (ucp.ts).
app.use("/api/ucp/*", ucpRefusals);
app.use(UCP_PROFILE_PATH, ucpRefusals);

// What the shopper sent, before anything else (input-guard.ts).
app.use(inputGuard);

// The shopper's writes are counted first, per address and per store hostname, before anything can reach the
// database (limits.tsx).
app.use(shopperLimits());

// The path rules first, then the store of the hostname (SPEC rule 1) and the store's facts (name,
// currency, password state, catalogue version), each held 60 s in the HOSTS namespace, unknown hostnames
// too, with one database read on a miss. Server-Timing says which it was. A warm request touches no database.
app.use(async function storefrontGate(c, next) {
  if (INTERNAL_PATH.test(c.req.path)) throw new AppError("NOT_FOUND", "There is no page at this address.");
  const hostname = normaliseHostname(c.req.header("host") ?? new URL(c.req.url).host);
  if (!hostname) throw new AppError("NOT_FOUND", "No store is served at this address.", { reason: "unknown_host" });
  let started = performance.now();
  // A host the HOSTS cache does not hold is looked up with its store's facts, in one round trip.
  let fetched: StoreFacts | null | undefined;
  const host = await resolveHost(c.env.HOSTS, hostname, async (h) => {
    const found = await loadHostAndFacts(c.var.db, h);
    fetched = found.facts;
    return found.storeId;
  });
  const timings = [timing("host", host.cached, started)];
  const { storeId } = host;
  if (!storeId) throw new AppError("NOT_FOUND", `No store is served at ${hostname}.`, { reason: "unknown_host" }, { "server-timing": timings.join(", ") });
  started = performance.now();
  const { facts, cached } = await resolveStoreFacts(c.env.HOSTS, storeId, () => (fetched !== undefined ? Promise.resolve(fetched) : loadStoreFacts(c.var.db, storeId)));
  timings.push(timing("store", cached, started));
  if (!facts) throw new AppError("NOT_FOUND", "This store is no longer open.", undefined, { "server-timing": timings.join(", ") });
  c.header("server-timing", timings.join(", "));
  c.set("hostname", hostname);
  c.set("storeId", storeId);
  c.set("store", facts);
  await next();
});

// While the password is on, the cart and checkout are closed to whoever has not entered it.
app.use(sellingLock);

app.route("/", password);
app.route("/", cartRoutes);
app.route("/", checkout);
app.route("/", beacon);
app.route("/", suggestRoutes);
// The Storefront MCP for shoppers' AI agents, and its carts' checkout links (docs/storefront-mcp.md).
app.route("/", storefrontMcp);
app.route("/", cartHandoff);
// UCP checkout sessions for shoppers' AI agents, and their continue_url pages (docs/ucp.md).
app.route("/", ucpSessions);
app.route("/", ucpHandoff);
// The store's UCP profile, where agents discover the above (ucp-profile.ts).
app.route("/", ucpProfile);
// Product images, from R2 under this store's prefix (media.tsx); before the pages, outside their edge cache.
app.get("/media/:hash/:file", mediaFile);

// Every other path is a page: the password page while the store's password is on and the shopper has
// not entered it, else the store's internal path for it, through the edge cache when the page is the same
// for every anonymous shopper.
app.all("*", async (c) => {
  if (PASS_THROUGH.test(c.req.path)) throw new AppError("NOT_FOUND", "No such API route.");
  const { store, hostname } = c.var;
  const url = new URL(c.req.url);
  const asked = url.pathname + url.search;
  const locked = store.passwordCookieHash !== null && !OPEN_WHILE_LOCKED.test(url.pathname) && !orderOpenWhileLocked(url) && !(await hasPasswordCookie(c, store));
  const internalPath = locked ? `/-p/${store.id}` : `/-s/${store.id}${url.pathname}${url.search}`;
  const origin = `${url.protocol}//${c.req.header("host") ?? hostname}`;
  const render = async () => serveInternal(c.req.raw, internalPath, { db: c.var.db, log: c.var.log, store, hostname, asked, providers: c.var.providers, env: c.env, origin, defer: c.var.defer });
  const key = locked ? null : edgeCacheKey(c.req.raw, store, hostname);
  let res: Response;
  let status: CacheStatus = "bypass";
  if (key) ({ res, status } = await cachedPage(key, render));
  else res = await render();
  // The gate's headers (Server-Timing, the request id) ride on the page's answer.
  c.header("server-timing", `edge;desc="${status}"`, { append: true });
  const headers = new Headers(res.headers);
  c.res.headers.forEach((value, name) => headers.set(name, value));
  return new Response(res.body, { status: res.status, headers });
});
