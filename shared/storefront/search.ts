import { constant, plan, type Plan } from "../db/plan";
import type { Q } from "../db/steps";
import { cardOf, type ProductCard } from "./catalog";
import { searchProducts } from "./statements";

/**
 * Storefront product search (issue 23 item 5; docs/decisions/0035-storefront-search.md): a shopper's words,
 * in any order, each like something of an active product (its title, variants, SKUs, vendor, published
 * collections, description),
 * typos forgiven by trigram word similarity against the store's own words (migrations 0043, 0045, 0046); ranked with
 * what can be bought first, then by how well the words match (the title over the rest); filtered by price,
 * availability and collection. One statement: the page's rows and how many matched (up to 1,000), in the
 * unit's one round trip.
 */

/** At most this many of a query's words are matched (a longer query finds what its first words find). */
export const MAX_SEARCH_WORDS = 6;
/** A word longer than this is cut (no product word is longer; the trigrams of a longer one match nothing more). */
const MAX_WORD = 40;

const SEPARATORS = /[^0-9A-Za-z\u0080-\u{10FFFF}]+/u;

/**
 * A query's words, lower-cased, as pg_trgm splits text into words (runs of letters and digits), the longest
 * first (the first six kept). Empty when nothing is a word
 * (punctuation only), and such a query matches nothing without asking the database.
 */
export function searchWords(text: string): string[] {
  const words = text
    .toLowerCase()
    .split(SEPARATORS)
    .filter((w) => w !== "")
    .map((w) => [...w].slice(0, MAX_WORD).join(""));
  return [...new Set(words)].slice(0, MAX_SEARCH_WORDS).sort((a, b) => b.length - a.length);
}

export interface SearchQuery {
  text: string;
  page: number;
  pageSize: number;
  /** Lowest variant price bounds, in minor units. */
  minPrice?: number | undefined;
  maxPrice?: number | undefined;
  inStockOnly?: boolean | undefined;
  /** A published collection's handle. */
  collection?: string | undefined;
}

export interface SearchResult {
  items: ProductCard[];
  /** How many products matched (the filters applied), at most SEARCH_COUNT_CAP (1,000). */
  total: number;
  /** More than `total` matched: say "1,000+". */
  more: boolean;
}

/** A page of the products a shopper's query finds, most relevant first, and how many it found. */
export function searchPlan(q: Q, query: SearchQuery): Plan<SearchResult> {
  const words = searchWords(query.text);
  if (words.length === 0) return constant({ items: [], total: 0, more: false });
  return plan(
    [
      searchProducts(q, { ...query, words }),
    ] as const,
    ([rows]) => ({
      items: rows.map(cardOf),
      total: rows[0]?.total ?? 0,
      more: rows[0]?.more ?? false,
    }),
  );
}
