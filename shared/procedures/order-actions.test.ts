import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { applyPaymentStatus } from "#shared/orders/routines";
import { testDb } from "../../test/harness";
import { orderShop, placeTestOrder } from "../../test/orders";
import { callerFor, failureText, outboxPayloads } from "../../test/procedures";

/** orders.setStatus (mark_paid) and orders.cancel through the real executor against real Postgres. */
const db = testDb();
// A Database keeps one connection, so racing calls each get their own (as concurrent requests do).
const racers = Array.from({ length: 5 }, () => testDb());

async function shop() {
  const { s, sql } = await orderShop(db);
  const call = callerFor(db, s.ownerUserId, s.id);
  const place = async (quantity = 1) => (await placeTestOrder(db, s, { lines: [[s.variantId, quantity]] })).order;
  const attempts = (orderId: string) =>
    sql<{ attempt: number; status: string; provider: string; amount: string }>(
      "select attempt, status, provider, amount from payment_attempt where order_id = $1 order by attempt",
      [orderId],
    );
  const count = async (kind: string) => (await outboxPayloads(db, s.id, kind)).length;
  const stock = () => sql<{ location: string; on_hand: number; reserved: number }>(
    "select l.name as location, il.on_hand, il.reserved from inventory_level il join location l on l.id = il.location_id where il.variant_id = $1 order by l.name",
    [s.variantId],
  );
  const failAttempt = (orderId: string) =>
    withStore(db, s.id, async (tx) => {
      const { rows } = await tx.$client.query<{ id: string }>("select id from payment_attempt where order_id = $1", [orderId]);
      for (const r of rows) await applyPaymentStatus(tx, r.id, "failed", "gateway", { error: "gateway unavailable" });
    });
  const race = (procedure: string, input: unknown) => Promise.all(racers.map((r) => callerFor(r, s.ownerUserId, s.id)(procedure, input)));
  return { s, sql, call, race, place, attempts, count, stock, failAttempt };
}

const reasonOf = (p: Promise<unknown>) => p.then(() => "ok", (e: { code?: string; data?: { reason?: string } }) => `${e.code} ${e.data?.reason}`);

describe("orders.setStatus mark_paid", () => {
  it("captures the open attempt through the routine: paid, order.paid once; a second call changes nothing", async () => {
    const { call, place, attempts, count } = await shop();
    const order = await place();
    const paid = await call("orders.setStatus", { orderId: order.id, action: "mark_paid" });
    expect(paid).toMatchObject({ id: order.id, status: "open", paymentStatus: "paid", fulfillmentStatus: "unfulfilled", parcels: order.parcels });
    expect(await attempts(order.id)).toEqual([{ attempt: 1, status: "captured", provider: "local", amount: "1000" }]);
    expect(await call("orders.setStatus", { orderId: order.id, action: "mark_paid" })).toEqual(paid);
    expect(await attempts(order.id)).toHaveLength(1);
    expect(await count("order.paid")).toBe(1);
  });

  it("every attempt failed → a new manual attempt for the total; racing marks capture once", async () => {
    const { race, place, attempts, count, failAttempt } = await shop();
    const order = await place(2);
    await failAttempt(order.id);
    const results = await race("orders.setStatus", { orderId: order.id, action: "mark_paid" });
    expect(results.map((r) => (r as { paymentStatus: string }).paymentStatus)).toEqual(Array(5).fill("paid"));
    expect(await attempts(order.id)).toEqual([
      { attempt: 1, status: "failed", provider: "local", amount: "2000" },
      { attempt: 2, status: "captured", provider: "manual", amount: "2000" },
    ]);
    expect(await count("order.paid")).toBe(1);
  });

  it("part already captured → a manual attempt for the balance only, never a second full capture", async () => {
    const { s, sql, call, place, attempts, failAttempt } = await shop();
    const order = await place(2);
    await failAttempt(order.id);
    await sql("insert into payment_attempt (store_id, order_id, attempt, idempotency_key, provider, amount) values ($1, $2, 2, $3, 'local', 500)", [s.id, order.id, `${order.id}:2`]);
    const deposit = (await sql<{ id: string }>("select id from payment_attempt where order_id = $1 and attempt = 2", [order.id]))[0]!.id;
    await withStore(db, s.id, (tx) => applyPaymentStatus(tx, deposit, "captured", "webhook"));
    expect(await call("orders.get", { id: order.id })).toMatchObject({ paymentStatus: "partially_paid" });
    expect(await call("orders.setStatus", { orderId: order.id, action: "mark_paid" })).toMatchObject({ paymentStatus: "paid" });
    expect((await attempts(order.id)).map((a) => [a.attempt, a.status, a.provider, a.amount])).toEqual([
      [1, "failed", "local", "2000"],
      [2, "captured", "local", "500"],
      [3, "captured", "manual", "1500"],
    ]);
  });

  it("refuses a cancelled or expired order with 409 naming why, and bad actions with 400", async () => {
    const { call, place, sql, count } = await shop();
    const cancelled = await place();
    await call("orders.cancel", { orderId: cancelled.id });
    expect(await reasonOf(call("orders.setStatus", { orderId: cancelled.id, action: "mark_paid" }))).toBe("CONFLICT order_cancelled");
    const expired = await place();
    await sql("update shop_order set status = 'expired' where id = $1", [expired.id]);
    expect(await reasonOf(call("orders.setStatus", { orderId: expired.id, action: "mark_paid" }))).toBe("CONFLICT order_expired");
    expect(await count("order.paid")).toBe(0);
    expect(await failureText(call("orders.setStatus", { orderId: expired.id, action: "mark_shipped" }))).toBe("BAD_REQUEST action");
    expect(await failureText(call("orders.setStatus", { orderId: "1002", action: "mark_paid" }))).toBe("BAD_REQUEST orderId");
    expect(await failureText(call("orders.setStatus", { orderId: crypto.randomUUID(), action: "mark_paid" }))).toBe("NOT_FOUND");
  });
});

describe("orders.cancel", () => {
  it("releases exactly the order's reserved units, sets cancelled and writes its events; a second cancel changes nothing", async () => {
    const { s, sql, call, place, stock } = await shop();
    const locationId = (await sql<{ id: string }>("select id from location"))[0]!.id;
    const kept = await place(1);
    const order = await place(3);
    expect(await stock()).toEqual([{ location: "Fixture warehouse", on_hand: 5, reserved: 4 }]);
    const cancelled = await call("orders.cancel", { orderId: order.id, reason: "Customer changed their mind" });
    expect(cancelled).toMatchObject({ id: order.id, status: "cancelled", paymentStatus: "unpaid" });
    expect(await stock()).toEqual([{ location: "Fixture warehouse", on_hand: 5, reserved: 1 }]);
    expect(await sql("select fl.reserved from fulfillment_order_line fl join fulfillment_order f on f.id = fl.fulfillment_order_id where f.order_id = $1", [order.id])).toEqual([{ reserved: 0 }]);
    expect(await outboxPayloads(db, s.id, "order.cancelled")).toEqual([{ orderId: order.id, number: order.number, paymentStatus: "unpaid", reason: "Customer changed their mind" }]);
    expect(await outboxPayloads(db, s.id, "inventory.released")).toEqual([{ orderId: order.id, items: [{ variantId: s.variantId, locationId, quantity: 3 }] }]);

    expect(await call("orders.cancel", { orderId: order.id })).toEqual(cancelled);
    expect(await stock()).toEqual([{ location: "Fixture warehouse", on_hand: 5, reserved: 1 }]);
    expect(await outboxPayloads(db, s.id, "order.cancelled")).toHaveLength(1);
    expect(await sql("select status from shop_order where id = $1", [kept.id])).toEqual([{ status: "open" }]);
  });

  it("releases every parcel's reservation at its own location", async () => {
    const { s, sql, call, place, stock } = await shop();
    await sql("insert into location (store_id, name, state, priority) values ($1, 'Pune Hub', 'IN-MH', 200)", [s.id]);
    await sql("insert into inventory_level (store_id, variant_id, location_id, on_hand) select $1, $2, id, 3 from location where name = 'Pune Hub'", [s.id, s.variantId]);
    const order = await place(7);
    expect(order.parcels).toHaveLength(2);
    expect(await stock()).toEqual([
      { location: "Fixture warehouse", on_hand: 5, reserved: 5 },
      { location: "Pune Hub", on_hand: 3, reserved: 2 },
    ]);
    await call("orders.cancel", { orderId: order.id });
    expect(await stock()).toEqual([
      { location: "Fixture warehouse", on_hand: 5, reserved: 0 },
      { location: "Pune Hub", on_hand: 3, reserved: 0 },
    ]);
    const [released] = await outboxPayloads(db, s.id, "inventory.released");
    expect((released!["items"] as { quantity: number }[]).map((i) => i.quantity).sort()).toEqual([2, 5]);
  });

  it("racing cancels release once; reserved never goes below zero", async () => {
    const { s, sql, race, place, stock } = await shop();
    const order = await place(2);
    // Someone corrected the stock row meanwhile: the order holds 2 but the row shows only 1 reserved.
    await sql("update inventory_level set reserved = 1 where variant_id = $1", [s.variantId]);
    const results = await race("orders.cancel", { orderId: order.id });
    expect(results.map((r) => (r as { status: string }).status)).toEqual(Array(5).fill("cancelled"));
    expect(await stock()).toEqual([{ location: "Fixture warehouse", on_hand: 5, reserved: 0 }]);
    expect(await outboxPayloads(db, s.id, "inventory.released")).toEqual([{ orderId: order.id, items: [{ variantId: s.variantId, locationId: expect.any(String), quantity: 1 }] }]);
  });

  it("a paid order must be refunded first (409), an expired one is refused, and nothing is released", async () => {
    const { sql, call, place, stock, count } = await shop();
    const paid = await place(2);
    await call("orders.setStatus", { orderId: paid.id, action: "mark_paid" });
    expect(await reasonOf(call("orders.cancel", { orderId: paid.id }))).toBe("CONFLICT refund_first");
    const expired = await place(1);
    await sql("update shop_order set status = 'expired' where id = $1", [expired.id]);
    expect(await reasonOf(call("orders.cancel", { orderId: expired.id }))).toBe("CONFLICT order_expired");
    expect(await stock()).toEqual([{ location: "Fixture warehouse", on_hand: 5, reserved: 3 }]);
    expect(await count("order.cancelled")).toBe(0);
    expect(await sql("select status, payment_status from shop_order where id = $1", [paid.id])).toEqual([{ status: "open", payment_status: "paid" }]);
    expect(await failureText(call("orders.cancel", { orderId: paid.id, reason: "" }))).toBe("BAD_REQUEST reason");
  });

  it("a cancel racing a capture webhook: one of them goes first, never a deadlock; a refused cancel releases nothing", async () => {
    const { s, sql, place, stock } = await shop();
    for (let round = 0; round < 3; round++) {
      const order = await place(1);
      const attemptId = (await sql<{ id: string }>("select id from payment_attempt where order_id = $1", [order.id]))[0]!.id;
      const [cancel, capture] = await Promise.allSettled([
        callerFor(racers[0]!, s.ownerUserId, s.id)("orders.cancel", { orderId: order.id }),
        withStore(racers[1]!, s.id, (tx) => applyPaymentStatus(tx, attemptId, "captured", "webhook")),
      ]);
      expect(capture.status).toBe("fulfilled");
      const [row] = await sql<{ status: string; payment_status: string; reserved: number }>(
        `select o.status, o.payment_status, (select sum(fl.reserved)::int from fulfillment_order_line fl join fulfillment_order f on f.id = fl.fulfillment_order_id where f.order_id = o.id) as reserved
         from shop_order o where o.id = $1`,
        [order.id],
      );
      if (cancel.status === "fulfilled") expect(row).toEqual({ status: "cancelled", payment_status: "paid", reserved: 0 });
      else {
        expect(cancel.reason).toMatchObject({ code: "CONFLICT", data: { reason: "refund_first" } });
        expect(row).toEqual({ status: "open", payment_status: "paid", reserved: 1 });
      }
    }
    const held = await sql<{ n: number }>(
      "select coalesce(sum(fl.reserved), 0)::int as n from fulfillment_order_line fl join fulfillment_order f on f.id = fl.fulfillment_order_id join shop_order o on o.id = f.order_id where o.cart_id is not null",
    );
    expect((await stock())[0]!.reserved).toBe(held[0]!.n);
  });

  it("a payment that lands after the cancel still counts, and the order stays cancelled (recompute never leaves it)", async () => {
    const { s, sql, call, place } = await shop();
    const order = await place();
    await call("orders.cancel", { orderId: order.id });
    const attemptId = (await sql<{ id: string }>("select id from payment_attempt where order_id = $1", [order.id]))[0]!.id;
    await withStore(db, s.id, (tx) => applyPaymentStatus(tx, attemptId, "captured", "webhook"));
    expect(await sql("select status, payment_status from shop_order where id = $1", [order.id])).toEqual([{ status: "cancelled", payment_status: "paid" }]);
  });
});
