import { eq, sql } from "drizzle-orm";
import { z } from "zod";
import { customer, discount, inventoryAdjustment, page, product, productVariant, store } from "../db/schema";
import { plan } from "../db/plan";
import { calendarDay, inInstantRange, INSTANT_RANGE_MESSAGE } from "../core/inputs";
import { storeProcedure } from "./define";
import { DISCOUNT_STATE } from "../storefront/discount-state";
import { tallyRows } from "./tally";
import * as out from "./outputs";

export const RANGE_DAYS_MAX = 366;
const DAY_MS = 86_400_000;

/** Payment states in which money was received (as shared/marketing/work.ts counts a buyer). */
const MONEY_RECEIVED = "('partially_paid', 'paid', 'partially_refunded', 'refunded')";

const day = calendarDay().describe("A calendar date, YYYY-MM-DD (UTC)");
const startOf = (d: string, offset = "Z") => Date.parse(`${d}T00:00:00${offset === "+00:00" ? "Z" : offset}`);

const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * A range at an offset as instants [start, end), the whole UTC days inside it [firstDay, endDay) (read from
 * the daily rollups, migration 0027), and the parts of a UTC day left at either end (read from the rows):
 * none at +00:00, together one day at any other offset.
 */
export function rangeParts(input: { from: string; to: string; utcOffset: string }): {
  start: number;
  end: number;
  firstDay: string;
  endDay: string;
  edges: [number, number][];
} {
  const start = startOf(input.from, input.utcOffset);
  const end = startOf(input.to, input.utcOffset) + DAY_MS;
  const first = Math.ceil(start / DAY_MS) * DAY_MS;
  const last = Math.floor(end / DAY_MS) * DAY_MS;
  const edges = ([[start, first], [last, end]] as [number, number][]).filter(([a, b]) => a < b);
  return { start, end, firstDay: isoDay(first), endDay: isoDay(last), edges };
}

interface ProductCounts {
  total: number;
  active: number;
  draft: number;
  archived: number;
  createdInRange: number;
}

const count = z.number().int();

export const summary = storeProcedure({
  router: "analytics",
  name: "summary",
  description:
    "Store totals for a date range: products, variants, customers, stock (units, available units, stock value at price in minor units), stock received, discounts and pages. " +
    "Orders placed in the range: placed, cancelled (cancelled or expired unpaid), salesMinor (totals of the others) and paidMinor (totals of those with money received). " +
    "The range covers from 00:00 on `from` up to (not including) 00:00 the day after `to`, at `utcOffset` (default +00:00, UTC; +05:30 for India), at most 366 days.",
  access: "analytics.read",
  mutates: false,
  output: z.object({
    inventory: z.object({ unitsReceivedInRange: count, adjustmentsInRange: count, unitsOnHand: count, unitsAvailable: count, stockValueMinor: out.minor }),
    products: z.object({ total: count, active: count, draft: count, archived: count, createdInRange: count }),
    variants: z.object({ total: count, preorder: count }),
    customers: z.object({ total: count, newInRange: count, acceptsMarketing: count }),
    discounts: z.object({ live: count, total: count }),
    orders: z.object({ placed: count, cancelled: count, salesMinor: out.minor, paidMinor: out.minor }),
    pages: z.object({ published: count, draft: count }),
    currency: z.string(),
    range: z.object({ from: out.day, to: out.day, utcOffset: z.string() }),
  }),
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
    // The days are whole at the offset: the range's ends, as instants, must be ones an input may name.
    .refine((r) => inInstantRange(startOf(r.from, r.utcOffset)), { path: ["from"], message: `The range's start ${INSTANT_RANGE_MESSAGE}.` })
    .refine((r) => inInstantRange(startOf(r.to, r.utcOffset) + DAY_MS - 1), { path: ["to"], message: `The range's end ${INSTANT_RANGE_MESSAGE}.` })
    .refine((r) => (startOf(r.to) - startOf(r.from)) / DAY_MS + 1 <= RANGE_DAYS_MAX, {
      path: ["to"],
      message: `The range covers at most ${RANGE_DAYS_MAX} days.`,
    }),
  read(q, scope, input) {
    const sid = scope.store;
    const { start, end, firstDay, endDay, edges } = rangeParts(input);
    const at = (ms: number) => sql`${new Date(ms).toISOString()}::timestamptz`;
    const inRange = (column: string) => sql`${sql.raw(column)} >= ${at(start)} and ${sql.raw(column)} < ${at(end)}`;
    // Whole UTC days from the rollups; the parts of a day at either end (a range at an offset other than
    // +00:00) from the rows themselves, by time: at most one day of rows in all.
    const days = sql`d.store_id = ${sid} and d.day >= ${firstDay}::date and d.day < ${endDay}::date`;
    const inEdges = (column: string) =>
      sql.join(
        edges.map(([from, to]) => sql`(${sql.raw(column)} >= ${at(from)} and ${sql.raw(column)} < ${at(to)})`),
        sql` or `,
      );
    const orderEdges = edges.length
      ? sql` union all
          select 1, (o.status in ('cancelled', 'expired'))::int,
            case when o.status not in ('cancelled', 'expired') then o.total else 0 end,
            case when o.status not in ('cancelled', 'expired') and o.payment_status in ${sql.raw(MONEY_RECEIVED)} then o.total else 0 end
          from shop_order o where o.store_id = ${sid} and (${inEdges("o.placed_at")})`
      : sql``;
    const customerEdges = edges.length ? sql` union all select 1 from ${customer} c where c.store_id = ${sid} and (${inEdges("c.created_at")})` : sql``;
    const stockEdges = edges.length
      ? sql` union all select 1, greatest(a.delta, 0) from ${inventoryAdjustment} a where a.store_id = ${sid} and (${inEdges("a.created_at")})`
      : sql``;
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
          'total', coalesce((select t.customers from analytics_customer_total t where t.store_id = ${sid}), 0),
          'newInRange', coalesce(sum(created), 0),
          'acceptsMarketing', coalesce((select t.accepting from analytics_customer_total t where t.store_id = ${sid}), 0)
        ) from (select d.created from analytics_customer_day d where ${days}${customerEdges}) x)`,
        stock: sql<{ unitsOnHand: number; unitsAvailable: number; stockValueMinor: number }>`(select json_build_object(
          'unitsOnHand', coalesce(sum(t.units_on_hand), 0),
          'unitsAvailable', coalesce(sum(t.units_available), 0),
          'stockValueMinor', coalesce(sum(t.stock_value_minor), 0)
        ) from ${tallyRows(sid)} t)`,
        adjustments: sql<{ unitsReceivedInRange: number; adjustmentsInRange: number }>`(select json_build_object(
          'unitsReceivedInRange', coalesce(sum(units_received), 0),
          'adjustmentsInRange', coalesce(sum(adjustments), 0)
        ) from (select d.adjustments, d.units_received from analytics_stock_day d where ${days}${stockEdges}) x)`,
        discounts: sql<{ live: number; total: number }>`(select json_build_object(
          'live', count(*) filter (where ${DISCOUNT_STATE} = 'live'),
          'total', count(*)
        ) from ${discount} d where d.store_id = ${sid})`,
        orders: sql<{ placed: number; cancelled: number; salesMinor: number; paidMinor: number }>`(select json_build_object(
          'placed', coalesce(sum(placed), 0),
          'cancelled', coalesce(sum(cancelled), 0),
          'salesMinor', coalesce(sum(sales_minor), 0),
          'paidMinor', coalesce(sum(paid_minor), 0)
        ) from (select d.placed, d.cancelled, d.sales_minor, d.paid_minor from analytics_order_day d where ${days}${orderEdges}) x)`,
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
