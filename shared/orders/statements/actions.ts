import type { SQL } from "drizzle-orm";
import { inventoryLevel, shopOrder } from "../../db/schema";
import { EXAMPLE, narrow, pg, statement } from "../../db/statement";
import { sql } from "../../db/steps";
import type { PaymentStatus } from "../../rules/status";
import { returnDiscountUseSql } from "../discount-uses";

/** The statements of the admin's actions on an order (../actions.ts): its lock, and cancel's release. */

const { id: ID, store: STORE } = EXAMPLE;

/** The order row, locked (after its payment attempts: the order every writer takes). */
export const lockOrderRow = statement("orders.lockOrderRow", {
  row: {
    id: shopOrder.id,
    number: shopOrder.number,
    status: shopOrder.status,
    paymentStatus: narrow<PaymentStatus>(shopOrder.paymentStatus),
    fulfillmentStatus: shopOrder.fulfillmentStatus,
    total: pg.float8(),
  },
  examples: [[STORE, ID]],
  sql: (store: SQL, orderId: string) =>
    sql`select id, number, status, payment_status as "paymentStatus", fulfillment_status as "fulfillmentStatus", total::float8 as total
        from shop_order where store_id = ${store} and id = ${orderId} for update`,
});

/**
 * Per stock row, what the order's parcel lines reserve there and what releasing gives back (never more
 * than the row's reserved).
 */
export function heldStock(store: SQL, orderId: string): SQL {
  return sql`select il.id, il.variant_id, il.location_id, least(il.reserved, h.held) as quantity
    from inventory_level il
    join (select ol.variant_id, f.location_id, sum(fl.reserved)::int as held
          from fulfillment_order_line fl
          join fulfillment_order f on f.store_id = fl.store_id and f.id = fl.fulfillment_order_id
          join order_line ol on ol.store_id = fl.store_id and ol.id = fl.order_line_id
          where fl.store_id = ${store} and f.order_id = ${orderId} and fl.reserved > 0
          group by ol.variant_id, f.location_id) h on h.variant_id = il.variant_id and h.location_id = il.location_id
    where il.store_id = ${store}`;
}

/** The stock rows an order holds, locked in id order (as checkout locks them). */
export const lockHeldStock = statement("orders.lockHeldStock", {
  row: { id: inventoryLevel.id, variant_id: inventoryLevel.variantId, location_id: inventoryLevel.locationId, quantity: pg.int4() },
  examples: [[STORE, ID]],
  sql: (store: SQL, orderId: string) => sql`${heldStock(store, orderId)} order by il.id for update of il`,
});

/** Gives back what the order holds: each stock row's reserved down by it. */
export const releaseHeldStock = statement("orders.releaseHeldStock", {
  row: {},
  examples: [[STORE, ID]],
  sql: (store: SQL, orderId: string) =>
    sql`update inventory_level s set reserved = s.reserved - x.quantity, updated_at = now()
        from (${heldStock(store, orderId)}) x where s.store_id = ${store} and s.id = x.id and x.quantity > 0`,
});

/** The order's parcel lines then reserve nothing, so a second release finds nothing. */
export const clearParcelReservations = statement("orders.clearParcelReservations", {
  row: {},
  examples: [[STORE, ID]],
  sql: (store: SQL, orderId: string) =>
    sql`update fulfillment_order_line fl set reserved = 0
        from fulfillment_order f where f.store_id = fl.store_id and f.id = fl.fulfillment_order_id
          and fl.store_id = ${store} and f.order_id = ${orderId} and fl.reserved > 0`,
});

/** Gives back the discount use of orders that close unpaid (../discount-uses.ts). */
export const returnDiscountUse = statement("orders.returnDiscountUse", {
  row: {},
  examples: [[STORE, sql`array[${ID}]::uuid[]`]],
  sql: (store: SQL, orderIds: SQL) => returnDiscountUseSql(store, orderIds),
});
