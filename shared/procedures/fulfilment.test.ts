import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { uuidFrom } from "#shared/db/ids";
import { withStore } from "#shared/db/with-store";
import { providerServices } from "#shared/pipeline/providers";
import { recordGatewayRefund, refundOrder } from "#shared/orders/refunds";
import { applyShipmentStatus } from "#shared/orders/shipments";
import { localGateway } from "#shared/payments/local";
import { deriveLocalSecret } from "#shared/payments/local-protocol";
import { testDb } from "../../test/harness";
import { orderShop, paidGatewayOrder, placeGatewayOrder, placeTestOrder, TEST_GATEWAY } from "../../test/orders";
import { addMember, callerFor, failureMessage } from "../../test/procedures";

/** Shipping, RTO, refunds and returns through the real executor, real Postgres, the local gateway. */
const db = testDb();

interface OrderOut {
  id: string;
  status: string;
  paymentStatus: string;
  fulfillmentStatus: string;
  parcels: { id: string }[];
}

async function paidShop(quantity = 2) {
  const { s, sql } = await orderShop(db);
  const paid = await paidGatewayOrder(db, s, quantity);
  const call = callerFor(db, s.ownerUserId, s.id, providerServices(env));
  const order = (await call("orders.get", { id: paid.orderId })) as OrderOut & { lines: { id: string }[] };
  return { s, sql, call, paid, order, parcelId: order.parcels[0]!.id, lineId: order.lines[0]!.id };
}

const stock = async (sql: Awaited<ReturnType<typeof orderShop>>["sql"]) =>
  (await sql<{ on_hand: number; reserved: number }>("select on_hand, reserved from inventory_level"))[0]!;
const kinds = async (sql: Awaited<ReturnType<typeof orderShop>>["sql"], orderId: string) =>
  (await sql<{ kind: string }>("select kind from outbox_event where payload->>'orderId' = $1 order by created_at, kind", [orderId])).map((r) => r.kind);
const ship = { awb: "DLV-123456", courierName: "Delhivery", trackingUrl: "https://track.example/DLV-123456" };

describe("orders.fulfill", () => {
  it("ships a paid parcel: the shipment, its stock leaving (reserved first), the order fulfilled, one event each", async () => {
    const { sql, call, paid, parcelId } = await paidShop(2);
    expect(await stock(sql)).toEqual({ on_hand: 5, reserved: 2 });
    const out = (await call("orders.fulfill", { orderId: paid.orderId, parcelId, tracking: ship })) as { shipmentId: string; order: OrderOut };
    expect(out.order).toMatchObject({ paymentStatus: "paid", fulfillmentStatus: "fulfilled", status: "open" });
    expect(await stock(sql)).toEqual({ on_hand: 3, reserved: 0 });
    expect(await sql("select delta, on_hand_after, reason, note from inventory_adjustment where reason = 'shipped'")).toEqual([
      { delta: -2, on_hand_after: 3, reason: "shipped", note: expect.stringMatching(/^Order #\d+$/) },
    ]);
    expect(await kinds(sql, paid.orderId)).toEqual(expect.arrayContaining(["shipment.created", "order.fulfilled"]));
    const got = (await call("orders.get", { id: paid.orderId })) as { shipments: { id: string; awb: string; provider: string; status: string; events: unknown[] }[] };
    expect(got.shipments).toMatchObject([{ id: out.shipmentId, awb: "DLV-123456", provider: "manual", status: "pending", events: [{ status: "pending", source: "merchant" }] }]);
    // Cancelling a shipped order is refused; so is shipping the parcel again.
    expect(await failureMessage(call("orders.fulfill", { orderId: paid.orderId, parcelId, tracking: { ...ship, awb: "DLV-999999" } }))).toMatch(/CONFLICT.*already has shipment DLV-123456/);
  });

  it("refuses an unpaid order, a parcel of another order, bad tracking, and a booking with no courier to book", async () => {
    const { s, call, paid, parcelId } = await paidShop(1);
    const unpaid = (await placeTestOrder(db, s)).order;
    expect(await failureMessage(call("orders.fulfill", { orderId: unpaid.id, parcelId: unpaid.parcels[0]!.id, tracking: ship }))).toMatch(/CONFLICT.*unpaid: it ships once it is paid/);
    expect(await failureMessage(call("orders.fulfill", { orderId: paid.orderId, parcelId: unpaid.parcels[0]!.id, tracking: ship }))).toMatch(/NOT_FOUND.*no such parcel/);
    expect(await failureMessage(call("orders.fulfill", { orderId: paid.orderId, parcelId, tracking: { ...ship, awb: "x" } }))).toMatch(/tracking\.awb/);
    expect(await failureMessage(call("orders.fulfill", { orderId: paid.orderId, parcelId, tracking: { ...ship, trackingUrl: "javascript:alert(1)" } }))).toMatch(/tracking\.trackingUrl/);
    const bare = callerFor(db, s.ownerUserId, s.id);
    expect(await failureMessage(bare("orders.fulfill", { orderId: paid.orderId, parcelId }))).toMatch(/BAD_REQUEST.*tracking/);
  });
});

describe("shipment statuses and RTO", () => {
  it("delivery completes a paid order; late and repeated reports change nothing", async () => {
    const { s, sql, call, paid, parcelId } = await paidShop(1);
    const { shipmentId } = (await call("orders.fulfill", { orderId: paid.orderId, parcelId, tracking: ship })) as { shipmentId: string };
    const apply = (status: Parameters<typeof applyShipmentStatus>[2]) => withStore(db, s.id, (tx) => applyShipmentStatus(tx, shipmentId, status, "webhook"));
    expect((await apply("in_transit")).order.fulfillmentStatus).toBe("fulfilled");
    expect((await apply("delivered")).order).toEqual({ paymentStatus: "paid", fulfillmentStatus: "delivered", status: "completed" });
    expect(await apply("in_transit")).toMatchObject({ applied: false, status: "delivered" });
    expect(await apply("delivered")).toMatchObject({ applied: false });
    const evs = await kinds(sql, paid.orderId);
    expect(evs.filter((k) => k === "order.completed")).toHaveLength(1);
    expect(evs.filter((k) => k === "order.delivered")).toHaveLength(1);
  });

  it("marking RTO writes order.rto and one task; the task can be done; a delivered shipment cannot be marked", async () => {
    const { sql, call, paid, parcelId } = await paidShop(1);
    const { shipmentId } = (await call("orders.fulfill", { orderId: paid.orderId, parcelId, tracking: ship })) as { shipmentId: string };
    const rto = (await call("orders.markRto", { orderId: paid.orderId, shipmentId })) as OrderOut;
    expect(rto.fulfillmentStatus).toBe("rto_initiated");
    await call("orders.markRto", { orderId: paid.orderId, shipmentId });
    const back = (await call("orders.markRto", { orderId: paid.orderId, shipmentId, delivered: true })) as OrderOut;
    expect(back).toMatchObject({ fulfillmentStatus: "rto_delivered", status: "completed" });
    expect((await kinds(sql, paid.orderId)).filter((k) => k === "order.rto")).toHaveLength(1);
    const mine = async (status = "open") =>
      ((await call("tasks.list", { status })) as { items: { id: string; kind: string; orderId: string; title: string }[] }).items.filter((t) => t.orderId === paid.orderId);
    const tasks = { items: await mine() };
    expect(tasks.items).toMatchObject([{ kind: "rto", orderId: paid.orderId, title: expect.stringContaining("DLV-123456") }]);
    await call("tasks.done", { id: tasks.items[0]!.id });
    expect(await mine()).toEqual([]);
    expect(await mine("done")).toHaveLength(1);
    expect(await failureMessage(call("orders.markRto", { orderId: paid.orderId, shipmentId: paid.attemptId }))).toMatch(/NOT_FOUND.*no such shipment/);
  });

  it("a shipment cancelled before pickup puts its units back, held for the order, and the parcel can ship again", async () => {
    const { s, sql, call, paid, parcelId } = await paidShop(2);
    const { shipmentId } = (await call("orders.fulfill", { orderId: paid.orderId, parcelId, tracking: ship })) as { shipmentId: string };
    const cancelled = await withStore(db, s.id, (tx) => applyShipmentStatus(tx, shipmentId, "cancelled", "webhook"));
    expect(cancelled.order.fulfillmentStatus).toBe("unfulfilled");
    expect(await stock(sql)).toEqual({ on_hand: 5, reserved: 2 });
    await call("orders.fulfill", { orderId: paid.orderId, parcelId, tracking: { ...ship, awb: "DLV-654321" } });
    expect(await stock(sql)).toEqual({ on_hand: 3, reserved: 0 });
  });
});

describe("orders.refund", () => {
  it("refunds part then the rest through the gateway; statuses follow the refund rows; more than is left is refused", async () => {
    const { sql, call, paid } = await paidShop(1);
    const first = (await call("orders.refund", { orderId: paid.orderId, amount: 300, reason: "Damaged box" })) as { refunds: { status: string; amount: number; outsideGateway: boolean }[]; order: OrderOut };
    expect(first.refunds).toEqual([{ id: expect.any(String), amount: 300, status: "processed", outsideGateway: false }]);
    expect(first.order.paymentStatus).toBe("partially_refunded");
    expect(await failureMessage(call("orders.refund", { orderId: paid.orderId, amount: paid.total }))).toMatch(/CONFLICT.*At most 700/);
    const rest = (await call("orders.refund", { orderId: paid.orderId })) as { refunds: { amount: number }[]; order: OrderOut };
    expect(rest.refunds.map((r) => r.amount)).toEqual([paid.total - 300]);
    expect(rest.order.paymentStatus).toBe("refunded");
    expect(await sql("select status from payment_attempt where id = $1", [paid.attemptId])).toEqual([{ status: "refunded" }]);
    expect((await kinds(sql, paid.orderId)).filter((k) => k === "order.refunded")).toHaveLength(2);
    expect(await failureMessage(call("orders.refund", { orderId: paid.orderId }))).toMatch(/CONFLICT.*holds no captured money/);
    // Fully refunded and unshipped: it can now be cancelled, which releases its stock.
    expect(((await call("orders.cancel", { orderId: paid.orderId })) as OrderOut).status).toBe("cancelled");
  });

  it("a gateway that fails writes nothing; the retry sends the same idempotency key and gets the same refund", async () => {
    const { s, sql, paid } = await paidShop(1);
    const secret = await deriveLocalSecret(TEST_GATEWAY.rootSecret, s.id);
    const down = localGateway({ storeId: s.id, secret, behaviour: { failRefund: "unavailable" } });
    const refused = localGateway({ storeId: s.id, secret, behaviour: { failRefund: "declined" } });
    await expect(withStore(db, s.id, (tx) => refundOrder(tx, { orderId: paid.orderId, amount: 100 }, down, null))).rejects.toMatchObject({ code: "SERVICE_UNAVAILABLE" });
    await expect(withStore(db, s.id, (tx) => refundOrder(tx, { orderId: paid.orderId, amount: 100 }, refused, null))).rejects.toMatchObject({ code: "CONFLICT" });
    expect(await sql("select * from refund where order_id = $1", [paid.orderId])).toEqual([]);
    const up = localGateway({ storeId: s.id, secret });
    const made = await withStore(db, s.id, (tx) => refundOrder(tx, { orderId: paid.orderId, amount: 100 }, up, null));
    // The failed tries wrote nothing, so this is refund number 1 again: the id (the gateway's key) they asked with.
    expect(made.refunds[0]!.id).toBe(await uuidFrom(`${paid.orderId}:refund:1`));
    const rows = await sql<{ id: string; provider_refund_id: string }>("select id, provider_refund_id from refund where order_id = $1", [paid.orderId]);
    expect(rows).toEqual([{ id: made.refunds[0]!.id, provider_refund_id: expect.stringMatching(/^lrfnd_/) }]);
  });

  it("an order marked as paid by hand is refunded outside the gateway, and the row says so", async () => {
    const { s, call } = await paidShop(1);
    const manual = (await placeTestOrder(db, s, { paymentMethod: "manual_transfer" })).order;
    await call("orders.setStatus", { orderId: manual.id, action: "mark_paid" });
    const out = (await call("orders.refund", { orderId: manual.id })) as { refunds: { outsideGateway: boolean; status: string }[]; order: OrderOut };
    expect(out.refunds).toMatchObject([{ outsideGateway: true, status: "processed" }]);
    expect(out.order.paymentStatus).toBe("refunded");
  });

  it("Staff may not refund, and a token never may", async () => {
    const { s, call, paid } = await paidShop(1);
    const staff = await addMember(db, s, "staff");
    expect(await failureMessage(callerFor(db, staff.userId, s.id, providerServices(env))("orders.refund", { orderId: paid.orderId }))).toMatch(/FORBIDDEN/);
    expect(((await call("orders.get", { id: paid.orderId })) as OrderOut).paymentStatus).toBe("paid");
  });
});

describe("returns", () => {
  it("request → approve → receive (restocked) → refund, each with its event and returnId; steps out of order are refused", async () => {
    const { sql, call, paid, parcelId, lineId } = await paidShop(2);
    expect(await failureMessage(call("returns.request", { orderId: paid.orderId, lines: [{ orderLineId: lineId, quantity: 1 }], reason: "Too small" }))).toMatch(/lines\.0\.quantity.*at most 0/);
    await call("orders.fulfill", { orderId: paid.orderId, parcelId, tracking: ship });
    expect(await failureMessage(call("returns.request", { orderId: paid.orderId, lines: [{ orderLineId: lineId, quantity: 3 }], reason: "Too small" }))).toMatch(/at most 2/);
    const { returnId, number } = (await call("returns.request", { orderId: paid.orderId, lines: [{ orderLineId: lineId, quantity: 1 }], reason: "Too small" })) as { returnId: string; number: number };
    expect(number).toBe(1);
    expect(await failureMessage(call("returns.receive", { returnId }))).toMatch(/CONFLICT.*requested: it cannot be received/);
    await call("returns.approve", { returnId });
    await call("returns.receive", { returnId, restock: true });
    expect(await stock(sql)).toEqual({ on_hand: 4, reserved: 0 });
    const refunded = (await call("returns.refund", { returnId })) as { refunds: { amount: number }[] };
    expect(refunded.refunds.map((r) => r.amount)).toEqual([paid.total / 2]);
    const order = (await call("orders.get", { id: paid.orderId })) as OrderOut & { returns: { status: string; restocked: boolean }[]; refunds: { returnId: string }[] };
    expect(order).toMatchObject({ paymentStatus: "partially_refunded", returns: [{ status: "refunded", restocked: true }], refunds: [{ returnId }] });
    const events = await sql<{ kind: string; return_id: string }>("select kind, payload->>'returnId' as return_id from outbox_event where kind like 'return.%' order by created_at, kind");
    expect(events).toEqual(["return.requested", "return.approved", "return.received", "return.refunded"].map((kind) => ({ kind, return_id: returnId })));
    // A second return gets its own number and events; the first one's units no longer count as returnable.
    const second = (await call("returns.request", { orderId: paid.orderId, lines: [{ orderLineId: lineId, quantity: 1 }], reason: "Colour" })) as { returnId: string; number: number };
    expect(second.number).toBe(2);
    await call("returns.reject", { returnId: second.returnId, reason: "Worn" });
    expect(await failureMessage(call("returns.approve", { returnId: second.returnId }))).toMatch(/rejected/);
  });
});

describe("refunds the gateway reports (webhook)", () => {
  it("a dashboard refund is recorded once; a refund reported before the capture captures first", async () => {
    const { s, sql, call, paid } = await paidShop(1);
    const report = (refundId: string, amount: number, attempt = { id: paid.attemptId, orderId: paid.orderId }) =>
      withStore(db, s.id, (tx) => recordGatewayRefund(tx, attempt, { refundId, amount }));
    expect(await report("rfnd_dash1", 400)).toBe(true);
    expect(await report("rfnd_dash1", 400)).toBe(false);
    expect(((await call("orders.get", { id: paid.orderId })) as OrderOut).paymentStatus).toBe("partially_refunded");
    expect(await sql("select amount::int, status, reason from refund where order_id = $1", [paid.orderId])).toEqual([
      { amount: 400, status: "processed", reason: "Refunded at the gateway" },
    ]);
    // An attempt still pending in our rows: the refund proves the capture.
    const early = await placeGatewayOrder(db, s, 1);
    expect(await report("rfnd_early", early.total, { id: early.attemptId, orderId: early.orderId })).toBe(true);
    expect(await sql("select status from payment_attempt where id = $1", [early.attemptId])).toEqual([{ status: "refunded" }]);
    expect(((await call("orders.get", { id: early.orderId })) as OrderOut).paymentStatus).toBe("refunded");
  });
});

describe("racing writers", () => {
  it("ten refunds of everything at once: one goes through, the rest are refused, the money goes back once", async () => {
    const { sql, call, paid } = await paidShop(1);
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => call("orders.refund", { orderId: paid.orderId })));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(await sql("select sum(amount)::int as total from refund where order_id = $1", [paid.orderId])).toEqual([{ total: paid.total }]);
  });

  it("a courier's RTO reports racing the merchant's RTO marks: no deadlock, one task, one order.rto", async () => {
    const { s, sql, call, paid, parcelId } = await paidShop(1);
    const { shipmentId } = (await call("orders.fulfill", { orderId: paid.orderId, parcelId, tracking: ship })) as { shipmentId: string };
    await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        i % 2
          ? call("orders.markRto", { orderId: paid.orderId, shipmentId })
          : withStore(db, s.id, (tx) => applyShipmentStatus(tx, shipmentId, "rto_initiated", "webhook")),
      ),
    );
    expect(await sql("select count(*)::int as n from merchant_task where subject_id = $1", [shipmentId])).toEqual([{ n: 1 }]);
    expect((await kinds(sql, paid.orderId)).filter((k) => k === "order.rto")).toHaveLength(1);
    expect(await sql("select count(*)::int as n from shipment_event where shipment_id = $1 and status = 'rto_initiated'", [shipmentId])).toEqual([{ n: 1 }]);
  });
});
