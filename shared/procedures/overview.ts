import { z } from "zod";
import { plan } from "../db/plan";
import { raw, sql } from "../db/steps";
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
  read: (q, { store }) =>
    plan(
      [
        raw<{ unpaid: number; paymentPending: number; toShip: number; partlyShipped: number; openTasks: number }>(
          q,
          sql`select count(*) filter (where payment_status = 'unpaid')::int as "unpaid",
             count(*) filter (where payment_status = 'pending')::int as "paymentPending",
             count(*) filter (where payment_status = 'paid' and fulfillment_status = 'unfulfilled')::int as "toShip",
             count(*) filter (where payment_status = 'paid' and fulfillment_status = 'partially_fulfilled')::int as "partlyShipped",
             (select count(*) from merchant_task t where t.store_id = ${store} and t.status = 'open')::int as "openTasks"
           from shop_order where store_id = ${store} and status = 'open'`,
        ),
      ] as const,
      ([[row]]) => row!,
    ),
});

export const lowStock = storeProcedure({
  router: "inventory",
  name: "low",
  description:
    "Variants of active products running low online (available at the locations that sell online, at or below `threshold`, default 3), lowest first; pre-order variants are left out.",
  access: "inventory.read",
  mutates: false,
  input: z.strictObject({ threshold: z.number().int().min(0).max(10_000).default(3), limit: z.number().int().min(1).max(100).default(10) }),
  read: (q, { store }, input) =>
    plan(
      [
        raw<{ variantId: string; productId: string; productTitle: string; variantTitle: string; sku: string | null; available: number }>(
          q,
          sql`select * from (
             select v.id as "variantId", p.id as "productId", p.title as "productTitle", v.title as "variantTitle", v.sku, ${sql.raw(AVAILABLE)} as available
             from product_variant v join product p on p.store_id = v.store_id and p.id = v.product_id
             where v.store_id = ${store} and p.status = 'active' and not v.preorder) s
           where available <= ${input.threshold}
           order by available, "productTitle", "variantTitle" limit ${input.limit}`,
        ),
      ] as const,
      ([items]) => ({ items, threshold: input.threshold }),
    ),
});

export const overviewProcedures = [waitingOrders, lowStock];
