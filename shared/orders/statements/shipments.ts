import type { SQL } from "drizzle-orm";
import { fulfillmentOrder, fulfillmentOrderLine, inventoryLevel, location, orderLine, shopOrder } from "../../db/schema";
import { EXAMPLE, orNull, pg, statement } from "../../db/statement";
import { sql } from "../../db/steps";

/** The statements of shipping a parcel (../shipments.ts): its reading with its locks, and the change. */

const { id: ID, store: STORE } = EXAMPLE;
const PARCEL = { orderId: ID, parcelId: ID };

const forUpdate = (lock: boolean, of: SQL) => (lock ? sql` for update of ${of}` : sql``);
const json = (value: unknown) => sql`${JSON.stringify(value)}::jsonb`;

/** A parcel's lines with the order lines and stock rows they ship from. */
const parcelLines = (store: SQL, p: { orderId: string; parcelId: string }) => sql`from fulfillment_order_line fl
       join fulfillment_order f on f.store_id = fl.store_id and f.id = fl.fulfillment_order_id
       join order_line ol on ol.store_id = fl.store_id and ol.id = fl.order_line_id
       left join inventory_level il on il.store_id = fl.store_id and il.variant_id = ol.variant_id and il.location_id = f.location_id
       where fl.store_id = ${store} and fl.fulfillment_order_id = ${p.parcelId} and f.order_id = ${p.orderId}`;

/** The order a parcel ships for. */
export const orderToShip = statement("orders.orderToShip", {
  row: { id: shopOrder.id, number: shopOrder.number, email: shopOrder.email, phone: shopOrder.phone, shippingAddress: shopOrder.shippingAddress, currency: shopOrder.currency },
  examples: [[STORE, ID]],
  sql: (store: SQL, orderId: string) =>
    sql`select id, number, email, phone, shipping_address as "shippingAddress", currency from shop_order where store_id = ${store} and id = ${orderId}`,
});

/** The parcel, where it ships from, its shipments so far and those on their way or there. */
export const parcelToShip = statement("orders.parcelToShip", {
  row: {
    id: fulfillmentOrder.id,
    locationId: fulfillmentOrder.locationId,
    locationName: orNull(location.name),
    originState: fulfillmentOrder.originState,
    value: pg.float8(),
    shipments: pg.int4(),
    live: pg.json<{ awb: string; status: string }[]>(),
  },
  examples: [
    [STORE, PARCEL, ["pending"], false],
    [STORE, PARCEL, ["pending"], true],
  ],
  sql: (store: SQL, p: { orderId: string; parcelId: string }, live: readonly string[], lock: boolean) =>
    sql`select f.id, f.location_id as "locationId", l.name as "locationName", f.origin_state as "originState", (f.subtotal - f.discount)::float8 as value,
          (select count(*)::int from shipment s where s.store_id = f.store_id and s.fulfillment_order_id = f.id) as shipments,
          coalesce((select json_agg(json_build_object('awb', s.awb, 'status', s.status)) from shipment s
                    where s.store_id = f.store_id and s.fulfillment_order_id = f.id and s.status = any(${sql.param(live)}::text[])), '[]'::json) as live
        from fulfillment_order f left join location l on l.store_id = f.store_id and l.id = f.location_id
        where f.store_id = ${store} and f.order_id = ${p.orderId} and f.id = ${p.parcelId}${forUpdate(lock, sql`f`)}`,
});

/** The parcel's lines: what each ships, what it reserved, and the stock at the parcel's location. */
export const parcelLinesToShip = statement("orders.parcelLinesToShip", {
  row: {
    flId: fulfillmentOrderLine.id,
    variantId: orderLine.variantId,
    levelId: orNull(inventoryLevel.id),
    title: pg.text(),
    sku: orderLine.sku,
    quantity: fulfillmentOrderLine.quantity,
    reserved: fulfillmentOrderLine.reserved,
    unitPrice: pg.float8(),
    onHand: pg.int4(),
    levelReserved: pg.int4(),
  },
  examples: [
    [STORE, PARCEL, false],
    [STORE, PARCEL, true],
  ],
  sql: (store: SQL, p: { orderId: string; parcelId: string }, lock: boolean) =>
    sql`select fl.id as "flId", ol.variant_id as "variantId", il.id as "levelId",
          ol.product_title || case when ol.variant_title = 'Default' then '' else ' — ' || ol.variant_title end as title,
          ol.sku, fl.quantity, fl.reserved, ol.unit_price::float8 as "unitPrice",
          coalesce(il.on_hand, 0) as "onHand", coalesce(il.reserved, 0) as "levelReserved"
        ${parcelLines(store, p)}
        order by il.id nulls last, fl.id${forUpdate(lock, sql`fl`)}`,
});

/** The parcel's stock rows locked in id order (as checkout locks them), read as locked. */
export const lockParcelStock = statement("orders.lockParcelStock", {
  row: { id: inventoryLevel.id, on_hand: inventoryLevel.onHand, reserved: inventoryLevel.reserved },
  examples: [[STORE, PARCEL]],
  sql: (store: SQL, p: { orderId: string; parcelId: string }) =>
    sql`select id, on_hand, reserved from inventory_level where id in (select il.id ${parcelLines(store, p)}) order by id for update`,
});

export interface ShippedItem {
  fl: string;
  level: string | null;
  quantity: number;
  reserved: number;
}

/**
 * The shipped units leave the location: on hand down by the quantity, reserved down by what the parcel
 * held, an adjustment row each, and the parcel's lines reserve nothing.
 */
export const shipParcelUnits = statement("orders.shipParcelUnits", {
  row: {},
  examples: [[STORE, [{ fl: ID, level: ID, quantity: 1, reserved: 1 }], ID, "Order #1001", sql`null::uuid`]],
  sql: (store: SQL, items: readonly ShippedItem[], locationId: string, note: string, memberId: SQL) =>
    sql`with x as (select * from jsonb_to_recordset(${json(items)}) as x(fl uuid, level uuid, quantity int, reserved int)),
        levels as (
          update inventory_level il set on_hand = il.on_hand - x.quantity, reserved = greatest(il.reserved - x.reserved, 0), updated_at = now()
          from x where il.store_id = ${store} and il.id = x.level
          returning il.variant_id, il.on_hand, x.quantity),
        adjusted as (
          insert into inventory_adjustment (store_id, variant_id, location_id, delta, on_hand_after, reason, note, member_id)
          select ${store}, variant_id, ${locationId}::uuid, -quantity, on_hand, 'shipped', ${note}, ${memberId} from levels)
        update fulfillment_order_line fl set reserved = 0 from x where fl.store_id = ${store} and fl.id = x.fl`,
});

