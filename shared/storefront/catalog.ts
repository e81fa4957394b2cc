import type { SQL } from "drizzle-orm";
import { CURRENT_STORE } from "../db/openings";
import { plan, type Plan } from "../db/plan";
import { raw, sql, type Q } from "../db/steps";

/**
 * What shoppers may see of a store's catalogue (issue 10 part 3): active products only (drafts and
 * archived ones never), published pages only. Availability is what the store can sell now: on hand
 * minus reserved, over the locations that sell online. Each is a plan for one unit of the store (its
 * statements travel with the unit's opening, one round trip) and names the store as well (RLS is the
 * guarantee; the filter is for the planner).
 */
export const SORTS = ["newest", "price_asc", "price_desc", "title"] as const;
export type Sort = (typeof SORTS)[number];

export interface ProductCard {
  id: string;
  handle: string;
  title: string;
  /** The lowest variant price, in minor units. */
  fromPrice: number;
  available: boolean;
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

const ORDER: Record<Sort, string> = {
  newest: "p.created_at desc, p.id desc",
  price_asc: "from_price asc, p.id",
  price_desc: "from_price desc, p.id",
  title: "lower(p.title) asc, p.id",
};

/** Units each variant can sell now (online locations only), as a subquery on `v` (product_variant). */
export const AVAILABLE = `(select coalesce(sum(greatest(il.on_hand - il.reserved, 0)), 0)::int
    from inventory_level il join location l on l.store_id = il.store_id and l.id = il.location_id
    where il.store_id = v.store_id and il.variant_id = v.id and l.sells_online)`;

interface CardRow extends Record<string, unknown> {
  id: string;
  handle: string;
  title: string;
  from_price: string;
  available: boolean;
}

const cardOf = (r: CardRow): ProductCard => ({ id: r.id, handle: r.handle, title: r.title, fromPrice: Number(r.from_price), available: r.available });

export interface ProductQuery {
  page: number;
  pageSize: number;
  sort: Sort;
  /** Lowest variant price bounds, in minor units. */
  minPrice?: number | undefined;
  maxPrice?: number | undefined;
  /** Matches title or SKU (case-insensitive). */
  search?: string | undefined;
}

/** The active products a query matches, one row per product with its lowest price (grouped, not yet ordered). */
function matching(q: ProductQuery): SQL {
  const pattern = q.search ? `%${q.search.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%` : undefined;
  const search = pattern
    ? sql` and (p.title ilike ${pattern} or exists (select 1 from product_variant s where s.store_id = p.store_id and s.product_id = p.id and s.sku ilike ${pattern}))`
    : sql``;
  const bounds = [
    q.minPrice !== undefined ? sql` and min(v.price_minor) >= ${q.minPrice}` : sql``,
    q.maxPrice !== undefined ? sql` and min(v.price_minor) <= ${q.maxPrice}` : sql``,
  ];
  return sql`select p.id, p.handle, p.title, p.created_at, min(v.price_minor)::bigint as from_price,
      bool_or(v.preorder or ${sql.raw(AVAILABLE)} > 0) as available
    from product p join product_variant v on v.store_id = p.store_id and v.product_id = p.id
    where p.store_id = ${CURRENT_STORE} and p.status = 'active'${search}
    group by p.id having true${bounds[0]}${bounds[1]}`;
}

/** A page of active products with their price from and whether anything can be bought, and the total. */
export function productsPlan(q: Q, query: ProductQuery): Plan<{ items: ProductCard[]; total: number }> {
  const found = matching(query);
  return plan(
    [
      raw<CardRow>(q, sql`select id, handle, title, from_price, available from (${found}) p
        order by ${sql.raw(ORDER[query.sort])} limit ${query.pageSize} offset ${(query.page - 1) * query.pageSize}`),
      raw<{ n: number }>(q, sql`select count(*)::int as n from (${found}) p`),
    ] as const,
    ([rows, [counted]]) => ({ items: rows.map(cardOf), total: counted?.n ?? 0 }),
  );
}

interface ProductRow extends Record<string, unknown> {
  id: string;
  handle: string;
  title: string;
  description: string;
  vendor: string | null;
  variant_id: string;
  variant_title: string;
  sku: string | null;
  price_minor: string;
  compare_at_minor: string | null;
  preorder: boolean;
  available: number;
}

/** One active product by handle with its variants (position order) and what each can sell now. */
export function productByHandlePlan(q: Q, handle: string): Plan<ProductView | null> {
  return plan(
    [
      raw<ProductRow>(
        q,
        sql`select p.id, p.handle, p.title, p.description, p.vendor, v.id as variant_id, v.title as variant_title, v.sku,
           v.price_minor, v.compare_at_minor, v.preorder, ${sql.raw(AVAILABLE)} as available
         from product p join product_variant v on v.store_id = p.store_id and v.product_id = p.id
         where p.store_id = ${CURRENT_STORE} and p.handle = ${handle} and p.status = 'active'
         order by v.position, v.created_at, v.id`,
      ),
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
    [raw<{ title: string; body: string }>(q, sql`select title, body from page where store_id = ${CURRENT_STORE} and handle = ${handle} and status = 'published'`)] as const,
    ([rows]) => rows[0] ?? null,
  );
}

/** The store's primary verified hostname (canonical links), if it has one. */
export function primaryHostnamePlan(q: Q): Plan<string | null> {
  return plan(
    [raw<{ hostname: string }>(q, sql`select hostname from store_domain where store_id = ${CURRENT_STORE} and is_primary and status = 'verified'`)] as const,
    ([rows]) => rows[0]?.hostname ?? null,
  );
}

/** Every path a search engine may list: the home page, the catalogue, active products, published pages. */
export function sitemapPlan(q: Q): Plan<{ path: string; updatedAt: Date }[]> {
  return plan(
    [
      raw<{ path: string; updated_at: Date }>(
        q,
        sql`select '/products/' || handle as path, updated_at from product where store_id = ${CURRENT_STORE} and status = 'active'
         union all
         select '/pages/' || handle, updated_at from page where store_id = ${CURRENT_STORE} and status = 'published'
         order by path`,
      ),
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
