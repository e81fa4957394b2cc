import type { StoreTx } from "../db/with-store";

/**
 * What shoppers may see of a store's catalogue (issue 10 part 3): active products only (drafts and
 * archived ones never), published pages only. Availability is what the store can sell now: on hand
 * minus reserved, over the locations that sell online. Every query runs inside the caller's
 * store-scoped unit and names the store as well (RLS is the guarantee; the filter is for the planner).
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

const CARD_SELECT = `select p.id, p.handle, p.title, min(v.price_minor)::bigint as from_price,
    bool_or(v.preorder or ${AVAILABLE} > 0) as available, count(*) over ()::int as total
  from product p join product_variant v on v.store_id = p.store_id and v.product_id = p.id
  where p.store_id = $1 and p.status = 'active'`;

interface CardRow {
  id: string;
  handle: string;
  title: string;
  from_price: string;
  available: boolean;
  total: number;
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

/** A page of active products with their price from and whether anything can be bought, and the total. */
export async function listProducts(tx: StoreTx, q: ProductQuery): Promise<{ items: ProductCard[]; total: number }> {
  const params: unknown[] = [tx.storeId];
  let where = "";
  if (q.search) {
    params.push(`%${q.search.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`);
    where = ` and (p.title ilike $${params.length} or exists (select 1 from product_variant s where s.store_id = p.store_id and s.product_id = p.id and s.sku ilike $${params.length}))`;
  }
  let having = "";
  if (q.minPrice !== undefined) {
    params.push(q.minPrice);
    having += ` and min(v.price_minor) >= $${params.length}`;
  }
  if (q.maxPrice !== undefined) {
    params.push(q.maxPrice);
    having += ` and min(v.price_minor) <= $${params.length}`;
  }
  params.push(q.pageSize, (q.page - 1) * q.pageSize);
  const text = `${CARD_SELECT}${where} group by p.id${having ? ` having true${having}` : ""}
    order by ${ORDER[q.sort]} limit $${params.length - 1} offset $${params.length}`;
  const { rows } = await tx.$client.query<CardRow>(text, params);
  return { items: rows.map(cardOf), total: rows[0]?.total ?? (q.page > 1 ? await countActive(tx, q) : 0) };
}

/** The total when the requested page is past the end (the window count then has no row to ride on). */
async function countActive(tx: StoreTx, q: ProductQuery): Promise<number> {
  const { total } = await listProducts(tx, { ...q, page: 1, pageSize: 1 });
  return total;
}

/** One active product by handle with its variants (position order) and what each can sell now. */
export async function productByHandle(tx: StoreTx, handle: string): Promise<ProductView | null> {
  const { rows } = await tx.$client.query<{
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
  }>(
    `select p.id, p.handle, p.title, p.description, p.vendor, v.id as variant_id, v.title as variant_title, v.sku,
       v.price_minor, v.compare_at_minor, v.preorder, ${AVAILABLE} as available
     from product p join product_variant v on v.store_id = p.store_id and v.product_id = p.id
     where p.store_id = $1 and p.handle = $2 and p.status = 'active'
     order by v.position, v.created_at, v.id`,
    [tx.storeId, handle],
  );
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
}

/** A published content page by handle. */
export async function publishedPage(tx: StoreTx, handle: string): Promise<{ title: string; body: string } | null> {
  const { rows } = await tx.$client.query<{ title: string; body: string }>(
    "select title, body from page where store_id = $1 and handle = $2 and status = 'published'",
    [tx.storeId, handle],
  );
  return rows[0] ?? null;
}

/** The store's primary verified hostname (canonical links), if it has one. */
export async function primaryHostname(tx: StoreTx): Promise<string | null> {
  const { rows } = await tx.$client.query<{ hostname: string }>(
    "select hostname from store_domain where store_id = $1 and is_primary and status = 'verified'",
    [tx.storeId],
  );
  return rows[0]?.hostname ?? null;
}

/** Every path a search engine may list: the home page, the catalogue, active products, published pages. */
export async function sitemapPaths(tx: StoreTx): Promise<{ path: string; updatedAt: Date }[]> {
  const { rows } = await tx.$client.query<{ path: string; updated_at: Date }>(
    `select '/products/' || handle as path, updated_at from product where store_id = $1 and status = 'active'
     union all
     select '/pages/' || handle, updated_at from page where store_id = $1 and status = 'published'
     order by path`,
    [tx.storeId],
  );
  return rows.map((r) => ({ path: r.path, updatedAt: r.updated_at }));
}

/** Money from minor units in the store's currency, e.g. ₹1,250.00 (the currency's own decimals). */
export function formatMoney(minor: number, currency: string, locale = "en-IN"): string {
  const format = new Intl.NumberFormat(locale, { style: "currency", currency });
  const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
  return format.format(minor / 10 ** digits);
}
