import type { FC } from "hono/jsx";
import { z } from "zod";
import { constant, together } from "#shared/db/plan";
import { CURRENT_STORE } from "#shared/db/openings";
import { paymentSettingsPlan } from "#shared/orders/holds";
import { BALANCE_PAY_WITHIN_DAYS, unitDepositTerms } from "#shared/orders/preorders";
import { contentParagraphs } from "#shared/storefront/content";
import {
  formatMoney,
  productByHandlePlan,
  productsPlan,
  publishedPagePlan,
  sitemapPlan,
  SORTS,
  type ProductView,
  type Sort,
} from "#shared/storefront/catalog";
import { mediaPath } from "#shared/media/limits";
import { productImagesByHandlePlan, type ProductImage } from "#shared/storefront/media";
import { jsonForScript, productJsonLd, productOpenGraph, storeJsonLd } from "#shared/storefront/seo";
import { head, major, PAGE_SIZE, read, toMinor, type ShopContext } from "./catalog-read";
import { ShopPage, type ShopHead } from "./layout";
import { Cards, Price } from "./product-card";
import { Gallery } from "./product-gallery";
import type { ShopEnv } from "./shop-env";
import { HomeBanner, publishedTheme } from "./theme";

/**
 * The shopper's catalogue pages (issue 10 part 3), server-rendered and usable without JavaScript. Each
 * page is one read-only unit of the store, one round trip: the content and the primary hostname for
 * canonical links.
 */
const listQuery = z.object({
  page: z.coerce.number().int().min(1).max(1000).catch(1),
  sort: z.enum(SORTS).catch("newest"),
  min: major.catch(undefined),
  max: major.catch(undefined),
});


const SORT_LABELS: Record<Sort, string> = { newest: "Newest", price_asc: "Price: low to high", price_desc: "Price: high to low", title: "Name" };

/** The home page's head, with the store's Organization and WebSite JSON-LD (its logo when published). */
function homeHead(c: ShopContext, base: string): ShopHead {
  const { store } = c.var.shop;
  const logo = publishedTheme()?.logo;
  const logoWidth = logo ? (logo.widths.find((w) => w >= 160) ?? logo.widths[logo.widths.length - 1]!) : 0;
  return {
    ...head(c, "/", base, undefined, `Shop ${store.name} online.`),
    jsonLd: jsonForScript(storeJsonLd({ name: store.name, url: base, logo: logo ? `${base}${mediaPath(logo.hash, logoWidth, "jpg")}` : undefined })),
  };
}

export async function homePage(c: ShopContext) {
  const { store } = c.var.shop;
  const { data, base } = await read(c, (q) => productsPlan(q, { page: 1, pageSize: 8, sort: "newest" }));
  return c.html(
    <ShopPage head={homeHead(c, base)}>
      <h1>{store.name}</h1>
      <HomeBanner />
      <h2>Featured</h2>
      {data.items.length ? <Cards items={data.items} currency={store.currency} /> : <p class="muted">New products are on their way.</p>}
      <p>
        <a href="/products">All products</a>
      </p>
    </ShopPage>,
  );
}

export async function productsPage(c: ShopContext) {
  const { store } = c.var.shop;
  const q = listQuery.parse(c.req.query());
  const query = { page: q.page, pageSize: PAGE_SIZE, sort: q.sort, minPrice: toMinor(q.min, store.currency), maxPrice: toMinor(q.max, store.currency) };
  const { data, base } = await read(c, (q) => productsPlan(q, query));
  const pages = Math.max(1, Math.ceil(data.total / PAGE_SIZE));
  const link = (page: number) => {
    const params = new URLSearchParams({ ...(q.sort !== "newest" ? { sort: q.sort } : {}), ...(q.min !== undefined ? { min: String(q.min) } : {}), ...(q.max !== undefined ? { max: String(q.max) } : {}), page: String(page) });
    return `/products?${params}`;
  };
  return c.html(
    <ShopPage head={head(c, q.page > 1 ? `/products?page=${q.page}` : "/products", base, "Products", `All products of ${store.name}.`)}>
      <h1>Products</h1>
      <form class="filters" method="get" action="/products">
        <label>
          Sort
          <select name="sort">
            {SORTS.map((s) => (
              <option value={s} selected={s === q.sort}>
                {SORT_LABELS[s]}
              </option>
            ))}
          </select>
        </label>
        <label>
          Min price
          <input name="min" type="number" min="0" step="any" inputmode="decimal" value={q.min ?? ""} />
        </label>
        <label>
          Max price
          <input name="max" type="number" min="0" step="any" inputmode="decimal" value={q.max ?? ""} />
        </label>
        <button type="submit">Apply</button>
      </form>
      <p class="muted">
        {data.total} product{data.total === 1 ? "" : "s"}
      </p>
      <Cards items={data.items} currency={store.currency} />
      <nav class="pager" aria-label="Pages">
        {q.page > 1 ? <a href={link(q.page - 1)}>Previous</a> : null}
        <span>
          Page {q.page} of {pages}
        </span>
        {q.page < pages ? <a href={link(q.page + 1)}>Next</a> : null}
      </nav>
    </ShopPage>,
  );
}

/** What the "Email me when it is back" form shows after a post: its outcome, what was typed, the message by its field. */
export interface NotifyState {
  done?: string;
  problem?: string;
  values: { variantId?: string; email?: string };
  errors: { variantId?: string; email?: string };
}

export const productPage = (c: ShopContext) => renderProduct(c);

/** A product page's head: title, description, canonical URL, Open Graph tags and its schema.org Product. */
function productHead(c: ShopContext, product: ProductView, base: string, images: readonly ProductImage[]): ShopHead {
  const { store } = c.var.shop;
  const description = product.description.slice(0, 160) || `${product.title} at ${store.name}.`;
  // The share image: a JPEG (every chat app reads it) at most 1280 wide.
  const shared = images.map((i) => `${base}${mediaPath(i.hash, [...i.widths].reverse().find((w) => w <= 1280) ?? i.widths[0]!, "jpg")}`);
  const facts = { url: `${base}/products/${product.handle}`, storeName: store.name, currency: store.currency, images: shared };
  return {
    ...head(c, `/products/${product.handle}`, base, product.title, description),
    meta: productOpenGraph(product, facts, description),
    jsonLd: jsonForScript(productJsonLd(product, facts)),
  };
}

export async function renderProduct(c: ShopContext, notify?: NotifyState, status: 200 | 400 | 404 | 409 = 200) {
  const { store } = c.var.shop;
  const handle = c.req.param("handle") ?? "";
  const { data, base } = await read(c, (q) => together({ product: productByHandlePlan(q, handle), settings: paymentSettingsPlan(q, CURRENT_STORE), photos: productImagesByHandlePlan(q, handle) }));
  const { product, settings, photos } = data;
  if (!product) return notFoundPage(c);
  const preorders = product.variants.filter((v) => v.preorder);
  // A page with a shopper's own answer (their email) is theirs alone: never stored by any cache.
  if (notify) c.header("cache-control", "no-store");
  const soldOut = product.variants.filter((v) => !v.preorder && v.available <= 0);
  return c.html(
    <ShopPage head={productHead(c, product, base, photos.images)}>
      <h1>{product.title}</h1>
      <Gallery images={photos.images} variantImage={photos.variantImage} chosenVariant={product.variants.find((x) => x.preorder || x.available > 0)?.id} />
      {product.vendor ? <p class="muted">by {product.vendor}</p> : null}
      <p>{product.description}</p>
      <form method="post" action="/api/cart/lines" class="card">
        <input type="hidden" name="return" value="/cart" />
        <fieldset>
          <legend>Choose</legend>
          {product.variants.map((v, i) => {
            const buyable = v.preorder || v.available > 0;
            return (
              <label class="check">
                <input type="radio" name="variantId" value={v.id} checked={i === product.variants.findIndex((x) => x.preorder || x.available > 0)} disabled={!buyable} />{" "}
                {v.title} · <Price minor={v.price} currency={store.currency} />
                {v.compareAt && v.compareAt > v.price ? <s> {formatMoney(v.compareAt, store.currency)}</s> : null}
                {v.preorder ? <span class="pre"> · Pre-order</span> : v.available > 0 ? <span class="muted"> · {v.available} available</span> : <span class="soldout"> · Sold out</span>}
                {v.sku ? <span class="muted"> · SKU {v.sku}</span> : null}
              </label>
            );
          })}
        </fieldset>
        <label for="quantity">Quantity</label>
        <input id="quantity" name="quantity" type="number" min="1" max="999" value="1" inputmode="numeric" />
        <button type="submit" disabled={!product.variants.some((v) => v.preorder || v.available > 0)}>
          Add to cart
        </button>
      </form>
      {preorders.length > 0 ? <PreorderTerms variants={preorders} percent={settings.depositPercent} currency={store.currency} /> : null}
      {soldOut.length > 0 ? (
        <NotifyForm handle={product.handle} soldOut={soldOut} state={notify} />
      ) : notify?.problem ? (
        <p class="alert" role="alert">
          {notify.problem}
        </p>
      ) : null}
    </ShopPage>,
    status,
  );
}

/**
 * What a pre-order pays now, what later and when (docs/order-status.md, "Pre-orders"): units in stock are
 * paid in full; units beyond it pay the store's deposit at checkout and the balance when they arrive.
 */
const PreorderTerms: FC<{ variants: { title: string; price: number; available: number }[]; percent: number; currency: string }> = ({ variants, percent, currency }) => {
  const money = (minor: number) => formatMoney(minor, currency);
  if (percent >= 100) {
    return (
      <p class="muted" data-preorder-terms>
        Pre-orders are paid in full at checkout and ship when they arrive.
      </p>
    );
  }
  return (
    <div class="card" data-preorder-terms>
      <h2>Pre-order: pay {percent}% now</h2>
      <ul>
        {variants.map((v) => {
          const terms = unitDepositTerms(v.price, percent);
          return (
            <li>
              {v.title}: {money(v.price - terms.later)} now, {money(terms.later)} when it arrives
              {v.available > 0 ? ` (the ${v.available} in stock are paid in full and ship now)` : ""}
            </li>
          );
        })}
      </ul>
      <p class="muted">We email you when your pre-ordered items arrive; you then have {BALANCE_PAY_WITHIN_DAYS} days to pay the rest, and they ship once it is paid.</p>
    </div>
  );
};

const NotifyForm: FC<{ handle: string; soldOut: { id: string; title: string }[]; state: NotifyState | undefined }> = ({ handle, soldOut, state }) => {
  const errors = state?.errors ?? {};
  const chosen = state?.values.variantId;
  return (
    <form method="post" action={`/products/${handle}/notify`} class="card" id="notify">
      <h2>Email me when it is back</h2>
      {state?.done ? (
        <p class="notice" role="status">
          {state.done}
        </p>
      ) : null}
      {state?.problem ? (
        <p class="alert" role="alert">
          {state.problem}
        </p>
      ) : null}
      {soldOut.length === 1 ? (
        <input type="hidden" name="variantId" value={soldOut[0]!.id} />
      ) : (
        <>
          <label for="notify-variant">Which one</label>
          <select id="notify-variant" name="variantId" aria-invalid={errors.variantId ? "true" : undefined}>
            {soldOut.map((v) => (
              <option value={v.id} selected={v.id === chosen}>
                {v.title}
              </option>
            ))}
          </select>
          {errors.variantId ? <p class="field-error">{errors.variantId}</p> : null}
        </>
      )}
      <label for="notify-email">Email</label>
      <input
        id="notify-email"
        name="email"
        type="email"
        autocomplete="email"
        required
        value={state?.done ? "" : (state?.values.email ?? "")}
        aria-invalid={errors.email ? "true" : undefined}
        aria-describedby={errors.email ? "notify-email-error" : undefined}
      />
      {errors.email ? (
        <p class="field-error" id="notify-email-error">
          {errors.email}
        </p>
      ) : null}
      <p class="muted">One email when it is back in stock, nothing else.</p>
      <button type="submit">Notify me</button>
    </form>
  );
};

export async function contentPage(c: ShopContext) {
  const { store } = c.var.shop;
  const handle = c.req.param("handle") ?? "";
  const { data: page, base } = await read(c, (q) => publishedPagePlan(q, handle));
  if (!page) return notFoundPage(c);
  return c.html(
    <ShopPage head={head(c, `/pages/${handle}`, base, page.title, page.body.slice(0, 160) || `${page.title} · ${store.name}`)}>
      <h1>{page.title}</h1>
      {contentParagraphs(page.body).map((para) => (
        <p>{para}</p>
      ))}
    </ShopPage>,
  );
}

export async function robotsTxt(c: ShopContext) {
  const { base } = await read(c, () => constant(undefined));
  c.header("content-type", "text/plain; charset=utf-8");
  return c.body(`User-agent: *\nDisallow: /cart\nDisallow: /checkout\nDisallow: /orders/\nDisallow: /search\nDisallow: /api/\nSitemap: ${base}/sitemap.xml\n`);
}

const xml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

export async function sitemapXml(c: ShopContext) {
  const { data: paths, base } = await read(c, (q) => sitemapPlan(q));
  const urls = [{ path: "/", updatedAt: undefined }, { path: "/products", updatedAt: undefined }, ...paths]
    .map((p) => `<url><loc>${xml(base + p.path)}</loc>${p.updatedAt ? `<lastmod>${p.updatedAt.toISOString()}</lastmod>` : ""}</url>`)
    .join("");
  c.header("content-type", "application/xml; charset=utf-8");
  return c.body(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${urls}</urlset>`);
}

/** The store's own 404 page: its name and navigation, so a shopper can go on. */
export function notFoundPage(c: ShopContext) {
  const { store } = c.var.shop;
  return c.html(
    <ShopPage head={{ storeName: store.name, title: "Not found", description: `Not found at ${store.name}.`, noindex: true }}>
      <h1>Not found</h1>
      <p>There is no page at this address in this store.</p>
      <p>
        <a href="/products">Browse the products</a> or search above.
      </p>
    </ShopPage>,
    404,
  );
}

