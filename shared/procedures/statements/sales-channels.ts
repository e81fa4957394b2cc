import type { SQL } from "drizzle-orm";
import { shopOrder, ucpCheckoutSession } from "../../db/schema";
import { EXAMPLE, orNull, pg, statement } from "../../db/statement";
import { sql } from "../../db/steps";
import { AGENT_HOST } from "../../orders/statements/order-view";

/** Settings → Sales channels' statement in SQL (decision 0026): the agents that bought, each with its newest orders. */

/**
 * The agent platforms (a checkout session's `UCP-Agent` profile URL) whose sessions placed orders, the most
 * recent buyer first, at most `agents` of them; for each, its `orders` newest orders (one row per order) and
 * how many it placed in all. A window per agent by a lateral join, on the sessions' index of placed orders.
 */
export const agentsThatBought = statement("procedures.agentsThatBought", {
  row: {
    profileUrl: ucpCheckoutSession.agentProfile,
    host: orNull(pg.text()),
    orderCount: pg.int4(),
    orderId: shopOrder.id,
    number: shopOrder.number,
    placedAt: shopOrder.placedAt,
    total: shopOrder.total,
    currency: shopOrder.currency,
    paymentStatus: shopOrder.paymentStatus,
    status: shopOrder.status,
  },
  examples: [[EXAMPLE.store, 20, 10]],
  sql: (store: SQL, agents: number, orders: number) =>
    sql`with agents as (
       select s.agent_profile, count(*)::int as n, max(o.placed_at) as last_at
       from ucp_checkout_session s
       join shop_order o on o.store_id = s.store_id and o.id = s.order_id
       where s.store_id = ${store} and s.order_id is not null
       group by s.agent_profile
       order by last_at desc, s.agent_profile
       limit ${agents})
     select a.agent_profile as "profileUrl", ${AGENT_HOST(sql`a.agent_profile`)} as host, a.n as "orderCount", r.id as "orderId", r.number, r.placed_at as "placedAt",
       r.total, r.currency, r.payment_status as "paymentStatus", r.status
     from agents a
     cross join lateral (
       select o.id, o.number, o.placed_at, o.total, o.currency, o.payment_status, o.status
       from ucp_checkout_session s
       join shop_order o on o.store_id = s.store_id and o.id = s.order_id
       where s.store_id = ${store} and s.agent_profile = a.agent_profile and s.order_id is not null
       order by o.placed_at desc, o.id desc
       limit ${orders}) r
     order by a.last_at desc, a.agent_profile, r.placed_at desc, r.id desc`,
});
