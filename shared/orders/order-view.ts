import type { SQL } from "drizzle-orm";
import { plan } from "../db/plan";
import { raw, sql, type Q, type StatementClient, type Step } from "../db/steps";
import { runPlanOn } from "../db/unit";
import type { StoreTx } from "../db/with-store";

/** An order as clients see it (issue 11 "Shapes"): money in minor units, with its parcels. */
export interface ParcelView {
  id: string;
  locationId: string | null;
  subtotal: number;
  discount: number;
  shipping: number;
  tax: number;
  cgst: number;
  sgst: number;
  igst: number;
}

export interface OrderView {
  id: string;
  number: number;
  email: string;
  status: string;
  paymentStatus: string;
  fulfillmentStatus: string;
  currency: string;
  subtotal: number;
  discount: number;
  shipping: number;
  tax: number;
  total: number;
  parcels: ParcelView[];
}

/** One statement: the order and its parcels (no row when no such order in the store). */
export function orderViewStatement(q: Q, store: SQL, orderId: string | SQL): Step<{ order: OrderView }[]> {
  return raw<{ order: OrderView }>(
    q,
    sql`select json_build_object(
       'id', o.id, 'number', o.number, 'email', o.email, 'status', o.status, 'paymentStatus', o.payment_status,
       'fulfillmentStatus', o.fulfillment_status, 'currency', o.currency, 'subtotal', o.subtotal, 'discount', o.discount,
       'shipping', o.shipping, 'tax', o.tax, 'total', o.total,
       'parcels', coalesce((select json_agg(json_build_object('id', f.id, 'locationId', f.location_id, 'subtotal', f.subtotal,
           'discount', f.discount, 'shipping', f.shipping, 'tax', f.tax, 'cgst', f.cgst, 'sgst', f.sgst, 'igst', f.igst) order by f.position)
         from fulfillment_order f where f.store_id = o.store_id and f.order_id = o.id), '[]'::json)) as order
     from shop_order o where o.store_id = ${store} and o.id = ${orderId}`,
  );
}

/** The same, inside a transaction that is open already (a change answers the order as it now is); null when no such order. */
export function loadOrderView(tx: StoreTx, orderId: string): Promise<OrderView | null> {
  return runPlanOn(tx.$client as unknown as StatementClient, (q) =>
    plan([orderViewStatement(q, sql`${tx.storeId}::uuid`, orderId)] as const, ([[row]]) => row?.order ?? null),
  );
}
