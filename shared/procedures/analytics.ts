import { eq, sql } from "drizzle-orm";
import { z } from "zod";
import { customer, discount, inventoryAdjustment, inventoryLevel, page, product, productVariant, store } from "../db/schema";
import { plan } from "../db/plan";
import { storeProcedure } from "./define";
import { DISCOUNT_STATE } from "./discounts";

export const RANGE_DAYS_MAX = 366;
const DAY_MS = 86_400_000;

const day = z.iso.date().describe("A calendar date, YYYY-MM-DD (UTC)");
const startOf = (d: string, offset = "Z") => Date.parse(`${d}T00:00:00${offset === "+00:00" ? "Z" : offset}`);

interface ProductCounts {
  total: number;
  active: number;
  draft: number;
  archived: number;
  createdInRange: number;
}

export const summary = storeProcedure({
  router: "analytics",
  name: "summary",
  description:
    "Store totals for a date range: products, variants, customers, stock (units, available units, stock value at price in minor units), stock received, discounts and pages. " +
    "Orders placed in the range: placed, cancelled (cancelled or expired unpaid), salesMinor (totals of the others) and paidMinor (totals of those with money received). " +
    "The range covers from 00:00 on `from` up to (not including) 00:00 the day after `to`, at `utcOffset` (default +00:00, UTC; +05:30 for India), at most 366 days.",
  access: "analytics.read",
  mutates: false,
  input: z
    .strictObject({
      from: day,
      to: day,
      utcOffset: z
        .string()
        .regex(/^[+-](0\d|1[0-4]):[0-5]\d$/, "must be an offset such as +05:30")
        .default("+00:00")
        .describe("Where the days begin: +05:30 for IST"),
    })
    .refine((r) => r.to >= r.from, { path: ["to"], message: "to must be on or after from." })
    .refine((r) => (startOf(r.to) - startOf(r.from)) / DAY_MS + 1 <= RANGE_DAYS_MAX, {
      path: ["to"],
      message: `The range covers at most ${RANGE_DAYS_MAX} days.`,
    }),
  read(q, scope, input) {
    const sid = scope.store;
    const start = sql`${new Date(startOf(input.from, input.utcOffset)).toISOString()}::timestamptz`;
    const end = sql`${new Date(startOf(input.to, input.utcOffset) + DAY_MS).toISOString()}::timestamptz`;
    const inRange = (column: string) => sql`${sql.raw(column)} >= ${start} and ${sql.raw(column)} < ${end}`;
    const totals = q
      .select({
        products: sql<ProductCounts>`(select json_build_object(
          'total', count(*),
          'active', count(*) filter (where p.status = 'active'),
          'draft', count(*) filter (where p.status = 'draft'),
          'archived', count(*) filter (where p.status = 'archived'),
          'createdInRange', count(*) filter (where ${inRange("p.created_at")})
        ) from ${product} p where p.store_id = ${sid})`,
        variants: sql<{ total: number; preorder: number }>`(select json_build_object(
          'total', count(*),
          'preorder', count(*) filter (where v.preorder)
        ) from ${productVariant} v where v.store_id = ${sid})`,
        customers: sql<{ total: number; newInRange: number; acceptsMarketing: number }>`(select json_build_object(
          'total', count(*),
          'newInRange', count(*) filter (where ${inRange("c.created_at")}),
          'acceptsMarketing', count(*) filter (where c.accepts_marketing)
        ) from ${customer} c where c.store_id = ${sid})`,
        stock: sql<{ unitsOnHand: number; unitsAvailable: number; stockValueMinor: number }>`(select json_build_object(
          'unitsOnHand', coalesce(sum(l.on_hand), 0),
          'unitsAvailable', coalesce(sum(l.on_hand - l.reserved), 0),
          'stockValueMinor', coalesce(sum(l.on_hand::numeric * v.price_minor), 0)
        ) from ${inventoryLevel} l
          join ${productVariant} v on v.store_id = l.store_id and v.id = l.variant_id
          where l.store_id = ${sid})`,
        adjustments: sql<{ unitsReceivedInRange: number; adjustmentsInRange: number }>`(select json_build_object(
          'unitsReceivedInRange', coalesce(sum(a.delta) filter (where a.delta > 0), 0),
          'adjustmentsInRange', count(*)
        ) from ${inventoryAdjustment} a where a.store_id = ${sid} and ${inRange("a.created_at")})`,
        discounts: sql<{ live: number; total: number }>`(select json_build_object(
          'live', count(*) filter (where ${DISCOUNT_STATE} = 'live'),
          'total', count(*)
        ) from ${discount} d where d.store_id = ${sid})`,
        orders: sql<{ placed: number; cancelled: number; salesMinor: number; paidMinor: number }>`(select json_build_object(
          'placed', count(*),
          'cancelled', count(*) filter (where o.status in ('cancelled', 'expired')),
          'salesMinor', coalesce(sum(o.total) filter (where o.status not in ('cancelled', 'expired')), 0),
          'paidMinor', coalesce(sum(o.total) filter (where o.status not in ('cancelled', 'expired') and o.payment_status in ('partially_paid', 'paid', 'partially_refunded', 'refunded')), 0)
        ) from shop_order o where o.store_id = ${sid} and ${inRange("o.placed_at")})`,
        pages: sql<{ published: number; draft: number }>`(select json_build_object(
          'published', count(*) filter (where g.status = 'published'),
          'draft', count(*) filter (where g.status = 'draft')
        ) from ${page} g where g.store_id = ${sid})`,
      })
      .from(store)
      .where(eq(store.id, sid));
    return plan([totals] as const, ([[row]]) => {
      if (!row) throw new Error("analytics.summary: the store row is not visible in its own transaction");
      const { stock, adjustments, ...counts } = row;
      return {
        currency: scope.caller().store.currency,
        range: { from: input.from, to: input.to, utcOffset: input.utcOffset },
        ...counts,
        inventory: { ...stock, ...adjustments },
      };
    });
  },
});

export const analyticsProcedures = [summary];
