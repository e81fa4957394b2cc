import type { SQL } from "drizzle-orm";
import { cartLine, shopOrder } from "../../db/schema";
import { EXAMPLE, orNull, pg, statement } from "../../db/statement";
import { sql } from "../../db/steps";

/** The statements of the pre-order balance work (../preorder-units.ts, ../preorders.ts). */

const { id: ID, store: STORE, at: AT } = EXAMPLE;

export interface BalanceLine {
  flId: string;
  levelId: string | null;
  variantId: string | null;
  locationId: string | null;
  /** The line's reservation as read. */
  reserved: number;
  /** Units this run may take (a waiting order) or must give back (a ripe one). */
  wanted: number;
  onHand: number;
  levelReserved: number;
}

/** Which orders: the store's work list (the job's), or one order in one role (a direct call). */
export type BalanceWhich = { expireBefore: Date; limit: number } | { orderId: string; ripe: boolean; expireBefore: Date };

/** An order whose balance is still to be asked for or paid (deposit in, balance set, not given up). */
export const openBalance = sql`o.status = 'open' and o.payment_status = 'partially_paid' and o.balance_amount > 0 and o.balance_expired_at is null`;

function workSql(store: SQL, which: BalanceWhich): SQL {
  if ("orderId" in which) {
    const role = which.ripe ? sql`o.balance_requested_at <= ${which.expireBefore}` : sql`o.balance_requested_at is null`;
    return sql`select o.id, ${which.ripe}::boolean as ripe, o.placed_at from shop_order o where o.store_id = ${store} and o.id = ${which.orderId} and ${openBalance} and ${role}`;
  }
  // Waiting orders whose backordered units have stock at their parcel's location now, and ripe ones.
  return sql`select o.id, o.balance_requested_at is not null as ripe, o.placed_at from shop_order o
     where o.store_id = ${store} and ${openBalance} and (o.balance_requested_at <= ${which.expireBefore} or (o.balance_requested_at is null and exists (
       select 1 from fulfillment_order f
       join fulfillment_order_line fl on fl.store_id = f.store_id and fl.fulfillment_order_id = f.id and fl.reserved < fl.quantity
       join order_line ol on ol.store_id = fl.store_id and ol.id = fl.order_line_id
       join inventory_level il on il.store_id = f.store_id and il.variant_id = ol.variant_id and il.location_id = f.location_id
         and il.on_hand > il.reserved
       where f.store_id = o.store_id and f.order_id = o.id)))
     order by o.placed_at, o.id limit ${which.limit}`;
}

/** The orders with balance work, oldest first, each with the parcel lines it would reserve or give back. */
export const balanceWork = statement("orders.balanceWork", {
  row: {
    id: shopOrder.id,
    /** Its balance was requested long enough ago to give up (else it waits for stock). */
    ripe: pg.bool(),
    number: shopOrder.number,
    paymentMethod: shopOrder.paymentMethod,
    total: pg.float8(),
    captured: pg.float8(),
    provider: orNull(pg.text()),
    /** When its balance was requested (epoch seconds, as text), as the change checks it again. */
    requestedAt: orNull(pg.text()),
    lines: pg.json<BalanceLine[]>(),
  },
  examples: [
    [STORE, { expireBefore: AT, limit: 10 }],
    [STORE, { orderId: ID, ripe: true, expireBefore: AT }],
    [STORE, { orderId: ID, ripe: false, expireBefore: AT }],
  ],
  sql: (store: SQL, which: BalanceWhich) =>
    sql`with work as (${workSql(store, which)})
        select w.id, w.ripe, o.number, o.payment_method as "paymentMethod", o.total::float8 as total,
          (select coalesce(sum(a.amount), 0)::float8 from payment_attempt a where a.store_id = o.store_id and a.order_id = o.id
             and a.status in ('captured', 'refunded')) as captured,
          (select a.provider from payment_attempt a where a.store_id = o.store_id and a.order_id = o.id order by a.attempt limit 1) as provider,
          extract(epoch from o.balance_requested_at)::text as "requestedAt",
          coalesce((select json_agg(json_build_object('flId', fl.id, 'levelId', il.id, 'variantId', ol.variant_id, 'locationId', f.location_id,
                      'reserved', fl.reserved, 'wanted', case when w.ripe then fl.reserved - (fl.quantity - fl.backordered) else fl.quantity - fl.reserved end,
                      'onHand', coalesce(il.on_hand, 0), 'levelReserved', coalesce(il.reserved, 0)) order by fl.id)
                    from fulfillment_order_line fl
                    join fulfillment_order f on f.store_id = fl.store_id and f.id = fl.fulfillment_order_id
                    join order_line ol on ol.store_id = fl.store_id and ol.id = fl.order_line_id
                    left join inventory_level il on il.store_id = fl.store_id and il.variant_id = ol.variant_id and il.location_id = f.location_id
                    where fl.store_id = o.store_id and f.order_id = o.id
                      and case when w.ripe then fl.reserved > fl.quantity - fl.backordered else fl.reserved < fl.quantity end), '[]'::json) as lines
        from work w join shop_order o on o.store_id = ${store} and o.id = w.id
        order by w.placed_at, w.id`,
});

const json = (value: unknown) => sql`${JSON.stringify(value)}::jsonb`;

/** Moves `delta` units per parcel line into (positive) or out of (negative) its reservation and its stock row's. */
export const shiftReservations = statement("orders.shiftReservations", {
  row: {},
  examples: [[STORE, [{ fl: ID, level: ID, delta: 1 }]]],
  sql: (store: SQL, moves: readonly { fl: string; level: string | null; delta: number }[]) =>
    sql`with x as (select * from jsonb_to_recordset(${json(moves)}) as x(fl uuid, level uuid, delta int)),
        levels as (update inventory_level il set reserved = greatest(il.reserved + y.delta, 0), updated_at = now()
                   from (select level, sum(delta)::int as delta from x group by level) y where il.store_id = ${store} and il.id = y.level)
        update fulfillment_order_line fl set reserved = fl.reserved + x.delta from x where fl.store_id = ${store} and fl.id = x.fl`,
});

/** The balance's payment attempt (the order's next), and the order marked as asked. */
export const requestBalance = statement("orders.requestBalance", {
  row: {},
  examples: [[STORE, ID, { attemptId: ID, provider: "manual_transfer", amount: 100 }, AT]],
  sql: (store: SQL, orderId: string, request: { attemptId: string; provider: string; amount: number }, now: Date) =>
    sql`with attempt as (
          insert into payment_attempt (id, store_id, order_id, attempt, idempotency_key, provider, amount)
          select ${request.attemptId}::uuid, ${store}, ${orderId}::uuid, n, ${orderId}::text || ':' || n, ${request.provider}, ${request.amount}::bigint
          from (select coalesce(max(attempt), 0) + 1 as n from payment_attempt where store_id = ${store} and order_id = ${orderId}) a)
        update shop_order set balance_requested_at = ${now}, updated_at = now() where store_id = ${store} and id = ${orderId}`,
});

/**
 * Writes `order.balance_reminder` once for each of the store's balances requested between `remindBefore`
 * and `expireAfter` and still unpaid, marking each reminded in the same statement. Answers how many.
 */
export const remindBalances = statement("orders.remindBalances", {
  row: { n: pg.int4() },
  examples: [[STORE, { now: AT, remindBefore: AT, expireAfter: AT, limit: 10, expiresAfterMs: 1 }]],
  sql: (store: SQL, w: { now: Date; remindBefore: Date; expireAfter: Date; limit: number; expiresAfterMs: number }) =>
    sql`with reminded as (
          update shop_order o set balance_reminded_at = ${w.now}
          where o.store_id = ${store} and o.id in (
              select id from shop_order where store_id = ${store} and status = 'open' and payment_status = 'partially_paid' and balance_amount > 0
                and balance_expired_at is null and balance_reminded_at is null
                and balance_requested_at <= ${w.remindBefore} and balance_requested_at > ${w.expireAfter}
              order by balance_requested_at limit ${w.limit})
            and o.status = 'open' and o.payment_status = 'partially_paid' and o.balance_reminded_at is null and o.balance_expired_at is null
          returning o.id, o.number, o.balance_requested_at,
            o.total - (select coalesce(sum(a.amount), 0) from payment_attempt a where a.store_id = o.store_id and a.order_id = o.id
                        and a.status in ('captured', 'refunded')) as amount),
        events as (
          insert into outbox_event (store_id, kind, payload)
          select ${store}, 'order.balance_reminder', jsonb_build_object('orderId', id, 'number', number, 'amount', amount,
            'dueBy', to_char((balance_requested_at + ${w.expiresAfterMs} * interval '1 millisecond') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
          from reminded)
      select count(*)::int as n from reminded`,
});

/** The pre-order variants in the cart with this token's hash (not yet an order). */
export const cartPreorderVariants = statement("orders.cartPreorderVariants", {
  row: { variant_id: cartLine.variantId },
  examples: [[STORE, "0".repeat(64)]],
  sql: (store: SQL, tokenHash: string) =>
    sql`select cl.variant_id from cart c
        join cart_line cl on cl.store_id = c.store_id and cl.cart_id = c.id
        join product_variant v on v.store_id = cl.store_id and v.id = cl.variant_id
        where c.store_id = ${store} and c.token_hash = ${tokenHash} and c.converted_order_id is null and v.preorder`,
});
