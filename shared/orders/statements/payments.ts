import type { SQL } from "drizzle-orm";
import { paymentAttempt, shopOrder } from "../../db/schema";
import { EXAMPLE, orNull, pg, statement } from "../../db/statement";
import { sql } from "../../db/steps";

/** The statements of payment attempts around the gateway (../payments.ts). */

const { id: ID, storeId: STORE_ID, store: STORE } = EXAMPLE;

/** The attempt a gateway reference names, as SQL a unit's statements take for its id (../routines.ts IdIn). */
export const attemptIdByRef = (store: SQL, provider: string, providerRef: string): SQL =>
  sql`(select id from payment_attempt where store_id = ${store} and provider = ${provider} and provider_ref = ${providerRef} limit 1)`;

/** The attempt a gateway reference belongs to, in this store (none when no attempt holds it). */
export const attemptOfRef = statement("orders.attemptOfRef", {
  row: { id: paymentAttempt.id, order_id: paymentAttempt.orderId, amount: pg.text() },
  examples: [[STORE, "local", "lp1.ref"]],
  sql: (store: SQL, provider: string, providerRef: string) =>
    sql`select id, order_id, amount::text from payment_attempt where store_id = ${store} and id = ${attemptIdByRef(store, provider, providerRef)}`,
});

/** An attempt made for the balance and not sent to the gateway yet (used again while it is what is due). */
export interface FreshAttempt {
  id: string;
  attempt: number;
  amount: number;
  provider: string;
}

/**
 * What a new attempt needs of its order, the order row locked: its status, method, total and balance, the
 * money captured and whether any is authorized, the last attempt's number and the unsent balance attempt.
 */
export const orderForNewAttempt = statement("orders.orderForNewAttempt", {
  row: {
    status: shopOrder.status,
    payment_method: shopOrder.paymentMethod,
    total: pg.text(),
    balance: pg.text(),
    balance_open: pg.bool(),
    balance_expired: pg.bool(),
    captured: pg.text(),
    authorized: pg.bool(),
    last: pg.int4(),
    fresh: orNull(pg.json<FreshAttempt>()),
  },
  examples: [[STORE_ID, ID]],
  sql: (store: SQL, orderId: string) =>
    sql`select o.status, o.payment_method, o.total::text, o.balance_amount::text as balance,
          (o.balance_requested_at is not null and o.balance_expired_at is null) as balance_open, o.balance_expired_at is not null as balance_expired,
          coalesce((select sum(a.amount) from payment_attempt a where a.store_id = o.store_id and a.order_id = o.id and a.status in ('captured', 'refunded')), 0)::text as captured,
          exists (select 1 from payment_attempt a where a.store_id = o.store_id and a.order_id = o.id and a.status = 'authorized') as authorized,
          coalesce((select max(attempt) from payment_attempt a where a.store_id = o.store_id and a.order_id = o.id), 0) as last,
          (select json_build_object('id', a.id, 'attempt', a.attempt, 'amount', a.amount, 'provider', a.provider) from payment_attempt a
           where a.store_id = o.store_id and a.order_id = o.id and a.status = 'created' and a.provider_ref is null order by a.attempt desc limit 1) as fresh
        from shop_order o where o.store_id = ${store} and o.id = ${orderId} for update of o`,
});
