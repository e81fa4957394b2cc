import type { SQL } from "drizzle-orm";
import { fulfillmentOrderLine, inventoryLevel, refund, shopOrder } from "../../db/schema";
import { EXAMPLE, statement } from "../../db/statement";
import { sql } from "../../db/steps";

/**
 * Row locks by id, each table in id order, in the order every order writer takes them: payment attempts,
 * orders, parcel lines, stock rows (docs/order-status.md). Statements after a lock read what its holders
 * committed.
 */

const { id: ID, store: STORE } = EXAMPLE;

export const lockOrders = statement("orders.lockOrders", {
  row: { id: shopOrder.id },
  examples: [[STORE, [ID]]],
  sql: (store: SQL, ids: readonly string[]) => sql`select id from shop_order where store_id = ${store} and id = any(${sql.param(ids)}::uuid[]) order by id for update`,
});

export const lockParcelLines = statement("orders.lockParcelLines", {
  row: { id: fulfillmentOrderLine.id },
  examples: [[STORE, [ID]]],
  sql: (store: SQL, ids: readonly string[]) => sql`select id from fulfillment_order_line where store_id = ${store} and id = any(${sql.param(ids)}::uuid[]) order by id for update`,
});

export const lockStockRows = statement("orders.lockStockRows", {
  row: { id: inventoryLevel.id },
  examples: [[STORE, [ID]]],
  sql: (store: SQL, ids: readonly string[]) => sql`select id from inventory_level where store_id = ${store} and id = any(${sql.param(ids)}::uuid[]) order by id for update`,
});

export const lockRefunds = statement("orders.lockRefunds", {
  row: { id: refund.id },
  examples: [[STORE, [ID]]],
  sql: (store: SQL, ids: readonly string[]) => sql`select id from refund where store_id = ${store} and id = any(${sql.param(ids)}::uuid[]) order by id for update`,
});
