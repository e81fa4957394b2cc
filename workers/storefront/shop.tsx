import { Hono } from "hono";
import { contextStorage } from "hono/context-storage";
import { AppError } from "#shared/core/errors";
import { sameSiteOnly } from "#shared/http/csrf";
import { contentPage, homePage, notFoundPage, productPage, productsPage, robotsTxt, sitemapXml } from "./catalog-pages";
import { searchPage } from "./search-page";
import { cartPage } from "./cart-page";
import { collectionPage, collectionsPage } from "./collection-pages";
import { checkoutPage, checkoutRefused, submitCheckout } from "./checkout-page";
import { consentPage, consentPost } from "./consent";
import { gatewayPage, gatewayPagePost } from "./gateway-page";
import { shortLinks } from "./links";
import { notifyMe, notifyRefused } from "./notify-me";
import { orderInvoicePage } from "./order-invoices";
import { orderPage } from "./order-page";
import { unsubscribePage, unsubscribePost } from "./unsubscribe";
import { PasswordPage } from "./password";
import { themeStylesheet } from "./theme";
import type { ShopEnv, ShopRequest } from "./shop-env";

/**
 * The store's internal paths (SPEC "Storefront behaviour" 3): `/-s/<storeId>/<path>` for the shopper's
 * pages and `/-p/<storeId>` for the password page. Nothing outside reaches them: the public app refuses
 * every path that begins with `/-s` or `/-p`, and hands a request over here only with the store it
 * resolved from the hostname, attached to the internal request object itself (a WeakMap entry cannot be
 * forged from outside).
 */
const HANDED_OVER = new WeakMap<Request, ShopRequest>();

export const shop = new Hono<ShopEnv>();

shop.use(async function handedOver(c, next) {
  const handed = HANDED_OVER.get(c.req.raw);
  const { id } = handed?.store ?? {};
  if (!handed || !(c.req.path === `/-p/${id}` || c.req.path.startsWith(`/-s/${id}/`))) throw new AppError("NOT_FOUND", "Nothing here.");
  c.set("shop", handed);
  await next();
});
// Every page's shell finds the store's published look through the request's context (theme.tsx).
shop.use(contextStorage());

// A path the store has no page for gets the store's own 404 page; errors go back to the public app's
// one renderer (HTML pages with the request id).
shop.notFound((c) => notFoundPage(c));
shop.onError((e) => {
  throw e;
});

// The shopper's forms are same-site only (CSRF, shared/http/csrf.ts), each refused with its page's own answer:
// the form again with why (400), or the local gateway's 404. The unsubscribe and consent posts have none: each
// acts only on what its emailed link names, and a mail client's one-click unsubscribe comes from no page at all.
shop.use("/-s/:storeId/products/:handle/notify", sameSiteOnly(notifyRefused));
shop.use("/-s/:storeId/checkout", sameSiteOnly(checkoutRefused));
shop.use("/-s/:storeId/-gateway/pay/:ref", sameSiteOnly(notFoundPage));

shop.get("/-p/:storeId", (c) => {
  const { store, asked } = c.var.shop;
  c.header("cache-control", "no-store");
  c.header("x-robots-tag", "noindex");
  return c.html(<PasswordPage storeName={store.name} returnTo={asked} />);
});

shop.get("/-s/:storeId/", homePage);
shop.get("/-s/:storeId/products", productsPage);
shop.get("/-s/:storeId/products/:handle", productPage);
shop.post("/-s/:storeId/products/:handle/notify", notifyMe);
shop.get("/-s/:storeId/search", searchPage);
shop.get("/-s/:storeId/pages/:handle", contentPage);
shop.get("/-s/:storeId/collections", collectionsPage);
shop.get("/-s/:storeId/collections/:handle", collectionPage);
shop.get("/-s/:storeId/cart", cartPage);
shop.get("/-s/:storeId/checkout", checkoutPage);
shop.post("/-s/:storeId/checkout", submitCheckout);
shop.get("/-s/:storeId/orders/:orderId", orderPage);
shop.get("/-s/:storeId/orders/:orderId/:kind{invoices|credit-notes}/:file", orderInvoicePage);
shop.get("/-s/:storeId/-gateway/pay/:ref", gatewayPage);
shop.post("/-s/:storeId/-gateway/pay/:ref", gatewayPagePost);
shop.get("/-s/:storeId/unsubscribe/:messageId", unsubscribePage);
shop.post("/-s/:storeId/unsubscribe/:messageId", unsubscribePost);
shop.get("/-s/:storeId/consent/:customerId", consentPage);
shop.post("/-s/:storeId/consent/:customerId", consentPost);
shop.get("/-s/:storeId/robots.txt", robotsTxt);
shop.get("/-s/:storeId/sitemap.xml", sitemapXml);
shop.get("/-s/:storeId/theme.css", themeStylesheet);
shop.route("/", shortLinks);

/** Serves `internalPath` for a shopper's request, with the store the public app resolved. */
export type { ShopRequest };

export function serveInternal(original: Request, internalPath: string, handed: ShopRequest): Response | Promise<Response> {
  const internal = new Request(new URL(internalPath, original.url), original);
  HANDED_OVER.set(internal, handed);
  return shop.fetch(internal);
}
