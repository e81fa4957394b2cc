import { z } from "zod";
import { plan } from "../db/plan";
import { raw, sql } from "../db/steps";
import { AVAILABLE } from "../storefront/catalog";
import { storeProcedure } from "./define";
import { tallyRows } from "./tally";

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
          // The open orders' counts are kept by the writes (the store's tally, migration 0031): one row, not
          // every open order of the store.
          sql`select coalesce(sum(o.open_unpaid), 0)::int as "unpaid",
             coalesce(sum(o.open_payment_pending), 0)::int as "paymentPending",
             coalesce(sum(o.open_to_ship), 0)::int as "toShip",
             coalesce(sum(o.open_partly_shipped), 0)::int as "partlyShipped",
             (select count(*) from merchant_task t where t.store_id = ${store} and t.status = 'open')::int as "openTasks"
           from ${tallyRows(store)} o`,
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
