import type { SQL } from "drizzle-orm";
import { markEmits } from "../db/changes";
import { plan, type Plan } from "../db/plan";
import { raw, sql, type Q, type Step } from "../db/steps";
import { changeOn, readOn, type StoreTx } from "../db/with-store";
import { NOTHING_CAPTURED } from "./actions";
import { returnDiscountUseSql } from "./discount-uses";
import { orderFactsSql, recomputeWhenAsRead, type OrderReading } from "./routines";

/**
 * The end of a payment window (docs/order-status.md, "Payment windows"): the orders the expiry job
 * looks at, the reminder a manual-transfer order gets the day before, and the expiry itself, as plans a
 * store's unit sends (the functions taking a transaction run the same plans on one that is open).
 */

/**
 * A manual-transfer order is reminded this long before its window closes, or halfway through a window
 * shorter than twice that (a store's hold can be as short as an hour: the reminder never comes first).
 */
export const PAYMENT_REMINDER_BEFORE_MS = 24 * 3_600_000;

export interface SeenAttempt {
  id: string;
  attempt: number;
  status: string;
  provider: string;
  providerRef: string | null;
  amount: number;
}

export type DueOrder = {
  id: string;
  number: number;
  /** What the gateway's report of money is checked against, with each attempt's amount. */
  currency: string;
  /** Every attempt as it was when read, with its gateway reference: what the gateway is asked about. */
  attempts: SeenAttempt[];
  /** The order's facts as read: the expiry goes ahead only if nothing moved since (no attempt, shipment or status). */
  facts: OrderReading["facts"];
};

/** Open orders holding no captured money whose window closed by `now`, the longest-waiting first. */
export function dueUnpaidPlan(q: Q, store: SQL, now: Date, limit: number): Plan<DueOrder[]> {
  return plan(
    [
      raw<DueOrder>(
        q,
        sql`select due.id, due.number, due.currency,
              coalesce((select json_agg(json_build_object('id', a.id, 'attempt', a.attempt, 'status', a.status, 'provider', a.provider,
                         'providerRef', a.provider_ref, 'amount', a.amount) order by a.id)
                        from payment_attempt a where a.store_id = due.store_id and a.order_id = due.id), '[]'::json) as attempts,
              (${orderFactsSql(store, sql`due.id`)}) as facts
            from shop_order due
            where due.store_id = ${store} and due.status = 'open' and due.payment_status in ('unpaid', 'pending', 'authorized') and due.expires_at <= ${now}
            order by due.expires_at, due.id limit ${limit}`,
      ),
    ] as const,
    ([rows]) => rows,
  );
}

export function dueUnpaidOrders(tx: StoreTx, now: Date, limit: number): Promise<DueOrder[]> {
  return readOn(tx, (q) => dueUnpaidPlan(q, sql`${tx.storeId}::uuid`, now, limit));
}

/**
 * Writes `order.payment_reminder` once for each manual-transfer order still unpaid whose window closes
 * within PAYMENT_REMINDER_BEFORE_MS of `now` (and has not closed). The mark is set by the same guarded
 * statement that writes the events, so a re-run or a racing run reminds nobody twice. Answers how many.
 */
export function remindUnpaidPlan(q: Q, store: SQL, now: Date, limit: number): Plan<number> {
  const until = new Date(now.getTime() + PAYMENT_REMINDER_BEFORE_MS);
  return plan(
    [
      markEmits(
        raw<{ n: number }>(
          q,
          sql`with reminded as (
                update shop_order o set payment_reminded_at = ${now}
                where o.store_id = ${store} and o.id in (
                    select id from shop_order where store_id = ${store} and status = 'open' and payment_method = 'manual_transfer'
                      and payment_status in ('unpaid', 'pending') and payment_reminded_at is null and expires_at > ${now} and expires_at <= ${until}
                      and expires_at <= ${now}::timestamptz + least(${`${PAYMENT_REMINDER_BEFORE_MS} milliseconds`}::interval, (expires_at - placed_at) / 2)
                    order by expires_at limit ${limit})
                  and o.status = 'open' and o.payment_reminded_at is null
                returning o.id, o.number, o.expires_at, o.total - o.balance_amount as amount),
              events as (
                insert into outbox_event (store_id, kind, payload)
                select ${store}, 'order.payment_reminder', jsonb_build_object('orderId', id, 'number', number,
                  'expiresAt', to_char(expires_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'amount', amount)
                from reminded)
            select count(*)::int as n from reminded`,
        ),
      ),
    ] as const,
    ([[row]]) => row!.n,
  );
}

export function remindUnpaid(tx: StoreTx, now: Date, limit: number): Promise<number> {
  return changeOn(tx, (q) => remindUnpaidPlan(q, sql`${tx.storeId}::uuid`, now, limit));
}

/**
 * Expires the orders whose window closed, each only if, under its lock, it is still open, unshipped,
 * holds no captured money, is past `expires_at`, and its facts (attempts and their statuses, shipments,
 * statuses) are exactly those read before the gateway was asked; otherwise nothing happens to it and the
 * next run looks again. An expired order's reservations are released, its discount's use is given back,
 * its fact `expired_at` is written and the recompute makes it `expired` (which it never leaves), with
 * `order.expired` and `inventory.released`. Answers, per order, whether it expired.
 *
 * Locks first, as every order writer and checkout take them: the orders' attempts, the orders, then the
 * stock rows they hold, in id order (a discount's row last, as checkout takes it after the stock).
 */
export function expiryPlan(q: Q, store: SQL, orders: readonly Pick<DueOrder, "id" | "facts">[], now: Date): Plan<boolean[]> {
  if (orders.length === 0) return plan([], () => []);
  const ids = sql`${sql.param(orders.map((o) => o.id))}::uuid[]`;
  const each = orders.map((o) => expireSteps(q, store, o, now));
  return plan(
    [
      raw(q, sql`select id from payment_attempt where store_id = ${store} and order_id = any(${ids}) order by id for update`),
      raw(q, sql`select id from shop_order where store_id = ${store} and id = any(${ids}) order by id for update`),
      raw(
        q,
        sql`select il.id from inventory_level il
            where il.store_id = ${store} and (il.variant_id, il.location_id) in (
              select ol.variant_id, f.location_id from fulfillment_order_line fl
              join fulfillment_order f on f.store_id = fl.store_id and f.id = fl.fulfillment_order_id
              join order_line ol on ol.store_id = fl.store_id and ol.id = fl.order_line_id
              where fl.store_id = ${store} and f.order_id = any(${ids}) and fl.reserved > 0)
            order by il.id for update`,
      ),
      ...each.flat(),
    ],
    (results) => {
      let at = 3;
      return each.map((steps) => {
        const [row] = results[at] as { expired: boolean }[];
        at += steps.length;
        return row!.expired;
      });
    },
  );
}

/** One order's expiry: its release and fact in one statement (answering whether it happened), then the recompute. */
function expireSteps(q: Q, store: SQL, order: Pick<DueOrder, "id" | "facts">, now: Date): Step[] {
  const close = markEmits(
    raw(
      q,
      sql`with target as (
            select o.id, o.number from shop_order o
            where o.store_id = ${store} and o.id = ${order.id} and o.status = 'open' and o.payment_status = any(${sql.param([...NOTHING_CAPTURED])}::text[])
              and o.fulfillment_status = 'unfulfilled' and o.expires_at <= ${now}
              and (${orderFactsSql(store, sql`${order.id}::uuid`)}) = ${JSON.stringify(order.facts)}::jsonb),
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
    ),
  );
  // The status is the recompute's: written only if the statement above closed the order as read.
  const recompute = recomputeWhenAsRead(q, store, { orderId: order.id, facts: order.facts }, (facts) => ({ ...facts, closed: "expired" }));
  return [close, ...recompute.steps];
}

/** The same for one order inside a transaction that is open already (`seen`: the order as the due reading found it). */
export async function expireOrder(tx: StoreTx, seen: Pick<DueOrder, "id" | "facts">, now: Date): Promise<boolean> {
  const [expired] = await changeOn(tx, (q) => expiryPlan(q, sql`${tx.storeId}::uuid`, [seen], now));
  return expired!;
}
