import { describe, expect, it } from "vitest";
import { customer, inventoryAdjustment, shopOrder } from "#shared/db/schema";
import { withStore } from "#shared/db/with-store";
import { FULFILLMENT_STATUSES, ORDER_STATUSES, PAYMENT_STATUSES } from "#shared/rules/status";
import { testDb } from "../../test/harness";
import { mulberry32 } from "../../test/prng";
import { storeWithCaller } from "../../test/procedures";
import { rangeParts } from "./analytics";

/**
 * analytics.summary reads orders, new customers and stock received from daily rollups kept by triggers
 * (migration 0027). Property: for generated rows, changed and deleted in single-row and many-row
 * statements, every range at any offset answers exactly what counting the rows answers (the query
 * analytics.summary ran before the rollups, kept here as the oracle).
 */
const db = testDb();

const DAY = 86_400_000;
const OFFSETS = ["+00:00", "+05:30", "-03:30", "+05:45", "+14:00", "-12:00", "+00:07", "-00:59"];
/** The generated rows' days: 2024-02-25 .. 2024-03-06 (a leap day inside). */
const WINDOW_START = Date.parse("2024-02-25T00:00:00Z");
const WINDOW_DAYS = 10;

interface Facts {
  orders: { placed: number; cancelled: number; salesMinor: number; paidMinor: number };
  customers: { total: number; newInRange: number; acceptsMarketing: number };
  received: { unitsReceivedInRange: number; adjustmentsInRange: number };
}

/** What analytics.summary counted before the rollups: the rows themselves, in [start, end). */
const ORACLE = `select
  (select json_build_object('placed', count(*), 'cancelled', count(*) filter (where o.status in ('cancelled', 'expired')),
     'salesMinor', coalesce(sum(o.total) filter (where o.status not in ('cancelled', 'expired')), 0),
     'paidMinor', coalesce(sum(o.total) filter (where o.status not in ('cancelled', 'expired')
       and o.payment_status in ('partially_paid', 'paid', 'partially_refunded', 'refunded')), 0))
   from shop_order o where o.placed_at >= $1 and o.placed_at < $2) as orders,
  (select json_build_object('total', count(*), 'newInRange', count(*) filter (where c.created_at >= $1 and c.created_at < $2),
     'acceptsMarketing', count(*) filter (where c.accepts_marketing)) from customer c) as customers,
  (select json_build_object('unitsReceivedInRange', coalesce(sum(a.delta) filter (where a.delta > 0), 0), 'adjustmentsInRange', count(*))
   from inventory_adjustment a where a.created_at >= $1 and a.created_at < $2) as received`;

describe("analytics.summary's rollups", () => {
  it("split a range at an offset into whole UTC days and the rest of a day at each end", () => {
    expect(rangeParts({ from: "2024-03-01", to: "2024-03-01", utcOffset: "+00:00" })).toEqual({
      start: Date.parse("2024-03-01T00:00:00Z"), end: Date.parse("2024-03-02T00:00:00Z"), firstDay: "2024-03-01", endDay: "2024-03-02", edges: [],
    });
    const ist = rangeParts({ from: "2024-03-01", to: "2024-03-03", utcOffset: "+05:30" });
    expect(ist).toMatchObject({ firstDay: "2024-03-01", endDay: "2024-03-03" });
    expect(ist.edges.map(([a, b]) => [new Date(a).toISOString(), new Date(b).toISOString()])).toEqual([
      ["2024-02-29T18:30:00.000Z", "2024-03-01T00:00:00.000Z"],
      ["2024-03-03T00:00:00.000Z", "2024-03-03T18:30:00.000Z"],
    ]);
    // One day at an offset is no whole UTC day: all of it is read from the rows.
    const one = rangeParts({ from: "2024-03-01", to: "2024-03-01", utcOffset: "-03:30" });
    expect(one.firstDay).toBe(one.endDay);
    expect(one.edges.reduce((n, [a, b]) => n + b - a, 0)).toBe(DAY);
  });

  for (const seed of [1, 2, 3]) {
    it(`answer what counting the rows answers, through inserts, changes and deletes (seed ${seed})`, async () => {
      const rand = mulberry32(seed * 7919);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
      const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
      // Instants on and around the days' edges at every offset, and anywhere in the window.
      const instant = (): Date => {
        const day = WINDOW_START + int(0, WINDOW_DAYS - 1) * DAY;
        const r = rand();
        if (r < 0.5) {
          const offset = pick(OFFSETS);
          const sign = offset.startsWith("-") ? -1 : 1;
          const shift = sign * (Number(offset.slice(1, 3)) * 3_600_000 + Number(offset.slice(4, 6)) * 60_000);
          return new Date(day - shift + pick([-1, 0, 0, 1]));
        }
        return new Date(day + Math.floor(rand() * DAY));
      };
      const { store, call } = await storeWithCaller(db);
      const sid = store.id;

      const check = async (rounds: number) => {
        for (let i = 0; i < rounds; i++) {
          const fromMs = WINDOW_START + int(-1, WINDOW_DAYS) * DAY;
          const from = new Date(fromMs).toISOString().slice(0, 10);
          const to = new Date(fromMs + int(0, 5) * DAY).toISOString().slice(0, 10);
          const utcOffset = pick(OFFSETS);
          const { start, end } = rangeParts({ from, to, utcOffset });
          const [oracle] = await withStore(db, sid, async (tx) =>
            (await tx.$client.query<Facts>(ORACLE, [new Date(start).toISOString(), new Date(end).toISOString()])).rows,
          );
          const got = (await call("analytics.summary", { from, to, utcOffset })) as Facts & { inventory: Record<string, number> };
          expect({ from, to, utcOffset, orders: got.orders, customers: got.customers, received: {
            unitsReceivedInRange: got.inventory.unitsReceivedInRange, adjustmentsInRange: got.inventory.adjustmentsInRange,
          } }).toEqual({ from, to, utcOffset, ...oracle! });
        }
      };

      // Inserts: many rows per statement, and one.
      await withStore(db, sid, async (tx) => {
        const { rows } = await tx.$client.query<{ variant_id: string; location_id: string }>("select variant_id, location_id from inventory_level limit 1");
        const { variant_id: variantId, location_id: locationId } = rows[0]!;
        const order = (number: number) => {
          const subtotal = int(0, 50_000);
          const discount = int(0, subtotal);
          const shipping = pick([0, 0, 4_900]);
          return {
            storeId: sid, number, email: `o${number}@example.test`, shipToState: "IN-MH", paymentMethod: "gateway", currency: "INR",
            shippingAddress: { name: "O", line1: "1 Road", city: "Pune", state: "IN-MH", postalCode: "411001", country: "IN" },
            subtotal, discount, shipping, total: subtotal - discount + shipping,
            status: pick(ORDER_STATUSES), paymentStatus: pick(PAYMENT_STATUSES), fulfillmentStatus: pick(FULFILLMENT_STATUSES), placedAt: instant(),
          };
        };
        await tx.insert(shopOrder).values(Array.from({ length: 40 }, (_, i) => order(5000 + i)) as (typeof shopOrder.$inferInsert)[]);
        for (let i = 0; i < 5; i++) await tx.insert(shopOrder).values(order(6000 + i) as typeof shopOrder.$inferInsert);
        await tx.insert(customer).values(
          Array.from({ length: 30 }, (_, i) => ({ storeId: sid, email: `c${i}@example.test`, acceptsMarketing: rand() < 0.5, createdAt: instant() })),
        );
        await tx.insert(customer).values({ storeId: sid, phone: "+919800000001", acceptsMarketing: true, createdAt: instant() });
        await tx.insert(inventoryAdjustment).values(
          Array.from({ length: 30 }, () => ({
            storeId: sid, variantId, locationId, delta: pick([-3, -1, 1, 2, 5, 12]), onHandAfter: 10, reason: pick(["received", "damaged", "returned"] as const), createdAt: instant(),
          })),
        );
      });
      await check(12);

      // Changes: of the counted facts (status, payment, total, time, consent) and of nothing counted; deletes.
      await withStore(db, sid, async (tx) => {
        const c = tx.$client;
        await c.query("update shop_order set status = 'cancelled' where number between 5000 and 5009");
        await c.query("update shop_order set payment_status = 'paid' where number = 5010");
        await c.query("update shop_order set status = 'open', payment_status = 'partially_refunded' where number in (5011, 5012, 6001)");
        await c.query("update shop_order set placed_at = placed_at + interval '1 day 3 hours' where number between 5013 and 5020");
        await c.query("update shop_order set subtotal = subtotal + 100, total = total + 100 where number between 5018 and 5025");
        await c.query("update shop_order set fulfillment_status = 'fulfilled', updated_at = now() where number >= 5000");
        await c.query("delete from shop_order where number in (5026, 5027, 6002)");
        await c.query("update customer set accepts_marketing = not accepts_marketing where email like 'c1%@example.test'");
        await c.query("update customer set created_at = created_at - interval '20 hours' where email like 'c2%@example.test'");
        await c.query("update customer set first_name = 'Renamed' where email like 'c3%@example.test'");
        await c.query("delete from customer where email in ('c4@example.test', 'c5@example.test')");
        await c.query("update inventory_adjustment set created_at = created_at + interval '7 hours' where delta > 2");
        await c.query("delete from inventory_adjustment where delta = -1");
      });
      await check(12);
    });
  }

  it("are each store's own", async () => {
    const a = await storeWithCaller(db);
    const b = await storeWithCaller(db);
    await withStore(db, b.store.id, (tx) => tx.$client.query("update shop_order set status = 'cancelled'"));
    const rollup = (storeId: string) =>
      withStore(db, storeId, async (tx) => {
        const { rows } = await tx.$client.query<{ placed: number; cancelled: number }>("select sum(placed)::int as placed, sum(cancelled)::int as cancelled from analytics_order_day");
        return rows[0];
      });
    expect(await rollup(a.store.id)).toEqual({ placed: 1, cancelled: 0 });
    expect(await rollup(b.store.id)).toEqual({ placed: 1, cancelled: 1 });
  });
});
