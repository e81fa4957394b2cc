import type { SQL } from "drizzle-orm";
import { orderLine, orderReturn, shopOrder } from "../../db/schema";
import { EXAMPLE, pg, statement } from "../../db/statement";
import { sql } from "../../db/steps";

/** The statements of returns (../returns.ts). */

const { id: ID, store: STORE } = EXAMPLE;

const SHIPPED_STATUSES = ["in_transit", "delivered", "pending"];
const json = (value: unknown) => sql`${JSON.stringify(value)}::jsonb`;

/**
 * What each line of an order may still return: its units in shipments that left (not cancelled, not back
 * to origin), less the units already in returns that were not rejected.
 */
export function returnableSql(store: SQL, orderId: string): SQL {
  return sql`select ol.id, ol.product_title as title,
       coalesce((select sum(fl.quantity) from fulfillment_order_line fl
                 where fl.store_id = ol.store_id and fl.order_line_id = ol.id
                   and exists (select 1 from shipment s where s.store_id = fl.store_id and s.fulfillment_order_id = fl.fulfillment_order_id
                               and s.status = any(${sql.param(SHIPPED_STATUSES)}::text[]))), 0)::int as shipped,
       coalesce((select sum(rl.quantity) from order_return_line rl join order_return r on r.store_id = rl.store_id and r.id = rl.return_id
                 where rl.store_id = ol.store_id and rl.order_line_id = ol.id and r.status <> 'rejected'), 0)::int as returning
     from order_line ol where ol.store_id = ${store} and ol.order_id = ${orderId}`;
}

export const returnableLines = statement("orders.returnableLines", {
  row: { id: orderLine.id, title: orderLine.productTitle, shipped: pg.int4(), returning: pg.int4() },
  examples: [[STORE, ID]],
  sql: (store: SQL, orderId: string) => returnableSql(store, orderId),
});

/** The return, numbered after the order's other returns. */
export const openReturn = statement("orders.openReturn", {
  row: { id: orderReturn.id, number: orderReturn.number },
  examples: [[STORE, { returnId: ID, orderId: ID, reason: "Too small", note: null }]],
  sql: (store: SQL, r: { returnId: string; orderId: string; reason: string; note: string | null }) =>
    sql`insert into order_return (id, store_id, order_id, number, reason, note)
        select ${r.returnId}::uuid, ${store}, ${r.orderId}::uuid, coalesce(max(number), 0) + 1, ${r.reason}, ${r.note}
        from order_return where store_id = ${store} and order_id = ${r.orderId}
        returning id, number`,
});

export const addReturnLines = statement("orders.addReturnLines", {
  row: {},
  examples: [[STORE, ID, [{ line: ID, quantity: 1 }]]],
  sql: (store: SQL, returnId: string, lines: readonly { line: string; quantity: number }[]) =>
    sql`insert into order_return_line (store_id, return_id, order_line_id, quantity)
        select ${store}, ${returnId}::uuid, x.line, x.quantity from jsonb_to_recordset(${json(lines)}) as x(line uuid, quantity int)`,
});

/** A return of the store with its order's number (with `lock`, the return row locked). */
export const returnWithOrder = statement("orders.returnWithOrder", {
  row: { id: orderReturn.id, orderId: orderReturn.orderId, number: orderReturn.number, orderNumber: shopOrder.number, status: orderReturn.status },
  examples: [
    [STORE, ID, false],
    [STORE, ID, true],
  ],
  sql: (store: SQL, returnId: string, lock: boolean) =>
    sql`select r.id, r.order_id as "orderId", r.number, o.number as "orderNumber", r.status
        from order_return r join shop_order o on o.store_id = r.store_id and o.id = r.order_id
        where r.store_id = ${store} and r.id = ${returnId}${lock ? sql` for update of r` : sql``}`,
});

export const moveReturn = statement("orders.moveReturn", {
  row: {},
  examples: [[STORE, ID, "approved", null]],
  sql: (store: SQL, returnId: string, to: string, note: string | null) =>
    sql`update order_return set status = ${to}, note = coalesce(${note}, note), updated_at = now() where store_id = ${store} and id = ${returnId}`,
});

/**
 * The units arrived back: they go back on hand at the location each came from (the parcel's), each with
 * an adjustment row `returned`.
 */
export const restockReturn = statement("orders.restockReturn", {
  row: {},
  examples: [[STORE, ID, "Return 1 of order #1001", sql`null::uuid`]],
  sql: (store: SQL, returnId: string, note: string, memberId: SQL) =>
    sql`with back as (
       select il.id, rl.quantity from order_return_line rl
       join order_line ol on ol.store_id = rl.store_id and ol.id = rl.order_line_id
       join lateral (select f.location_id from fulfillment_order_line fl
                     join fulfillment_order f on f.store_id = fl.store_id and f.id = fl.fulfillment_order_id
                     where fl.store_id = rl.store_id and fl.order_line_id = ol.id and f.location_id is not null
                     order by f.position limit 1) src on true
       join inventory_level il on il.store_id = rl.store_id and il.variant_id = ol.variant_id and il.location_id = src.location_id
       where rl.store_id = ${store} and rl.return_id = ${returnId}
       order by il.id for update of il),
     levels as (
       update inventory_level il set on_hand = il.on_hand + back.quantity, updated_at = now()
       from back where il.store_id = ${store} and il.id = back.id returning il.variant_id, il.location_id, il.on_hand, back.quantity)
     insert into inventory_adjustment (store_id, variant_id, location_id, delta, on_hand_after, reason, note, member_id)
     select ${store}, variant_id, location_id, quantity, on_hand, 'returned', ${note}, ${memberId} from levels`,
});
