import type { ProductView } from "./catalog";

/**
 * What search engines and chat apps read of a product page (issue 23 item 4): schema.org `Product` with an
 * `Offer` per variant as JSON-LD, and Open Graph tags. Pure: the page's reading gives everything.
 */

const AVAILABILITY = {
  inStock: "https://schema.org/InStock",
  preOrder: "https://schema.org/PreOrder",
  outOfStock: "https://schema.org/OutOfStock",
} as const;

/** An amount in minor units as schema.org and Open Graph want it: a decimal string in major units ("1299.00"). */
export function decimalPrice(minor: number, currency: string): string {
  const digits = new Intl.NumberFormat("en", { style: "currency", currency }).resolvedOptions().maximumFractionDigits ?? 2;
  return (minor / 10 ** digits).toFixed(digits);
}

export interface ProductPageFacts {
  /** The product page's absolute URL on the store's primary domain. */
  url: string;
  storeName: string;
  currency: string;
  /** Absolute URLs of the product's images, the share image first (none yet: no media). */
  images?: readonly string[];
}

/** The product as schema.org `Product` JSON-LD: its variants as `Offer`s with price, currency and availability. */
export function productJsonLd(product: ProductView, facts: ProductPageFacts): Record<string, unknown> {
  const offers = product.variants.map((v) => ({
    "@type": "Offer",
    ...(v.sku ? { sku: v.sku } : {}),
    name: v.title,
    price: decimalPrice(v.price, facts.currency),
    priceCurrency: facts.currency,
    availability: v.available > 0 ? AVAILABILITY.inStock : v.preorder ? AVAILABILITY.preOrder : AVAILABILITY.outOfStock,
    itemCondition: "https://schema.org/NewCondition",
    url: facts.url,
    seller: { "@type": "Organization", name: facts.storeName },
  }));
  return {
    "@context": "https://schema.org",
    "@type": "Product",
    name: product.title,
    ...(product.description ? { description: product.description } : {}),
    ...(product.variants.length === 1 && product.variants[0]!.sku ? { sku: product.variants[0]!.sku } : {}),
    ...(product.vendor ? { brand: { "@type": "Brand", name: product.vendor } } : {}),
    ...(facts.images?.length ? { image: [...facts.images] } : {}),
    url: facts.url,
    offers,
  };
}

/**
 * JSON for a `<script type="application/ld+json">` block: `<`, `>`, `&` and the line separators escaped, so
 * no text of the merchant's can close the element or start markup inside it.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** Open Graph and Twitter card tags of a product page, as [property, content] pairs. */
export function productOpenGraph(product: ProductView, facts: ProductPageFacts, description: string): [string, string][] {
  const from = Math.min(...product.variants.map((v) => v.price));
  const image = facts.images?.[0];
  return [
    ["og:type", "product"],
    ["og:title", product.title],
    ["og:description", description],
    ["og:url", facts.url],
    ["og:site_name", facts.storeName],
    ...(image ? ([["og:image", image]] as [string, string][]) : []),
    ["product:price:amount", decimalPrice(from, facts.currency)],
    ["product:price:currency", facts.currency],
    ["twitter:card", image ? "summary_large_image" : "summary"],
  ];
}

/**
 * The home page's JSON-LD: the store as an `Organization` (its logo when it has one) and the site as a
 * `WebSite` whose search a search engine may offer in its results (`SearchAction` on `/search?q=`).
 */
export function storeJsonLd(facts: { name: string; url: string; logo?: string | undefined }): Record<string, unknown> {
  const organization = { "@type": "Organization", "@id": `${facts.url}/#store`, name: facts.name, url: `${facts.url}/`, ...(facts.logo ? { logo: facts.logo } : {}) };
  const website = {
    "@type": "WebSite",
    name: facts.name,
    url: `${facts.url}/`,
    publisher: { "@id": `${facts.url}/#store` },
    potentialAction: { "@type": "SearchAction", target: `${facts.url}/search?q={search_term_string}`, "query-input": "required name=search_term_string" },
  };
  return { "@context": "https://schema.org", "@graph": [organization, website] };
}
