import type { SQL } from "drizzle-orm";
import { inventoryLevel, paymentAttempt, shopOrder } from "../../db/schema";
import { EXAMPLE, pg, statement } from "../../db/statement";
import { sql } from "../../db/steps";
import { returnDiscountUseSql } from "../discount-uses";
import { orderFactsSql, type OrderReading } from "../routines";

/** The statements of the end of a payment window (../expiry.ts). */

const { id: ID, store: STORE, at: AT } = EXAMPLE;

export interface SeenAttempt {
  id: string;
  attempt: number;
  status: string;
  provider: string;
  providerRef: string | null;
  amount: number;
}

/** Open orders holding no captured money whose window closed by `now`, the longest-waiting first. */
export const dueUnpaid = statement("orders.dueUnpaid", {
  row: {
    id: shopOrder.id,
    number: shopOrder.number,
    /** What the gateway's report of money is checked against, with each attempt's amount. */
    currency: shopOrder.currency,
    /** Every attempt as it was when read, with its gateway reference: what the gateway is asked about. */
    attempts: pg.json<SeenAttempt[]>(),
    /** The order's facts as read: the expiry goes ahead only if nothing moved since (no attempt, shipment or status). */
    facts: pg.jsonb<OrderReading["facts"]>(),
  },
  examples: [[STORE, AT, 10]],
  sql: (store: SQL, now: Date, limit: number) =>
    sql`select due.id, due.number, due.currency,
          coalesce((select json_agg(json_build_object('id', a.id, 'attempt', a.attempt, 'status', a.status, 'provider', a.provider,
                     'providerRef', a.provider_ref, 'amount', a.amount) order by a.id)
                    from payment_attempt a where a.store_id = due.store_id and a.order_id = due.id), '[]'::json) as attempts,
          (${orderFactsSql(store, sql`due.id`)}) as facts
        from shop_order due
        where due.store_id = ${store} and due.status = 'open' and due.payment_status in ('unpaid', 'pending', 'authorized') and due.expires_at <= ${now}
        order by due.expires_at, due.id limit ${limit}`,
});

/**
 * Writes `order.payment_reminder` once for each manual-transfer order still unpaid whose window closes
 * within `before` of `now` (and has not closed), marking each in the same statement. Answers how many.
 */
export const paymentReminders = statement("orders.paymentReminders", {
  row: { n: pg.int4() },
  examples: [[STORE, { now: AT, until: AT, before: "86400000 milliseconds", limit: 10 }]],
  sql: (store: SQL, w: { now: Date; until: Date; before: string; limit: number }) =>
    sql`with reminded as (
          update shop_order o set payment_reminded_at = ${w.now}
          where o.store_id = ${store} and o.id in (
              select id from shop_order where store_id = ${store} and status = 'open' and payment_method = 'manual_transfer'
                and payment_status in ('unpaid', 'pending') and payment_reminded_at is null and expires_at > ${w.now} and expires_at <= ${w.until}
                and expires_at <= ${w.now}::timestamptz + least(${w.before}::interval, (expires_at - placed_at) / 2)
              order by expires_at limit ${w.limit})
            and o.status = 'open' and o.payment_reminded_at is null
          returning o.id, o.number, o.expires_at, o.total - o.balance_amount as amount),
        events as (
          insert into outbox_event (store_id, kind, payload)
          select ${store}, 'order.payment_reminder', jsonb_build_object('orderId', id, 'number', number,
            'expiresAt', to_char(expires_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'amount', amount)
          from reminded)
      select count(*)::int as n from reminded`,
});

const ids = (orderIds: readonly string[]) => sql`${sql.param(orderIds)}::uuid[]`;

/** The payment attempts of these orders, locked in id order. */
export const lockAttemptsOfOrders = statement("orders.lockAttemptsOfOrders", {
  row: { id: paymentAttempt.id },
  examples: [[STORE, [ID]]],
  sql: (store: SQL, orderIds: readonly string[]) => sql`select id from payment_attempt where store_id = ${store} and order_id = any(${ids(orderIds)}) order by id for update`,
});

/** The stock rows these orders' parcel lines reserve from, locked in id order. */
export const lockStockOfOrders = statement("orders.lockStockOfOrders", {
  row: { id: inventoryLevel.id },
  examples: [[STORE, [ID]]],
  sql: (store: SQL, orderIds: readonly string[]) =>
    sql`select il.id from inventory_level il
        where il.store_id = ${store} and (il.variant_id, il.location_id) in (
          select ol.variant_id, f.location_id from fulfillment_order_line fl
          join fulfillment_order f on f.store_id = fl.store_id and f.id = fl.fulfillment_order_id
          join order_line ol on ol.store_id = fl.store_id and ol.id = fl.order_line_id
          where fl.store_id = ${store} and f.order_id = any(${ids(orderIds)}) and fl.reserved > 0)
        order by il.id for update`,
});

/**
 * One order's close, only if it is still open, unshipped, holds no captured money, is past its window and
 * its facts are `facts`: its reservations released, its discount's use given back, `expired_at` written,
 * `order.expired` and `inventory.released`. Answers whether it expired.
 */
export const expireOrderAsRead = statement("orders.expireOrderAsRead", {
  row: { expired: pg.bool() },
  examples: [[STORE, { orderId: ID, nothingCaptured: ["unpaid"], now: AT, facts: "{}" }]],
  sql: (store: SQL, o: { orderId: string; nothingCaptured: readonly string[]; now: Date; facts: string }) =>
    sql`with target as (
          select o.id, o.number from shop_order o
          where o.store_id = ${store} and o.id = ${o.orderId} and o.status = 'open' and o.payment_status = any(${sql.param(o.nothingCaptured)}::text[])
            and o.fulfillment_status = 'unfulfilled' and o.expires_at <= ${o.now}
            and (${orderFactsSql(store, sql`${o.orderId}::uuid`)}) = ${o.facts}::jsonb),
        held as (
          select il.id, il.variant_id, il.location_id, least(il.reserved, h.held) as quantity
          from (select ol.variant_id, f.location_id, sum(fl.reserved)::int as held
                from fulfillment_order_line fl
                join fulfillment_order f on f.store_id = fl.store_id and f.id = fl.fulfillment_order_id
                join order_line ol on ol.store_id = fl.store_id and ol.id = fl.order_line_id
                where fl.store_id = ${store} and f.order_id in (select id from target) and fl.reserved > 0
                group by ol.variant_id, f.location_id) h
          join inventory_level il on il.store_id = ${store} and il.variant_id = h.variant_id and il.location_id = h.location_id),
        levels as (
          update inventory_level il set reserved = il.reserved - held.quantity, updated_at = now()
          from held where il.store_id = ${store} and il.id = held.id and held.quantity > 0),
        lines as (
          update fulfillment_order_line fl set reserved = 0 from fulfillment_order f
          where f.store_id = fl.store_id and f.id = fl.fulfillment_order_id and fl.store_id = ${store} and f.order_id in (select id from target) and fl.reserved > 0),
        expired as (
          update shop_order o set expired_at = now(), updated_at = now() from target where o.store_id = ${store} and o.id = target.id
          returning o.id, target.number),
        returned as (${returnDiscountUseSql(store, sql`array(select id from expired)`)}),
        events as (
          insert into outbox_event (store_id, kind, payload)
          select ${store}, 'order.expired', jsonb_build_object('orderId', id, 'number', number) from expired
          union all
          select ${store}, 'inventory.released', jsonb_build_object('orderId', id, 'items',
            coalesce((select jsonb_agg(jsonb_build_object('variantId', variant_id, 'locationId', location_id, 'quantity', quantity) order by held.id)
                      from held where quantity > 0), '[]'::jsonb))
          from expired)
      select exists (select 1 from expired) as expired`,
});
