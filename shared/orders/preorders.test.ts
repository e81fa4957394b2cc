import { describe, expect, it } from "vitest";
import { runPreorderBalances } from "#shared/jobs/preorder-balance";
import { testDb } from "../../test/harness";
import { jobContext } from "../../test/jobs";
import { orderShop, placeTestOrder } from "../../test/orders";
import { callerFor } from "../../test/procedures";
import { preorderBalance } from "./preorders";

const db = testDb();

describe("preorderBalance", () => {
  it("is the backordered units' share of their lines' value less the deposit, rounded half up", () => {
    // 3 units of a ₹10.00 line, 2 backordered: ₹20.00 share; 20 % deposit ₹4.00, balance ₹16.00.
    expect(preorderBalance([{ value: 3000, quantity: 3, backordered: 2 }], 20)).toBe(1600);
    // A discounted line: its value after discount is split by units (1999 × 2 / 3 = 1332.67 → 1333).
    expect(preorderBalance([{ value: 1999, quantity: 3, backordered: 2 }], 50)).toBe(666);
    // Lines with nothing backordered add nothing; several lines add up.
    expect(preorderBalance([{ value: 5000, quantity: 5, backordered: 0 }, { value: 1000, quantity: 1, backordered: 1 }, { value: 800, quantity: 2, backordered: 1 }], 25)).toBe(1050);
  });

  it("is 0 at 100 % or with nothing backordered, and the deposit is at least one minor unit", () => {
    expect(preorderBalance([{ value: 3000, quantity: 3, backordered: 2 }], 100)).toBe(0);
    expect(preorderBalance([{ value: 3000, quantity: 3, backordered: 0 }], 10)).toBe(0);
    expect(preorderBalance([], 10)).toBe(0);
    expect(preorderBalance([{ value: 49, quantity: 1, backordered: 1 }], 1)).toBe(48);
  });
});

describe("a bank-transfer pre-order", () => {
  it("'Mark as paid' takes the deposit, then the requested balance's own attempt, never a third", async () => {
    const { s, sql } = await orderShop(db);
    await sql("update product_variant set preorder = true");
    await sql("update inventory_level set on_hand = 0");
    await sql("update store set preorder_deposit_percent = 30");
    const call = callerFor(db, s.ownerUserId, s.id);
    const { order } = await placeTestOrder(db, s, { lines: [[s.variantId, 2]], paymentMethod: "manual_transfer" });
    const attempts = () => sql("select attempt, status, provider, amount::int from payment_attempt where order_id = $1 order by attempt", [order.id]);
    expect(await attempts()).toEqual([{ attempt: 1, status: "created", provider: "manual_transfer", amount: 600 }]);
    expect(await call("orders.setStatus", { orderId: order.id, action: "mark_paid" })).toMatchObject({ paymentStatus: "partially_paid" });
    const locationId = (await sql<{ id: string }>("select id from location"))[0]!.id;
    await call("inventory.adjust", { variantId: s.variantId, locationId, delta: 2, reason: "received" });
    await runPreorderBalances(jobContext(db, new Date()));
    expect(await attempts()).toEqual([
      { attempt: 1, status: "captured", provider: "manual_transfer", amount: 600 },
      { attempt: 2, status: "created", provider: "manual_transfer", amount: 1400 },
    ]);
    expect(await call("orders.setStatus", { orderId: order.id, action: "mark_paid" })).toMatchObject({ paymentStatus: "paid" });
    expect((await attempts()).map((a) => [a["attempt"], a["status"]])).toEqual([[1, "captured"], [2, "captured"]]);
  });
});
