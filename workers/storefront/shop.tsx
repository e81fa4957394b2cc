import { Hono } from "hono";
import type { FC } from "hono/jsx";
import type { Database } from "#shared/db/database";
import { AppError } from "#shared/http/errors";
import { Page } from "#shared/http/page";
import type { Logger } from "#shared/log";
import { shortLinks } from "./links";
import { PasswordPage } from "./password";
import type { ShopStore } from "./store";

/**
 * The store's internal paths (SPEC "Storefront behaviour" 3): `/-s/<storeId>/<path>` for the shopper's
 * pages and `/-p/<storeId>` for the password page. Nothing outside reaches them: the public app refuses
 * every path that begins with `/-s` or `/-p`, and hands a request over here only with the store it
 * resolved from the hostname, attached to the internal request object itself (a WeakMap entry cannot be
 * forged from outside).
 */
export interface ShopRequest {
  db: Database;
  log: Logger;
  store: ShopStore;
  hostname: string;
  /** The path and query the shopper asked for (for the password page's return). */
  asked: string;
}

const HANDED_OVER = new WeakMap<Request, ShopRequest>();

type ShopEnv = { Variables: { shop: ShopRequest } };

export const shop = new Hono<ShopEnv>();

shop.use(async function handedOver(c, next) {
  const handed = HANDED_OVER.get(c.req.raw);
  const { id } = handed?.store ?? {};
  if (!handed || !(c.req.path === `/-p/${id}` || c.req.path.startsWith(`/-s/${id}/`))) throw new AppError("NOT_FOUND", "Nothing here.");
  c.set("shop", handed);
  await next();
});

// Errors go back to the public app's one renderer (HTML pages with the request id).
shop.notFound(() => {
  throw new AppError("NOT_FOUND", "There is no page at this address in this store.");
});
shop.onError((e) => {
  throw e;
});

const StoreHome: FC<{ name: string }> = ({ name }) => (
  <Page title={name}>
    <div class="card">
      <h1>{name}</h1>
      <p class="muted">Welcome. The catalogue opens here soon.</p>
    </div>
  </Page>
);

shop.get("/-p/:storeId", (c) => {
  const { store, asked } = c.var.shop;
  c.header("cache-control", "no-store");
  c.header("x-robots-tag", "noindex");
  return c.html(<PasswordPage storeName={store.name} returnTo={asked} />);
});

shop.get("/-s/:storeId/", (c) => c.html(<StoreHome name={c.var.shop.store.name} />));
shop.route("/", shortLinks);

/** Serves `internalPath` for a shopper's request, with the store the public app resolved. */
export function serveInternal(original: Request, internalPath: string, handed: ShopRequest): Response | Promise<Response> {
  const internal = new Request(new URL(internalPath, original.url), original);
  HANDED_OVER.set(internal, handed);
  return shop.fetch(internal);
}
