import { sql, type SQL } from "drizzle-orm";

/**
 * A store's running totals of its current state (migration 0031, docs/decisions/0017-store-tally.md): the
 * folded row of `store_tally` and the store's delta rows not folded yet (usually none), read together in
 * one snapshot, so that each change counts exactly once. A reader sums the columns it needs over these rows:
 * one index probe of each table, whatever the store's size.
 */
export const TALLY_COLUMNS = [
  "open_unpaid",
  "open_payment_pending",
  "open_to_ship",
  "open_partly_shipped",
  "units_on_hand",
  "units_available",
  "stock_value_minor",
] as const;

const columns = sql.raw(TALLY_COLUMNS.join(", "));

/** The store's tally rows, as a FROM item: `select sum(t.open_unpaid) … from ${tallyRows(store)} t`. */
export const tallyRows = (store: SQL): SQL =>
  sql`(select ${columns} from store_tally where store_id = ${store}
       union all
       select ${columns} from store_tally_delta where store_id = ${store})`;
