import { sql, type SQL } from "drizzle-orm";
import { COUNT_CAP } from "./paging";

/**
 * Word-prefix search over the token tables of migration 0030 (docs/decisions/0016-search-under-rls.md):
 * a query's word matches a row when it begins one of the row's words. The tables hold each searched
 * field's words, lower-cased by the database, with the row's place in its list; a word is a run of
 * characters that are not ASCII punctuation, space or control characters, the rule the migration's
 * triggers split with.
 *
 * A search's page and count are each one statement that reads the tokens of the query's longest word (its
 * likeliest rarest) first, as an index range under RLS:
 *
 * - a word found in fewer than FREQUENT_TOKENS tokens of the store: its tokens are the matching rows, with
 *   their place in the list; grouped per row, sorted, and only the page's rows read (cost: its matches);
 * - a more frequent word ("com", "c"): the list is walked in order and each row's own tokens probed, which
 *   stops at the page, as common words are found within a few rows.
 *
 * The count reads at most FREQUENT_TOKENS tokens: when they hold more than COUNT_CAP rows the count is
 * capped, when they are all of the word's the count is exact; only a word with that many tokens on fewer
 * rows (rows with several words beginning alike) is counted from all its tokens.
 */

/** At most this many of a query's words are matched (a longer query finds what its first words find). */
export const MAX_SEARCH_WORDS = 6;

/** Above this many tokens a word is common: its rows are found by walking the list (module comment). */
export const FREQUENT_TOKENS = 5000;

const SEPARATORS = /[^0-9A-Za-z\u0080-\u{10FFFF}]+/u;

/** A query's words, split as migration 0030 splits the searched fields (case is the database's lower()). */
export function searchWords(query: string): string[] {
  return query.split(SEPARATORS).filter((w) => w !== "").slice(0, MAX_SEARCH_WORDS);
}

/**
 * `token` begins with the word, lower-cased: an index range on the token tables' "C" collated column
 * (text_ge and text_lt are leakproof, so the range is an index condition under RLS; U+10FFFF is above every
 * character a token may continue with).
 */
export function beginsWith(token: SQL, word: string): SQL {
  return sql`(${token} >= lower(${word}) and ${token} < lower(${word}) || chr(1114111))`;
}

/** What differs between the searched lists (SQL text of the module's own, no input). */
interface Searched {
  /** The token table and its column naming the row. */
  tokens: SQL;
  ref: SQL;
  /** Which of a row's tokens (alias `t`) the caller may match. */
  allowed: (t: SQL) => SQL;
  /** Whether the caller may search at all (no row's words otherwise): a one-time check before any walk. */
  gate: SQL;
  /** The row table (alias `r`). */
  rows: SQL;
  /** The list's columns, as the tokens carry them (alias `t`, grouped by `group`) and as the rows do (`r`). */
  fromToken: SQL;
  group: SQL;
  fromRow: SQL;
  /** The columns a page's rows are picked by, and the list's order, on the matching rows `m`. */
  pick: SQL;
  order: SQL;
}

const ORDERS = (contact: SQL<boolean>): Searched => ({
  tokens: sql.raw("order_search_token"),
  ref: sql.raw("order_id"),
  allowed: () => contact,
  gate: contact,
  rows: sql.raw("shop_order"),
  fromToken: sql.raw("t.store_id, t.number, t.placed_at"),
  group: sql.raw("t.store_id, t.number, t.placed_at"),
  fromRow: sql.raw("r.store_id, r.number, r.placed_at"),
  pick: sql.raw("m.store_id, m.number"),
  order: sql.raw("m.placed_at desc, m.number desc"),
});

const CUSTOMERS = (contact: SQL<boolean>): Searched => ({
  tokens: sql.raw("customer_search_token"),
  ref: sql.raw("customer_id"),
  allowed: (t) => sql`(not ${t}.contact or ${contact})`,
  gate: sql`true`,
  rows: sql.raw("customer"),
  fromToken: sql.raw("t.customer_id as id, t.created_at"),
  group: sql.raw("t.customer_id, t.created_at"),
  fromRow: sql.raw("r.id, r.created_at"),
  pick: sql.raw("m.id"),
  order: sql.raw("m.created_at desc, m.id desc"),
});

/** The longest word first: its tokens are read first (a long word is rarely a common one). */
const byLength = (words: readonly [string, ...string[]]): [string, string[]] => {
  const sorted = [...words].sort((a, b) => b.length - a.length);
  return [sorted[0]!, sorted.slice(1)];
};

/**
 * Row `id` (a column of the caller's) has, among its allowed tokens, one beginning with `word`: a probe of
 * that row's own tokens (the `(store_id, row, token)` index) for each row asked about. `offset 0` keeps it
 * a probe: as a semi-join, a planner without fresh statistics for the tokens (a table just loaded) may read
 * the word's whole range for every row instead (measured: 0.9 s for 5,000 rows, against 15 ms).
 */
const hasWord = (s: Searched, store: SQL, id: SQL, word: string): SQL =>
  sql`exists (select 1 from ${s.tokens} w where w.store_id = ${store} and w.${s.ref} = ${id} and ${beginsWith(sql`w.token`, word)} and ${s.allowed(sql`w`)} offset 0)`;

/** The driving word's allowed tokens (alias `t`), each further word checked on the token's row. */
const driverTokens = (s: Searched, store: SQL, driver: string, rest: string[]): SQL =>
  sql`from ${s.tokens} t where t.store_id = ${store} and ${beginsWith(sql`t.token`, driver)} and ${s.allowed(sql`t`)}${sql.join(
    rest.map((w) => sql` and ${hasWord(s, store, sql`t.${s.ref}`, w)}`),
    sql``,
  )}`;

/** The matching rows from the tokens alone, one per row, with the list's columns. */
const fromTokens = (s: Searched, store: SQL, driver: string, rest: string[]): SQL =>
  sql`select ${s.fromToken} ${driverTokens(s, store, driver, rest)} group by ${s.group}`;

/** The matching rows by walking the row table in its list order, each row's tokens probed. */
const byWalking = (s: Searched, store: SQL, driver: string, rest: string[]): SQL =>
  sql`select ${s.fromRow} from ${s.rows} r where r.store_id = ${store} and ${s.gate}${sql.join(
    [driver, ...rest].map((w) => sql` and ${hasWord(s, store, sql`r.id`, w)}`),
    sql``,
  )}`;

/** Whether the driving word is common in the store (more than FREQUENT_TOKENS of its tokens). */
const common = (s: Searched, store: SQL, driver: string): SQL =>
  sql`exists (select 1 from ${s.tokens} t where t.store_id = ${store} and ${beginsWith(sql`t.token`, driver)} offset ${sql.raw(String(FREQUENT_TOKENS - 1))})`;

/** A page of the matching rows (the columns of `pick`), in the list's order: a subquery. */
function searchPage(s: Searched, store: SQL, words: readonly [string, ...string[]], page: { limit: number; offset: number }): SQL {
  const [driver, rest] = byLength(words);
  const slice = sql`order by ${s.order} limit ${page.limit} offset ${page.offset}`;
  return sql`(with word as materialized (select ${common(s, store, driver)} as common)
    (select ${s.pick} from (${fromTokens(s, store, driver, rest)}) m where not (select common from word) ${slice})
    union all
    (select ${s.pick} from (${byWalking(s, store, driver, rest)}) m where (select common from word) ${slice}))`;
}

/** How many rows match, up to COUNT_CAP + 1: one statement answering `n`. */
function searchCount(s: Searched, store: SQL, words: readonly [string, ...string[]]): SQL {
  const [driver, rest] = byLength(words);
  const cap = sql.raw(String(COUNT_CAP + 1));
  return sql`select (case when f.tokens < ${sql.raw(String(FREQUENT_TOKENS))} or f.found > ${sql.raw(String(COUNT_CAP))} then least(f.found, ${cap})
                    else (select count(*) from (${fromTokens(s, store, driver, rest)} limit ${cap}) x) end)::int as n
    from (select count(*) as tokens, count(distinct t.${s.ref}) as found
            from (select t.${s.ref} ${driverTokens(s, store, driver, rest)} limit ${sql.raw(String(FREQUENT_TOKENS))}) t) f`;
}

/** orders.list's search by words: the page's (store_id, number) as a subquery, and the count. */
export function orderSearch(store: SQL, contact: SQL<boolean>, words: readonly [string, ...string[]], page: { limit: number; offset: number }) {
  const s = ORDERS(contact);
  return { page: searchPage(s, store, words, page), count: searchCount(s, store, words) };
}

/** customers.list's search by words: the page's ids as a subquery, and the count. */
export function customerSearch(store: SQL, contact: SQL<boolean>, words: readonly [string, ...string[]], page: { limit: number; offset: number }) {
  const s = CUSTOMERS(contact);
  return { page: searchPage(s, store, words, page), count: searchCount(s, store, words) };
}

/**
 * The order (`id`, a column of the caller's row) has an email word beginning with `word`: orders.list's
 * search beside other filters, checked on each order the other filters find.
 */
export function orderHasWord(store: SQL, contact: SQL<boolean>, id: SQL, word: string): SQL {
  return hasWord(ORDERS(contact), store, id, word);
}
