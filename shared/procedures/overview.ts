import { z } from "zod";
import { plan } from "../db/plan";
import { lowStock as lowStockStatement, waitingOrders as waitingOrdersStatement } from "./statements/store";
import { storeProcedure } from "./define";
import * as out from "./outputs";

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
  output: z.object({ unpaid: z.number().int(), paymentPending: z.number().int(), toShip: z.number().int(), partlyShipped: z.number().int(), openTasks: z.number().int() }),
  input: z.strictObject({}),
  read: (q, { store }) =>
    plan(
      [
        waitingOrdersStatement(q, store),
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
  output: z.object({ items: z.array(z.object({ variantId: out.id, productId: out.id, productTitle: z.string(), variantTitle: z.string(), sku: z.string().nullable(), available: z.number().int() })), threshold: z.number().int() }),
  input: z.strictObject({ threshold: z.number().int().min(0).max(10_000).default(3), limit: z.number().int().min(1).max(100).default(10) }),
  read: (q, { store }, input) =>
    plan(
      [
        lowStockStatement(q, store, input.threshold, input.limit),
      ] as const,
      ([items]) => ({ items, threshold: input.threshold }),
    ),
});

export const overviewProcedures = [waitingOrders, lowStock];
