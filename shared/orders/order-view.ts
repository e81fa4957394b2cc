import type { SQL } from "drizzle-orm";
import { plan } from "../db/plan";
import { sql, type Q, type StatementClient } from "../db/steps";
import { runPlanOn } from "../db/unit";
import type { StoreTx } from "../db/with-store";
import { orderView, type OrderView } from "./statements/order-view";

export type { OrderView, ParcelView } from "./statements/order-view";

/** One statement: the order and its parcels (no row when no such order in the store). */
export function orderViewStatement(q: Q, store: SQL, orderId: string | SQL) {
  return orderView(q, store, orderId);
}

/** The same, inside a transaction that is open already (a change answers the order as it now is); null when no such order. */
export function loadOrderView(tx: StoreTx, orderId: string): Promise<OrderView | null> {
  return runPlanOn(tx.$client as unknown as StatementClient, (q) =>
    plan([orderViewStatement(q, sql`${tx.storeId}::uuid`, orderId)] as const, ([[row]]) => row?.order ?? null),
  );
}
