import { and, eq } from "drizzle-orm";
import { CURRENT_STORE } from "../db/openings";
import { plan, type Plan } from "../db/plan";
import { page, storeDomain } from "../db/schema";
import type { RowOfStatement } from "../db/statement";
import type { Q } from "../db/steps";
import { countProducts, productByHandle, productCards, sitemapPaths, type ProductQuery } from "./statements";
import { imageOfJson, type ProductImage } from "./media";

/**
 * What shoppers may see of a store's catalogue (issue 10 part 3): active products only (drafts and
 * archived ones never), published pages only. Availability is what the store can sell now: on hand
 * minus reserved, over the locations that sell online. Each is a plan for one unit of the store (its
 * statements travel with the unit's opening, one round trip) and names the store as well (RLS is the
 * guarantee; the filter is for the planner).
 */
export { SORTS, type Sort, type ProductQuery } from "./statements";
export { AVAILABLE } from "./statements";

export interface ProductCard {
  id: string;
  handle: string;
  title: string;
  /** The lowest variant price, in minor units. */
  fromPrice: number;
  /** That variant's compare-at price when above its price (a sale), in minor units. */
  compareAt: number | null;
  /** Some variant sells below its compare-at price. */
  onSale: boolean;
  /** Something can be bought now: in stock online, or on pre-order. */
  available: boolean;
  /** Available only on pre-order (nothing in stock online). */
  preorderOnly: boolean;
  /** Its first photo, if it has one. */
  image: ProductImage | null;
}

export interface VariantView {
  id: string;
  title: string;
  sku: string | null;
  price: number;
  compareAt: number | null;
  preorder: boolean;
  available: number;
}

export interface ProductView {
  id: string;
  handle: string;
  title: string;
  description: string;
  vendor: string | null;
  variants: VariantView[];
}

type CardRow = RowOfStatement<typeof productCards>;

/** A card from its statement row (the catalogue's lists, search: ./search.ts). */
export const cardOf = (r: CardRow): ProductCard => {
  const fromPrice = Number(r.from_price);
  const compareAt = r.from_compare_at === null ? null : Number(r.from_compare_at);
  return {
    id: r.id,
    handle: r.handle,
    title: r.title,
    fromPrice,
    compareAt: compareAt !== null && compareAt > fromPrice ? compareAt : null,
    onSale: r.on_sale,
    available: r.available,
    preorderOnly: r.available && !r.in_stock,
    image: imageOfJson(r.image),
  };
};

/** A page of active products with their price from and whether anything can be bought, and the total. */
export function productsPlan(q: Q, query: ProductQuery): Plan<{ items: ProductCard[]; total: number }> {
  return plan(
    [
      productCards(q, query),
      countProducts(q, query),
    ] as const,
    ([rows, [counted]]) => ({ items: rows.map(cardOf), total: counted?.n ?? 0 }),
  );
}

/** One active product by handle (or by id) with its variants (position order) and what each can sell now. */
export function productByHandlePlan(q: Q, handle: string | { id: string }): Plan<ProductView | null> {
  return plan(
    [
      productByHandle(q, handle),
    ] as const,
    ([rows]) => {
      const first = rows[0];
      if (!first) return null;
      return {
        id: first.id,
        handle: first.handle,
        title: first.title,
        description: first.description,
        vendor: first.vendor,
        variants: rows.map((r) => ({
          id: r.variant_id,
          title: r.variant_title,
          sku: r.sku,
          price: Number(r.price_minor),
          compareAt: r.compare_at_minor === null ? null : Number(r.compare_at_minor),
          preorder: r.preorder,
          available: r.available,
        })),
      };
    },
  );
}

/** A published content page by handle. */
export function publishedPagePlan(q: Q, handle: string): Plan<{ title: string; body: string } | null> {
  return plan(
    [
      q
        .select({ title: page.title, body: page.body })
        .from(page)
        .where(and(eq(page.storeId, CURRENT_STORE), eq(page.handle, handle), eq(page.status, "published"))),
    ] as const,
    ([rows]) => rows[0] ?? null,
  );
}

/** The store's primary verified hostname (canonical links), if it has one. */
export function primaryHostnamePlan(q: Q): Plan<string | null> {
  return plan(
    [
      q
        .select({ hostname: storeDomain.hostname })
        .from(storeDomain)
        .where(and(eq(storeDomain.storeId, CURRENT_STORE), eq(storeDomain.isPrimary, true), eq(storeDomain.status, "verified"))),
    ] as const,
    ([rows]) => rows[0]?.hostname ?? null,
  );
}

/** Every path a search engine may list: the home page, the catalogue, active products, published pages and collections. */
export function sitemapPlan(q: Q): Plan<{ path: string; updatedAt: Date }[]> {
  return plan(
    [
      sitemapPaths(q),
    ] as const,
    ([rows]) => rows.map((r) => ({ path: r.path, updatedAt: r.updated_at })),
  );
}

/** Money from minor units in the store's currency, e.g. ₹1,250.00 (the currency's own decimals). */
export function formatMoney(minor: number, currency: string, locale = "en-IN"): string {
  const format = new Intl.NumberFormat(locale, { style: "currency", currency });
  const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
  return format.format(minor / 10 ** digits);
}
