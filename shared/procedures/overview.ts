import { z } from "zod";
import { AVAILABLE } from "../storefront/catalog";
import { storeProcedure } from "./define";

/**
 * What the admin home shows a member who runs the day (issue 13 item 7): orders waiting for someone, and
 * stock running low. Each is one statement, read with the area's own permission, so Staff see them too.
 */
export const waitingOrders = storeProcedure({
  router: "orders",
  name: "waiting",
  description:
    "Open orders waiting for someone, as counts: unpaid, paymentPending (the gateway has not confirmed), toShip (paid, nothing shipped), partlyShipped (paid, some parcels shipped), and openTasks (merchant tasks to do).",
  access: "orders.read",
  mutates: false,
  input: z.strictObject({}),
  async run({ tx }) {
    const { rows } = await tx.$client.query<{ unpaid: number; paymentPending: number; toShip: number; partlyShipped: number; openTasks: number }>(
      `select count(*) filter (where payment_status = 'unpaid')::int as "unpaid",
         count(*) filter (where payment_status = 'pending')::int as "paymentPending",
         count(*) filter (where payment_status = 'paid' and fulfillment_status = 'unfulfilled')::int as "toShip",
         count(*) filter (where payment_status = 'paid' and fulfillment_status = 'partially_fulfilled')::int as "partlyShipped",
         (select count(*) from merchant_task t where t.store_id = $1 and t.status = 'open')::int as "openTasks"
       from shop_order where store_id = $1 and status = 'open'`,
      [tx.storeId],
    );
    return rows[0]!;
  },
});

export const lowStock = storeProcedure({
  router: "inventory",
  name: "low",
  description:
    "Variants of active products running low online (available at the locations that sell online, at or below `threshold`, default 3), lowest first; pre-order variants are left out.",
  access: "inventory.read",
  mutates: false,
  input: z.strictObject({ threshold: z.number().int().min(0).max(10_000).default(3), limit: z.number().int().min(1).max(100).default(10) }),
  async run({ tx }, input) {
    const { rows } = await tx.$client.query<{ variantId: string; productId: string; productTitle: string; variantTitle: string; sku: string | null; available: number; total: number }>(
      `select * from (
         select v.id as "variantId", p.id as "productId", p.title as "productTitle", v.title as "variantTitle", v.sku, ${AVAILABLE} as available
         from product_variant v join product p on p.store_id = v.store_id and p.id = v.product_id
         where v.store_id = $1 and p.status = 'active' and not v.preorder) s
       where available <= $2
       order by available, "productTitle", "variantTitle" limit $3`,
      [tx.storeId, input.threshold, input.limit],
    );
    return { items: rows, threshold: input.threshold };
  },
});

export const overviewProcedures = [waitingOrders, lowStock];
