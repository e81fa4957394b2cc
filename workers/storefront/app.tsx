import { storeIdByHostname } from "#shared/db/privileged";
import { createApp } from "#shared/http/app";
import { AppError } from "#shared/http/errors";
import { errorPage } from "#shared/http/html";
import { normaliseHostname, resolveHost } from "#shared/storefront/hosts";
import type { StorefrontEnv } from "./context";
import { beacon } from "./links";
import { hasPasswordCookie, password } from "./password";
import { cartRoutes } from "./cart";
import { serveInternal } from "./shop";
import { loadShopStore } from "./store";

export const app = createApp<StorefrontEnv["Bindings"], StorefrontEnv["Variables"]>({
  service: "storefront",
  htmlErrors: {
    when: (path) => !path.startsWith("/api/"),
    page: (error) => errorPage(error, error.status === 404 ? "Nothing here" : undefined),
  },
});

/** Paths that already name an internal route are refused from outside (SPEC "Storefront behaviour" 2). */
const INTERNAL_PATH = /^\/-(s|p)(\/|$)/;
/** Paths that pass through unchanged, to the storefront's API and the front end's assets. */
const PASS_THROUGH = /^\/(api|_next)(\/|$)/;

// The path rules first, then the store of the hostname (SPEC rule 1): through the HOSTS cache (60 s,
// unknown hostnames too), with one privileged lookup on a miss. Server-Timing says which it was.
app.use(async function storefrontGate(c, next) {
  if (INTERNAL_PATH.test(c.req.path)) throw new AppError("NOT_FOUND", "There is no page at this address.");
  const hostname = normaliseHostname(c.req.header("host") ?? new URL(c.req.url).host);
  if (!hostname) throw new AppError("NOT_FOUND", "No store is served at this address.", { reason: "unknown_host" });
  const started = performance.now();
  const { storeId, cached } = await resolveHost(c.env.HOSTS, hostname, (h) => storeIdByHostname(c.var.db, h));
  const timing = `host;desc="${cached ? "hit" : "miss"}";dur=${(performance.now() - started).toFixed(1)}`;
  if (!storeId) throw new AppError("NOT_FOUND", `No store is served at ${hostname}.`, { reason: "unknown_host" }, { "server-timing": timing });
  c.header("server-timing", timing);
  c.set("hostname", hostname);
  c.set("storeId", storeId);
  await next();
});

app.route("/", password);
app.route("/", cartRoutes);
app.route("/", beacon);

// Every other path is a page: the password page while the store's password is on and the shopper has
// not entered it, else the store's internal path for it.
app.all("*", async (c) => {
  if (PASS_THROUGH.test(c.req.path)) throw new AppError("NOT_FOUND", "No such API route.");
  const store = await loadShopStore(c.var.db, c.var.storeId);
  const url = new URL(c.req.url);
  const asked = url.pathname + url.search;
  const locked = store.passwordHash !== null && !(await hasPasswordCookie(c, store.id, store.passwordHash));
  const internalPath = locked ? `/-p/${store.id}` : `/-s/${store.id}${url.pathname}${url.search}`;
  const res = await serveInternal(c.req.raw, internalPath, { db: c.var.db, log: c.var.log, store, hostname: c.var.hostname, asked });
  // The gate's headers (Server-Timing, the request id) ride on the page's answer.
  const headers = new Headers(res.headers);
  c.res.headers.forEach((value, name) => {
    if (!headers.has(name)) headers.set(name, value);
  });
  return new Response(res.body, { status: res.status, headers });
});

