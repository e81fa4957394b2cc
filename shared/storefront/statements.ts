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

/** A product card's columns (shared/storefront/catalog.ts cardOf), as every card statement answers them. */
const CARD_ROW = {
    id: product.id,
    handle: product.handle,
    title: product.title,
    from_price: pg.int8(),
    from_compare_at: orNull(pg.int8()),
    on_sale: pg.bool(),
    in_stock: pg.bool(),
    available: pg.bool(),
    image: orNull(pg.jsonb<ProductImage>()),
};

/** A page of the active products a query matches, with their lowest price and whether anything can be bought. */
export const productCards = statement("storefront.productCards", {
  row: CARD_ROW,
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

/** One active product by handle (or by id: the Storefront MCP) with its variants (position order) and what each can sell now. */
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
  examples: [["kurta"], [{ id: ID }]],
  sql: (key: string | { id: string }) =>
    sql`select p.id, p.handle, p.title, p.description, p.vendor, v.id as variant_id, v.title as variant_title, v.sku,
       v.price_minor, v.compare_at_minor, v.preorder, ${sql.raw(AVAILABLE)} as available
     from product p join product_variant v on v.store_id = p.store_id and v.product_id = p.id
     where p.store_id = ${CURRENT_STORE} and ${typeof key === "string" ? sql`p.handle = ${key}` : sql`p.id = ${key.id}`} and p.status = 'active'
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

// Storefront search (./search.ts; migrations 0043 and 0045, docs/decisions/0035-storefront-search.md).

/** A search counts its matches up to this many; beyond it the page says "1,000+" (counting every match of a common word would cost what the page saves). */
export const SEARCH_COUNT_CAP = 1000;

export interface ProductSearch {
  /** The query's words, at most 6. */
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

/** Only the products of a published collection (by handle), for product ids in `column`. */
function inSearchCollection(s: ProductSearch, column: SQL): SQL {
  if (s.collection === undefined) return sql``;
  return sql` and exists (select 1 from collection_product cp join collection c on c.store_id = cp.store_id and c.id = cp.collection_id
        where cp.store_id = ${CURRENT_STORE} and cp.product_id = ${column} and c.handle = ${s.collection} and c.published)`;
}

/** The filters on a posting `p` (price, what can be bought, a published collection by handle). */
function postingFilters(s: ProductSearch): SQL {
  const parts: SQL[] = [];
  if (s.minPrice !== undefined) parts.push(sql` and p.from_price >= ${s.minPrice}::bigint`);
  if (s.maxPrice !== undefined) parts.push(sql` and p.from_price <= ${s.maxPrice}::bigint`);
  if (s.inStockOnly) parts.push(sql` and p.buyable`);
  parts.push(inSearchCollection(s, sql`p.product_id`));
  return sql.join(parts, sql``);
}

/**
 * The matching products' page (`page`: `id`, `rank`) and their count (`n`, up to the cap and one more), over `m`
 * (the store's words like each query word `i`, with their ids and similarity `sim`).
 *
 * One query word: each of its words' postings read in the ranking's order and only as far as the page (the
 * top `take` of each list hold the top `take` products); the count reads at most cap + 1 products' postings.
 * Several words: the products having one of each query word's store words, found by intersecting the words'
 * keys in a GIN index (privileged.product_ids_with_words, migration 0046), best first, at most 2,000; the page
 * and the count read those ids.
 */
function matchesOf(s: ProductSearch): SQL {
  const offset = (s.page - 1) * s.pageSize;
  if (s.words.length === 1) {
    const filters = postingFilters(s);
    return sql`c as (
        select p.product_id as id, bool_or(p.buyable) as buyable, max(p.weight * m.sim) as score, min(p.title) as title
          from m cross join lateral (
            select p.product_id, p.buyable, p.weight, p.title from search_posting p
             where p.store_id = ${CURRENT_STORE} and p.word = m.word${filters}
             order by p.buyable desc, p.weight desc, p.title, p.product_id
             limit ${s.page * s.pageSize}) p
         group by p.product_id
      ), n as (
        select count(distinct x.product_id) as n
          from (select p.product_id from m join search_posting p on p.store_id = ${CURRENT_STORE} and p.word = m.word
                 where true${filters} limit ${SEARCH_COUNT_CAP + 1} * (select count(*) from m)) x
      ), page as (
        select c.id, row_number() over (order by c.buyable desc, c.score desc, c.title, c.id) as rank
          from c order by rank limit ${s.pageSize} offset ${offset}
      )`;
  }
  return sql`c as (
        select x.id, x.rank
          from privileged.product_ids_with_words(
                 (select array_agg(m.id) from m), (select array_agg(m.i::int) from m), (select array_agg(m.sim) from m),
                 ${s.words.length}::int, ${s.minPrice ?? null}::bigint, ${s.maxPrice ?? null}::bigint, ${s.inStockOnly ?? false}::boolean)
               with ordinality x (id, rank)
         where true${inSearchCollection(s, sql`x.id`)}
      ), n as (select count(*) as n from c
      ), page as (select c.id, c.rank from c order by c.rank limit ${s.pageSize} offset ${offset})`;
}

/**
 * A page of the active products with something like every word, best first (what can be bought, then how
 * well the words match: the title over variants, SKUs, vendor and collections over the description, then the
 * title), and how many matched (`total`, on every row, at most SEARCH_COUNT_CAP; `more` when there are more).
 * The query's words become the store's own words through privileged.search_word_ids_like (a trigram index,
 * the session's store only, migration 0045). One word: its store words' postings, read under RLS by
 * equalities in ranking order. Several: the products having all of them, through the word keys' GIN index
 * (privileged.product_ids_with_words, migration 0046). Then the page's products by primary key with their
 * price and availability as the catalogue reads them. One statement.
 */
export const searchProducts = statement("storefront.searchProducts", {
  row: {
    ...CARD_ROW,
    total: pg.int4(),
    more: pg.bool(),
  },
  examples: [[{ words: ["kurtha"], page: 1, pageSize: 24 }], [{ words: ["saree", "silk"], page: 2, pageSize: 24, minPrice: 100, maxPrice: 1000, inStockOnly: true, collection: "summer" }]],
  sql: (s: ProductSearch) =>
    sql`with m as materialized (
        select q.i, sw.id, sw.word, word_similarity(q.w, sw.word) as sim
          from unnest(${sql.param(s.words)}::text[]) with ordinality q (w, i)
          cross join lateral privileged.search_word_ids_like(q.w) x (id)
          join search_word sw on sw.store_id = ${CURRENT_STORE} and sw.id = x.id
      ), ${matchesOf(s)}
      select p.id, p.handle, p.title, min(v.price_minor)::bigint as from_price, ${CARD_FACTS}, ${CARD_IMAGE},
             least(n.n, ${SEARCH_COUNT_CAP})::int as total, n.n > ${SEARCH_COUNT_CAP} as more
        from page
        cross join n
        join product p on p.store_id = ${CURRENT_STORE} and p.id = page.id and p.status = 'active'
        join product_variant v on v.store_id = p.store_id and v.product_id = p.id
        cross join lateral (select ${sql.raw(AVAILABLE)} as units) a
       group by page.rank, n.n, p.id
       order by page.rank`,
});
