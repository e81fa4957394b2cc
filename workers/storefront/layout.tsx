import { raw } from "hono/html";
import type { Child, FC } from "hono/jsx";
import { BASE_CSS } from "#shared/http/html";
import { inlineStyle } from "#shared/http/security-headers";
import { StoreMenu } from "./menu";
import type { CartView } from "#shared/storefront/cart";
import { THEME_RULES } from "#shared/storefront/theme";
import { AnnouncementBar, FaviconLinks, StoreLogo, ThemeStylesheet } from "./theme";

/** What the storefront's shell needs to know about the page and the store. */
export interface ShopHead {
  storeName: string;
  /** The page's own title (the store's name is added). */
  title?: string | undefined;
  description: string;
  /** Absolute canonical URL on the store's primary domain. */
  canonical?: string | undefined;
  noindex?: boolean;
  /** Open Graph and card tags as [property, content] (shared/storefront/seo.ts). */
  meta?: readonly (readonly [string, string])[];
  /** Structured data, already escaped for a script element (shared/storefront/seo.ts jsonForScript). */
  jsonLd?: string;
}

const SHOP_CSS = `
header.shop{display:flex;flex-wrap:wrap;gap:.75rem;align-items:center;justify-content:space-between;margin-bottom:1rem}
header.shop a.brand{font-weight:700;font-size:1.2rem;text-decoration:none}
main a:not(.cta){color:var(--brand-ink,LinkText)}
header.shop nav{display:flex;gap:.75rem;flex-wrap:wrap;align-items:center}
form.search{display:flex;gap:.4rem}form.search input{min-width:10rem}
ul.grid{list-style:none;padding:0;display:grid;grid-template-columns:repeat(auto-fill,minmax(11rem,1fr));gap:.75rem}
ul.grid li{border:1px solid var(--line,#ccc);border-radius:.5rem;padding:.75rem}
.price{font-weight:600}.soldout{color:#a33}.pre{color:#236}
ul.grid img{width:100%;height:auto;display:block;border-radius:.3rem;margin-bottom:.4rem}
ol.gallery{list-style:none;padding:0;margin:0 0 1rem;display:grid;grid-template-columns:repeat(4,1fr);gap:.5rem;max-width:56rem}
ol.gallery li:first-child{grid-column:1/-1}ol.gallery img{width:100%;height:auto;display:block;border-radius:.4rem}
.card-price{margin:.25rem 0}s.compare{color:var(--muted);font-weight:400}.badge{display:inline-block;font-size:.8rem;font-weight:600;border-radius:.25rem;padding:.05rem .4rem;border:1px solid currentColor}.badge.sale{color:#8a2a00}
@media (prefers-color-scheme:dark){.soldout{color:#ff8a80}.pre{color:#9ec5ff}.badge.sale{color:#ffb38a}}
.pager{display:flex;gap:1rem;margin:1rem 0}
form.filters{display:flex;flex-wrap:wrap;gap:.5rem;align-items:end}form.filters label{display:flex;flex-direction:column}
.visually-hidden{position:absolute!important;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
form.inline{display:inline-flex;gap:.3rem;align-items:center;margin:.15rem 0}form.inline input[type=number]{width:4.5rem}
dl.totals{display:grid;grid-template-columns:auto auto;justify-content:end;gap:.25rem 1.5rem}dl.totals dd{margin:0;text-align:right}
nav.menu ul{list-style:none;display:flex;flex-wrap:wrap;gap:.25rem 1.25rem;padding:0;margin:0 0 1rem}nav.menu a[aria-current]{font-weight:700}
ul.collections{list-style:none;padding:0}ul.collections li{margin:0 0 1rem}
img.collection-image{display:block;width:16rem;max-width:100%;height:auto;border-radius:8px;margin:0 0 .4rem}img.collection-hero{display:block;width:100%;height:auto;max-height:24rem;object-fit:cover;border-radius:12px}
`;
/** Registered for the Content-Security-Policy (shared/http/security-headers.ts). */
const SHOP_STYLE = inlineStyle(BASE_CSS + SHOP_CSS + THEME_RULES);

export const ShopPage: FC<{ head: ShopHead; children?: Child }> = ({ head, children }) => (
  <>
    {raw("<!doctype html>")}
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width,initial-scale=1" />
        <title>{head.title ? `${head.title} · ${head.storeName}` : head.storeName}</title>
        <meta name="description" content={head.description} />
        {head.canonical ? <link rel="canonical" href={head.canonical} /> : null}
        {head.noindex ? <meta name="robots" content="noindex" /> : null}
        {head.meta?.map(([property, content]) => (property.startsWith("twitter:") ? <meta name={property} content={content} /> : <meta property={property} content={content} />))}
        {head.jsonLd ? <script type="application/ld+json" dangerouslySetInnerHTML={{ __html: head.jsonLd }} /> : null}
        <style dangerouslySetInnerHTML={{ __html: SHOP_STYLE }} />
        <ThemeStylesheet />
        <FaviconLinks />
      </head>
      <body>
        <AnnouncementBar />
        <main>
          <header class="shop">
            <a class="brand" href="/">
              <StoreLogo storeName={head.storeName} />
            </a>
            <nav aria-label="Store">
              <a href="/products">Products</a>
              <form class="search" method="get" action="/search" role="search">
                <label for="q" class="visually-hidden">
                  Search products
                </label>
                <input id="q" name="q" type="search" placeholder="Search products" maxlength={200} />
                <button type="submit">Search</button>
              </form>
              <a href="/cart">Cart</a>
            </nav>
          </header>
          <StoreMenu />
          {children}
        </main>
      </body>
    </html>
  </>
);

/** A message the shopper must read (announced by screen readers); nothing when there is none. */
export const Alert: FC<{ message: string | undefined }> = ({ message }) =>
  message ? (
    <p class="alert" role="alert">
      {message}
    </p>
  ) : null;

/**
 * A cart's lines and totals before shipping, as the checkout page and a cart's checkout link
 * (storefront-mcp-checkout.tsx) show them; `children` adds rows to the totals.
 */
export const CartSummary: FC<{ cart: CartView; money: (minor: number) => string; children?: Child }> = ({ cart, money, children }) => (
  <>
    <ul>
      {cart.lines.map((l) => (
        <li>
          {l.quantity} × {l.productTitle} · {l.variantTitle} — {money(l.lineTotal)}
        </li>
      ))}
    </ul>
    <dl class="totals">
      <dt>Subtotal</dt>
      <dd>{money(cart.subtotal)}</dd>
      {cart.discount > 0 ? (
        <>
          <dt>Discount ({cart.discountCode})</dt>
          <dd>−{money(cart.discount)}</dd>
        </>
      ) : null}
      <dt>Total before shipping</dt>
      <dd>
        <strong>{money(cart.total)}</strong>
      </dd>
      {children}
    </dl>
  </>
);

/** What a page about the cart says when it is empty. */
export const EmptyCart: FC = () => (
  <p>
    Your cart is empty. <a href="/products">Browse the products</a>.
  </p>
);
