import { sql, type SQL } from "drizzle-orm";
import { COUNT_CAP } from "./paging";

/**
 * Word-prefix search over the token tables of migration 0030 (docs/decisions/0016-search-under-rls.md):
 * a query's word matches a row when it begins one of the row's words. The tables hold every prefix (up to
 * MAX_PREFIX characters) of each searched field's words, lower-cased by the database, with the row's place
 * in its list; a word is a run of characters that are not ASCII punctuation, space or control characters,
 * the rule the migration's triggers split with.
 *
 * A query word is an equality on the token (leakproof: an index condition under RLS), and the index
 * `(store_id, token, <the list's order>)` answers its rows already in the list's order: a page reads its
 * rows and stops, a count reads at most COUNT_CAP + 1 entries, for a rare word and a common one alike. The
 * query's longest word leads (a long word is rarely a common one); each further word is a probe of the
 * leading word's row among its own tokens, by primary key.
 */

/** At most this many of a query's words are matched (a longer query finds what its first words find). */
export const MAX_SEARCH_WORDS = 6;

/** Prefixes are kept up to this length: a longer query word finds the rows with its first 32 characters. */
export const MAX_PREFIX = 32;

const SEPARATORS = /[^0-9A-Za-z\u0080-\u{10FFFF}]+/u;

/** A query's words, split as migration 0030 splits the searched fields (case is the database's lower()). */
export function searchWords(query: string): string[] {
  return query.split(SEPARATORS).filter((w) => w !== "").slice(0, MAX_SEARCH_WORDS);
}

/** The token a query word is: lower-cased by the database, as the tokens were, and cut to MAX_PREFIX. */
const tokenOf = (word: string): SQL => sql`left(lower(${word}), ${sql.raw(String(MAX_PREFIX))})`;

/** The longest word first, then the others. */
const byLength = (words: readonly [string, ...string[]]): [string, string[]] => {
  const sorted = [...words].sort((a, b) => b.length - a.length);
  return [sorted[0]!, sorted.slice(1)];
};

/** What differs between the searched lists (SQL text of the module's own, no input). */
interface Searched {
  /** The token table. */
  tokens: SQL;
  /** The columns that name a row and place it in its list (alias-free), as the tokens carry them. */
  place: string[];
  /** Which tokens (alias given) the caller may match. */
  allowed: (t: SQL) => SQL;
  /** A matching row's columns, from the tokens `t`; the ones a page's rows are picked by, and the list's order, on them (`m`). */
  columns: SQL;
  pick: SQL;
  order: SQL;
}

const ORDERS = (contact: SQL<boolean>): Searched => ({
  tokens: sql.raw("order_search_token"),
  place: ["placed_at", "number"],
  allowed: () => contact,
  columns: sql.raw("t.store_id, t.number, t.placed_at"),
  pick: sql.raw("m.store_id, m.number"),
  order: sql.raw("m.placed_at desc, m.number desc"),
});

const CUSTOMERS = (contact: SQL<boolean>): Searched => ({
  tokens: sql.raw("customer_search_token"),
  place: ["created_at", "customer_id"],
  allowed: (t) => sql`(not ${t}.contact or ${contact})`,
  columns: sql.raw("t.customer_id, t.created_at"),
  pick: sql.raw("m.customer_id"),
  order: sql.raw("m.created_at desc, m.customer_id desc"),
});

/**
 * The row placed at `at` (its list columns, in `place` order) has an allowed token equal to `word`'s: a
 * primary-key probe. `offset 0` keeps it a probe: as a semi-join, a planner without fresh statistics for a
 * just-loaded token table may read the word's whole range for every row instead.
 */
const hasWord = (s: Searched, store: SQL, at: SQL[], word: string): SQL =>
  sql`exists (select 1 from ${s.tokens} w where w.store_id = ${store} and w.token = ${tokenOf(word)}${sql.join(
    s.place.map((c, i) => sql` and w.${sql.raw(c)} = ${at[i]!}`),
    sql``,
  )} and ${s.allowed(sql`w`)} offset 0)`;

/** The leading word's allowed tokens (alias `t`), each further word probed on the token's row. */
function matching(s: Searched, store: SQL, words: readonly [string, ...string[]]): SQL {
  const [driver, rest] = byLength(words);
  const at = s.place.map((c) => sql.raw(`t.${c}`));
  return sql`from ${s.tokens} t where t.store_id = ${store} and t.token = ${tokenOf(driver)} and ${s.allowed(sql`t`)}${sql.join(
    rest.map((w) => sql` and ${hasWord(s, store, at, w)}`),
    sql``,
  )}`;
}

/**
 * A search's page (the columns of `pick`, as a subquery) and its count (one statement answering `n`).
 * `also`: more matching rows (a select of the same columns), e.g. the order whose number the query is.
 */
function search(s: Searched, store: SQL, words: readonly [string, ...string[]], page: { limit: number; offset: number }, also?: SQL) {
  const found = sql`select ${s.columns} ${matching(s, store, words)}`;
  const rows = also ? sql`${found} union ${also}` : found;
  return {
    page: sql`(select ${s.pick} from (${rows}) m order by ${s.order} limit ${page.limit} offset ${page.offset})`,
    count: sql`select count(*)::int as n from (select 1 from (${rows}) m limit ${sql.raw(String(COUNT_CAP + 1))}) matching`,
  };
}

/**
 * orders.list's search by words: the page's (store_id, number) as a subquery, and the count. A query that
 * is a number finds that order too (whatever the caller may see of emails).
 */
export const orderSearch = (store: SQL, contact: SQL<boolean>, words: readonly [string, ...string[]], page: { limit: number; offset: number }, number?: number) =>
  search(
    ORDERS(contact), store, words, page,
    number === undefined ? undefined : sql`select o.store_id, o.number, o.placed_at from shop_order o where o.store_id = ${store} and o.number = ${number}`,
  );

/** customers.list's search by words: the page's ids as a subquery, and the count. */
export const customerSearch = (store: SQL, contact: SQL<boolean>, words: readonly [string, ...string[]], page: { limit: number; offset: number }) =>
  search(CUSTOMERS(contact), store, words, page);

/**
 * The order placed at `placedAt` with `number` (columns of the caller's row) has an email word beginning with
 * `word`: orders.list's search beside other filters, checked on each order the other filters find.
 */
export function orderHasWord(store: SQL, contact: SQL<boolean>, placedAt: SQL, number: SQL, word: string): SQL {
  return hasWord(ORDERS(contact), store, [placedAt, number], word);
}
