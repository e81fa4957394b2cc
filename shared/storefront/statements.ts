import type { SQL } from "drizzle-orm";
import { product, productVariant } from "../db/schema";
import { EXAMPLE, orNull, pg, statement } from "../db/statement";
import { CURRENT_STORE, sql } from "../db/steps";
import { FIRST_IMAGE_JSON, type ProductImage } from "./media";

/** The storefront's statements in SQL (decision 0026): the cart's changes (./cart-changes.ts) and the catalogue (./catalog.ts). */

const { id: ID, store: STORE, hash: HASH } = EXAMPLE;
const A_CART = sql`(select ${ID}::uuid)`;

/** A cart made for a fresh token, only when the cookie's token names no open cart of this store. */
export const makeCart = statement("storefront.makeCart", {
  row: {},
  examples: [[STORE, HASH, HASH]],
  sql: (store: SQL, freshHash: string, tokenHash: string | null) =>
    sql`insert into cart (store_id, token_hash, currency) select ${store}, ${freshHash}, currency from store
        where id = ${store} and not exists (select 1 from cart where store_id = ${store} and converted_order_id is null and token_hash = ${tokenHash})`,
});

/** Units of a variant added to the cart: a new line, or more of the one it has. */
export const addCartLine = statement("storefront.addCartLine", {
  row: {},
  examples: [[STORE, A_CART, ID, 1]],
  sql: (store: SQL, cartId: SQL, variantId: string, quantity: number) =>
    sql`insert into cart_line (store_id, cart_id, variant_id, quantity) values (${store}, ${cartId}, ${variantId}, ${quantity})
        on conflict (store_id, cart_id, variant_id) do update set quantity = cart_line.quantity + excluded.quantity, updated_at = now()`,
});

// The catalogue shoppers see (./catalog.ts).

export const SORTS = ["newest", "price_asc", "price_desc", "title"] as const;
export type Sort = (typeof SORTS)[number];

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

/** A card's facts of a product `p` grouped over its variants `v` and their units `a` (AVAILABLE as `units`). */
/** A card's first photo (shared/storefront/media.ts), over a product row `p` with its store_id and id. */
const CARD_IMAGE = sql.raw(`${FIRST_IMAGE_JSON("p")} as image`);

const CARD_FACTS = sql.raw(`(array_agg(v.compare_at_minor order by v.price_minor, v.position, v.id))[1]::bigint as from_compare_at,
      bool_or(v.compare_at_minor > v.price_minor) as on_sale,
      bool_or(a.units > 0) as in_stock,
      bool_or(v.preorder or a.units > 0) as available`);

export interface ProductQuery {
  page: number;
  pageSize: number;
  sort: Sort;
  /** Lowest variant price bounds, in minor units. */
  minPrice?: number | undefined;
  maxPrice?: number | undefined;
  /** Matches title or SKU (case-insensitive). */
  search?: string | undefined;
  /** Only the products of this published collection (its handle), in the collection's order (`sort` aside). */
  collection?: string | undefined;
}

/** The products of a published collection (by handle), as a join on `p`: each once (migration 0042's key). */
const inCollection = (handle: string | undefined): SQL =>
  handle === undefined
    ? sql``
    : sql` join collection_product cp on cp.store_id = p.store_id and cp.product_id = p.id
      join collection c on c.store_id = cp.store_id and c.id = cp.collection_id and c.handle = ${handle} and c.published`;

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
  return sql`select p.id, p.store_id, p.handle, p.title, p.created_at, min(v.price_minor)::bigint as from_price,
      ${CARD_FACTS},
      ${q.collection === undefined ? sql`0` : sql`min(cp.position)`} as position
    from product p join product_variant v on v.store_id = p.store_id and v.product_id = p.id${inCollection(q.collection)}
    cross join lateral (select ${sql.raw(AVAILABLE)} as units) a
    where p.store_id = ${CURRENT_STORE} and p.status = 'active'${search}
    group by p.id having true${bounds[0]}${bounds[1]}`;
}

const A_QUERY: ProductQuery = { page: 1, pageSize: 24, sort: "newest", minPrice: 100, maxPrice: 1000, search: "kurta" };

/** A page of the active products a query matches, with their lowest price and whether anything can be bought. */
export const productCards = statement("storefront.productCards", {
  row: {
    id: product.id,
    handle: product.handle,
    title: product.title,
    from_price: pg.int8(),
    from_compare_at: orNull(pg.int8()),
    on_sale: pg.bool(),
    in_stock: pg.bool(),
    available: pg.bool(),
    image: orNull(pg.jsonb<ProductImage>()),
  },
  examples: [[A_QUERY], [{ page: 2, pageSize: 24, sort: "title" }], [{ page: 1, pageSize: 24, sort: "newest", collection: "summer" }]],
  sql: (query: ProductQuery) =>
    sql`select id, handle, title, from_price, from_compare_at, on_sale, in_stock, available, ${CARD_IMAGE} from (${matching(query)}) p
        order by ${sql.raw(query.collection === undefined ? ORDER[query.sort] : "p.position, p.id")} limit ${query.pageSize} offset ${(query.page - 1) * query.pageSize}`,
});

export const countProducts = statement("storefront.countProducts", {
  row: { n: pg.int4() },
  examples: [[A_QUERY]],
  sql: (query: ProductQuery) => sql`select count(*)::int as n from (${matching(query)}) p`,
});

/** One active product by handle with its variants (position order) and what each can sell now. */
export const productByHandle = statement("storefront.productByHandle", {
  row: {
    id: product.id,
    handle: product.handle,
    title: product.title,
    description: product.description,
    vendor: product.vendor,
    variant_id: productVariant.id,
    variant_title: productVariant.title,
    sku: productVariant.sku,
    price_minor: productVariant.priceMinor,
    compare_at_minor: productVariant.compareAtMinor,
    preorder: productVariant.preorder,
    available: pg.int4(),
  },
  examples: [["kurta"]],
  sql: (handle: string) =>
    sql`select p.id, p.handle, p.title, p.description, p.vendor, v.id as variant_id, v.title as variant_title, v.sku,
       v.price_minor, v.compare_at_minor, v.preorder, ${sql.raw(AVAILABLE)} as available
     from product p join product_variant v on v.store_id = p.store_id and v.product_id = p.id
     where p.store_id = ${CURRENT_STORE} and p.handle = ${handle} and p.status = 'active'
     order by v.position, v.created_at, v.id`,
});

/** Every path a search engine may list: active products, published pages and collections (and their index), with when each changed. */
export const sitemapPaths = statement("storefront.sitemapPaths", {
  row: { path: pg.text(), updated_at: product.updatedAt },
  examples: [[]],
  sql: () =>
    sql`select '/products/' || handle as path, updated_at from product where store_id = ${CURRENT_STORE} and status = 'active'
     union all
     select '/pages/' || handle, updated_at from page where store_id = ${CURRENT_STORE} and status = 'published'
     union all
     select '/collections/' || handle, updated_at from collection where store_id = ${CURRENT_STORE} and published
     union all
     select '/collections', max(updated_at) from collection where store_id = ${CURRENT_STORE} and published having count(*) > 0
     order by path`,
});

/** A unit's opening by hostname: the store serving it through a verified domain (privileged lookup) set as the unit's store; null when none. */
export const openByHostname = statement("storefront.openByHostname", {
  row: { store_id: orNull(pg.text()) },
  examples: [["shop.example.test"]],
  sql: (hostname: string) => sql`select nullif(set_config('app.store_id', coalesce(privileged.store_id_by_hostname(${hostname})::text, ''), true), '') as store_id`,
});

// Storefront search (./search.ts; migration 0043, docs/decisions/0035-storefront-search.md).

/** Keeps the ids (`id`) of products in a published collection (by handle), when one is asked for. */
const inCollectionOf = (handle: string | undefined, id: SQL): SQL =>
  handle === undefined
    ? sql``
    : sql` where exists (select 1 from collection_product cp join collection c on c.store_id = cp.store_id and c.id = cp.collection_id
        where cp.store_id = ${CURRENT_STORE} and cp.product_id = ${id} and c.handle = ${handle} and c.published)`;

export interface ProductSearch {
  /** The query's words, the longest first (the index condition), at most 6. */
  words: readonly string[];
  page: number;
  pageSize: number;
  /** Lowest variant price bounds, in minor units. */
  minPrice?: number | undefined;
  maxPrice?: number | undefined;
  /** Only products something of which can be bought now (in stock, or a pre-order). */
  inStockOnly?: boolean | undefined;
  /** Only the products of this published collection (its handle). */
  collection?: string | undefined;
}

/**
 * A page of the active products with something like every word, best first (what can be bought, then how
 * well the words match: the title over the rest), and how many matched in all (`total`, on every row, up to
 * the function's 2,000). The ids, filtered and in order, come from the GIN index through
 * privileged.product_ids_matching (the session's store only, migration 0043); the page's own rows are read
 * under RLS by primary key, their price and availability as the catalogue reads them.
 */
export const searchProducts = statement("storefront.searchProducts", {
  row: {
    id: product.id,
    handle: product.handle,
    title: product.title,
    from_price: pg.int8(),
    from_compare_at: orNull(pg.int8()),
    on_sale: pg.bool(),
    in_stock: pg.bool(),
    available: pg.bool(),
    image: orNull(pg.jsonb<ProductImage>()),
    total: pg.int4(),
  },
  examples: [[{ words: ["kurtha"], page: 1, pageSize: 24 }], [{ words: ["saree", "silk"], page: 2, pageSize: 24, minPrice: 100, maxPrice: 1000, inStockOnly: true, collection: "summer" }]],
  sql: (s: ProductSearch) =>
    sql`with m as (
        select id, rank, count(*) over () as total
          from privileged.product_ids_matching(${sql.param(s.words)}::text[], ${s.minPrice ?? null}::bigint, ${s.maxPrice ?? null}::bigint, ${s.inStockOnly ?? false})
               with ordinality m (id, rank)${inCollectionOf(s.collection, sql`m.id`)}
         order by rank limit ${s.pageSize} offset ${(s.page - 1) * s.pageSize}
      )
      select p.id, p.handle, p.title, min(v.price_minor)::bigint as from_price, ${CARD_FACTS}, ${CARD_IMAGE}, m.total::int as total
        from m
        join product p on p.store_id = ${CURRENT_STORE} and p.id = m.id and p.status = 'active'
        join product_variant v on v.store_id = p.store_id and v.product_id = p.id
        cross join lateral (select ${sql.raw(AVAILABLE)} as units) a
       group by m.rank, m.total, p.id
       order by m.rank`,
});
