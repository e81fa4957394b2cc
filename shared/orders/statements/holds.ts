import type { SQL } from "drizzle-orm";
import { EXAMPLE, pg, statement } from "../../db/statement";
import { sql } from "../../db/steps";

/** The statements that bound unpaid holds (../holds.ts). */

const { store: STORE, at: AT } = EXAMPLE;

/** Open orders holding stock unpaid (nothing captured, the window still open): shop_order_holds_*_idx's condition. */
const holding = (now: Date) => sql`status = 'open' and payment_status in ('unpaid', 'pending', 'authorized') and expires_at > ${now}`;

/** "in about 25 minutes" / "in about 3 hours", from SQL's interval until the first hold releases. */
const releaseWords = (first: SQL) =>
  sql`case when ${first} - now() < interval '120 minutes'
        then 'in about ' || greatest(1, ceil(extract(epoch from ${first} - now()) / 60))::int || ' minutes'
        else 'in about ' || ceil(extract(epoch from ${first} - now()) / 3600)::int || ' hours' end`;

/** Transaction locks on each key (a buyer's email, their network), in the order given. */
export const lockHoldKeys = statement("orders.lockHoldKeys", {
  row: { n: pg.int8() },
  examples: [[["hold:x:email:a@example.test"]]],
  sql: (keys: readonly string[]) => sql`select count(pg_advisory_xact_lock(hashtextextended(k, 0))) as n from unnest(${sql.param(keys)}::text[]) as k`,
});

/** Stops the unit with 409 `unpaid_orders_limit` when `who` already holds `limit` unpaid orders. */
export const holdLimit = statement("orders.holdLimit", {
  row: { ok: pg.bool() },
  examples: [[STORE, { who: sql`email_lower = ${"a@example.test"}`, limit: 3, now: AT, words: "This email address has 3", issue: { path: "email", message: "has 3" } }]],
  sql: (store: SQL, c: { who: SQL; limit: number; now: Date; words: string; issue: { path: string; message: string } }) =>
    sql`select unit.ensure(h.n < ${c.limit},
          '409',
          ${c.words} || ${releaseWords(sql`h.first`)} || '.',
          jsonb_build_object('reason', 'unpaid_orders_limit', 'limit', ${c.limit}::int, 'releasesAt', h.first,
            'issues', jsonb_build_array(jsonb_build_object('path', ${c.issue.path}::text, 'message', ${c.issue.message}::text)))) as ok
        from (select count(*)::int as n, min(expires_at) as first from shop_order where store_id = ${store} and ${c.who} and ${holding(c.now)}) h`,
});
