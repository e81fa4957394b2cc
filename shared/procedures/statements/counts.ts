import type { SQL } from "drizzle-orm";
import { EXAMPLE, pg, statement } from "../../db/statement";
import { sql } from "../../db/steps";

/**
 * Above this many matching rows a list's total is not counted: `total` is COUNT_CAP and `totalCapped` is
 * true, shown as "200+" (docs/database.md "Scale"). Counting stops there, so a list costs about the same
 * for a store with a million orders as for one with a hundred: the count reads at most COUNT_CAP + 1 index
 * entries. 200 is ten pages of the default size, as far as a person pages; a script pages on while pages
 * come back full (`hasNextPage`). Measured in the big store of `npm run bench:scale`: at 10,000 the count
 * cost ~0.8 ms (more than the page), at 1,000 ~0.2 ms (a list 1.4-1.5x the demo store's), at 200 a list is
 * within 1.3x of the demo store's.
 */
export const COUNT_CAP = 200;

const CAP_LIMIT = sql.raw(String(COUNT_CAP + 1));

/** A capped count of `matching`, a query with one row per matching row (../paging.ts). */
export const cappedCount = statement("procedures.cappedCount", {
  row: { n: pg.int4() },
  examples: [[sql`select 1 from campaign k where k.store_id = ${EXAMPLE.store}`]],
  sql: (matching: SQL) => sql`select count(*)::int as n from (${matching} limit ${CAP_LIMIT}) matching`,
});
