import { describe, expect, it } from "vitest";
import { sql } from "#shared/db/steps";
import { readOn, withStore } from "#shared/db/with-store";
import { expireStoreUnpaid } from "#shared/jobs/unpaid-expiry";
import { orderReadingPlan, recomputeOrderStatuses } from "#shared/orders/routines";
import { recomputeOrder } from "#shared/rules/status";
import { testDb } from "../../test/harness";
import { jobContext } from "../../test/jobs";
import { orderShop, placeTestOrder } from "../../test/orders";
import { callerFor } from "../../test/procedures";

/**
 * SPEC "Checkout and payment behaviour" 6: an order's statuses are derived, and one recompute routine is
 * their only writer (issue 20 item 12). Cancel and the expiry write their own fact (`cancelled_at`,
 * `expired_at`) and the recompute makes the order cancelled or expired from it.
 */
const db = testDb();
const HOUR = 3_600_000;

// Every source file of the Workers and the domain, as text (tests and the scale bench's fixtures aside).
const sources = import.meta.glob(["../**/*.ts", "../../workers/**/*.{ts,tsx}", "!../**/*.test.ts", "!../../workers/**/*.test.ts"], {
  query: "?raw",
  import: "default",
  eager: true,
}) as Record<string, string>;

/** The statements in `text` that write an order's status columns: SQL `update shop_order … set …` and drizzle's update(shopOrder).set(…). */
function statusWrites(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/update\s+shop_order\b[\s\S]{0,400}?\bset\b([\s\S]*?)(\bwhere\b|\bfrom\b|returning|`)/gi)) {
    if (/(^|[\s,(])(status|payment_status|fulfillment_status)\s*=/.test(m[1]!)) found.push(m[0].replace(/\s+/g, " ").slice(0, 160));
  }
  for (const m of text.matchAll(/update\(shopOrder\)\s*\.set\(\{([^}]*)\}/g)) {
    if (/\b(status|paymentStatus|fulfillmentStatus)\s*:/.test(m[1]!)) found.push(m[0].replace(/\s+/g, " ").slice(0, 160));
  }
  return found;
}

describe("the recompute routine is the only writer of an order's statuses", () => {
  it("no statement outside shared/orders/routines.ts sets status, payment_status or fulfillment_status", () => {
    expect(Object.keys(sources).length).toBeGreaterThan(100);
    const writers = Object.entries(sources).flatMap(([path, text]) => statusWrites(text).map((s) => `${path}: ${s}`));
    expect(writers.length).toBeGreaterThan(0);
    expect(writers.filter((w) => !w.split(":")[0]!.endsWith("orders/routines.ts") && !w.startsWith("./routines.ts:"))).toEqual([]);
  });

  it("finds a direct write where there is one (the scan itself can fail)", () => {
    expect(statusWrites("raw(q, sql`update shop_order set status = 'cancelled', updated_at = now() where id = ${id}`)")).toHaveLength(1);
    expect(statusWrites("sql`update shop_order o set expired_at = now(), updated_at = now() from target where o.id = target.id`")).toEqual([]);
    expect(statusWrites("q.update(shopOrder).set({ paymentStatus: 'paid' })")).toHaveLength(1);
  });

  it("the recompute makes an order cancelled or expired from its fact, and never leaves it", () => {
    const facts = { status: "open" as const, total: 1000, attempts: [{ status: "created" as const, amount: 1000 }], refunds: [], parcels: [{ id: "a" }], shipments: [] };
    expect(recomputeOrder({ ...facts, closed: "cancelled" }).status).toBe("cancelled");
    expect(recomputeOrder({ ...facts, closed: "expired" }).status).toBe("expired");
    expect(recomputeOrder({ ...facts, closed: null }).status).toBe("open");
    const late = { ...facts, attempts: [{ status: "captured" as const, amount: 1000 }] };
    expect(recomputeOrder({ ...late, status: "expired", closed: "expired" })).toEqual({ paymentStatus: "paid", fulfillmentStatus: "unfulfilled", status: "expired" });
  });

  it("cancel and the expiry write their fact, and the order's statuses are what the recompute derives from its rows", async () => {
    const { s, sql: query } = await orderShop(db);
    const cancelled = (await placeTestOrder(db, s, { email: "cancel@example.test" })).order;
    const expired = (await placeTestOrder(db, s, { email: "expire@example.test", at: new Date(Date.now() - 2 * HOUR) })).order;
    await callerFor(db, s.ownerUserId, s.id)("orders.cancel", { orderId: cancelled.id });
    await expireStoreUnpaid(jobContext(db, new Date()), s.id);
    const rows = await query<{ id: string; status: string; cancelled: boolean; expired: boolean }>(
      "select id, status, cancelled_at is not null as cancelled, expired_at is not null as expired from shop_order where id = any($1) order by status",
      [[cancelled.id, expired.id]],
    );
    expect(rows).toEqual([
      { id: cancelled.id, status: "cancelled", cancelled: true, expired: false },
      { id: expired.id, status: "expired", cancelled: false, expired: true },
    ]);
    for (const id of [cancelled.id, expired.id]) {
      const reading = (await withStore(db, s.id, (tx) => readOn(tx, (q) => orderReadingPlan(q, sql`${s.id}::uuid`, id))))!;
      const { paymentStatus, fulfillmentStatus, status } = reading.facts;
      expect({ paymentStatus, fulfillmentStatus, status }).toEqual(recomputeOrder(reading.facts));
    }
  });

  it("the fact alone, then the recompute: the order becomes cancelled (nothing else writes the status)", async () => {
    const { s, sql } = await orderShop(db);
    const { order } = await placeTestOrder(db, s, { email: "fact@example.test" });
    await sql("update shop_order set cancelled_at = now() where id = $1", [order.id]);
    expect(await withStore(db, s.id, (tx) => recomputeOrderStatuses(tx, order.id))).toMatchObject({ status: "cancelled", paymentStatus: "unpaid" });
    expect(await sql("select status from shop_order where id = $1", [order.id])).toEqual([{ status: "cancelled" }]);
  });
});
