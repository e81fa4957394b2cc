import type { SQL } from "drizzle-orm";
import { shipment, shopOrder } from "../../db/schema";
import { EXAMPLE, pg, statement } from "../../db/statement";
import { sql } from "../../db/steps";
import type { ShipmentStatus } from "../../rules/status";

/** The statements of the shipment routine (../shipment-status.ts). */

const { id: ID, store: STORE, at: AT } = EXAMPLE;

/** Which shipment: by id (of this order, when given), or by the courier's tracking number. */
export type ShipmentKey = { id: string; orderId?: string } | { provider: string; awb: string };

export function shipmentWhere(store: SQL, key: ShipmentKey): SQL {
  if ("awb" in key) return sql`s.store_id = ${store} and s.provider = ${key.provider} and s.awb = ${key.awb}`;
  return sql`s.store_id = ${store} and s.id = ${key.id}${key.orderId ? sql` and s.order_id = ${key.orderId}` : sql``}`;
}

/** A shipment with its order's number and its place among the order's shipments (by id). */
export const shipmentToMove = statement("orders.shipmentToMove", {
  row: { id: shipment.id, order_id: shipment.orderId, number: shopOrder.number, status: shipment.status, awb: shipment.awb, index: pg.int4() },
  examples: [
    [STORE, { id: ID }, false],
    [STORE, { id: ID, orderId: ID }, true],
    [STORE, { provider: "local", awb: "AWB1" }, false],
  ],
  sql: (store: SQL, key: ShipmentKey, lock: boolean) =>
    sql`select s.id, s.order_id, o.number, s.status, s.awb,
          (select count(*) from shipment x where x.store_id = s.store_id and x.order_id = s.order_id and x.id < s.id)::int as index
        from shipment s join shop_order o on o.store_id = s.store_id and o.id = s.order_id
        where ${shipmentWhere(store, key)}${lock ? sql` for update of s` : sql``}`,
});

export const moveShipment = statement("orders.moveShipment", {
  row: {},
  examples: [[STORE, ID, "in_transit", null, AT]],
  sql: (store: SQL, shipmentId: string, to: ShipmentStatus, providerStatus: string | null, occurredAt: Date) =>
    sql`update shipment set status = ${to}, provider_status = coalesce(${providerStatus}, provider_status), status_at = ${occurredAt}, updated_at = now()
        where store_id = ${store} and id = ${shipmentId}`,
});

/** The merchant's RTO task, and `order.rto` only when the task is new (once per shipment). */
export const rtoTask = statement("orders.rtoTask", {
  row: {},
  examples: [[STORE, { orderId: ID, shipmentId: ID }, "Order #1001 is coming back", "{}"]],
  sql: (store: SQL, s: { orderId: string; shipmentId: string }, title: string, payload: string) =>
    sql`with task as (
          insert into merchant_task (store_id, kind, order_id, subject_id, title) values (${store}, 'rto', ${s.orderId}, ${s.shipmentId}, ${title})
          on conflict (store_id, kind, subject_id) do nothing returning id)
        insert into outbox_event (store_id, kind, payload) select ${store}, 'order.rto', ${payload}::jsonb from task`,
});

/**
 * The parcel's units go back on the shelf, held for the order again (a shipment cancelled before pickup):
 * the stock rows locked in id order, each with a `shipment_cancelled` adjustment row.
 */
export const putShipmentBack = statement("orders.putShipmentBack", {
  row: {},
  examples: [[STORE, ID]],
  sql: (store: SQL, shipmentId: string) =>
    sql`with items as (
          select fl.id as fl, il.id as level, fl.quantity, f.location_id, o.number
          from shipment s
          join fulfillment_order f on f.store_id = s.store_id and f.id = s.fulfillment_order_id
          join shop_order o on o.store_id = s.store_id and o.id = s.order_id
          join fulfillment_order_line fl on fl.store_id = f.store_id and fl.fulfillment_order_id = f.id
          join order_line ol on ol.store_id = fl.store_id and ol.id = fl.order_line_id
          join inventory_level il on il.store_id = fl.store_id and il.variant_id = ol.variant_id and il.location_id = f.location_id
          where s.store_id = ${store} and s.id = ${shipmentId}
          order by il.id for update of il),
        levels as (
          update inventory_level il set on_hand = il.on_hand + items.quantity, reserved = il.reserved + items.quantity, updated_at = now()
          from items where il.store_id = ${store} and il.id = items.level
          returning il.variant_id, il.on_hand, items.quantity, items.location_id, items.number),
        adjusted as (
          insert into inventory_adjustment (store_id, variant_id, location_id, delta, on_hand_after, reason, note)
          select ${store}, variant_id, location_id, quantity, on_hand, 'shipment_cancelled', 'Order #' || number::text from levels)
        update fulfillment_order_line fl set reserved = items.quantity from items where fl.store_id = ${store} and fl.id = items.fl`,
});
