import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { rpc, sessionFor, type Browser, type RpcError } from "../../test/admin";
import { withStore } from "#shared/db/with-store";
import { applyShipmentStatus } from "#shared/orders/shipments";
import { testDb } from "../../test/harness";
import { orderShop, paidGatewayOrder } from "../../test/orders";
import { newTrace, tripsOf } from "../../test/proxy";

/**
 * Round trips of the order flow's changes after checkout (modelled on ./round-trips.test.ts "round trips:
 * changes"): RTO marks and the steps of a return read, then change (two round trips; one when the reading
 * refuses). Shipping reads, books the courier between the two units (or records the merchant's own
 * tracking), then changes: two. Refunds call the gateway inside the store's open transaction (the refund's
 * key must be claimed before the call: docs/decisions/0015-one-round-trip.md). Then the guards.
 */
const db = testDb();
const proxy = (env as unknown as { DB_WS_PROXY: string }).DB_WS_PROXY;

async function change<T = Record<string, unknown>>(browser: Browser, path: string, input: unknown) {
  const trace = newTrace();
  const res = await rpc(browser, path, input, { "x-commerce-trace": trace });
  const body = await res.text();
  const trips = await tripsOf(proxy, trace);
  return { status: res.status, json: (JSON.parse(body) as { json: T }).json, turns: trips.turns, after: trips.after.turns };
}

const ship = { awb: "RT-123456", courierName: "Delhivery" };

/** A paid order of a fresh shop, its parcel shipped with the merchant's own tracking number. */
async function shippedOrder(quantity = 2) {
  const { s, sql } = await orderShop(db);
  const browser = await sessionFor(db, s.ownerUserId, s.id);
  const paid = await paidGatewayOrder(db, s, quantity);
  const [parcel] = await sql<{ id: string }>("select id from fulfillment_order where order_id = $1", [paid.orderId]);
  const [line] = await sql<{ id: string }>("select id from order_line where order_id = $1", [paid.orderId]);
  const shipped = await change<{ shipmentId: string }>(browser, "orders/fulfill", { orderId: paid.orderId, parcelId: parcel!.id, tracking: ship });
  expect(shipped.status).toBe(200);
  expect(shipped.turns).toBe(2);
  return { s, sql, browser, orderId: paid.orderId, shipmentId: shipped.json.shipmentId, lineId: line!.id };
}

describe("round trips: shipments' and returns' changes", () => {
  it("orders.markRto reads, then changes: two round trips, also when nothing moves; a refusal is one", async () => {
    const { s, browser, orderId, shipmentId } = await shippedOrder();
    const rto = await change(browser, "orders/markRto", { orderId, shipmentId });
    expect(rto).toMatchObject({ status: 200, turns: 2, after: 0, json: { id: orderId, fulfillmentStatus: "rto_initiated" } });
    expect(await change(browser, "orders/markRto", { orderId, shipmentId })).toMatchObject({ status: 200, turns: 2, after: 0, json: { fulfillmentStatus: "rto_initiated" } });
    expect(await change(browser, "orders/markRto", { orderId, shipmentId, delivered: true })).toMatchObject({
      status: 200,
      turns: 2,
      json: { fulfillmentStatus: "rto_delivered", status: "completed" },
    });
    expect(await change<RpcError>(browser, "orders/markRto", { orderId, shipmentId: crypto.randomUUID() })).toMatchObject({ status: 404, turns: 1 });
    const other = await shippedOrder(1);
    await withStore(db, other.s.id, (tx) => applyShipmentStatus(tx, other.shipmentId, "delivered", "webhook"));
    expect(await change<RpcError>(other.browser, "orders/markRto", { orderId: other.orderId, shipmentId: other.shipmentId })).toMatchObject({
      status: 409,
      turns: 1,
      json: { data: { reason: "shipment_delivered" } },
    });
    expect(s.id).not.toBe(other.s.id);
  });

  it("returns.request, approve, reject and receive read, then change: two round trips each; a refusal is one", async () => {
    const { sql, browser, orderId, lineId } = await shippedOrder();
    const requested = await change<{ returnId: string; number: number }>(browser, "returns/request", { orderId, lines: [{ orderLineId: lineId, quantity: 1 }], reason: "Too small" });
    expect(requested).toMatchObject({ status: 200, turns: 2, after: 0, json: { returnId: expect.any(String), number: 1 } });
    const { returnId } = requested.json;
    expect(await change<RpcError>(browser, "returns/receive", { returnId })).toMatchObject({ status: 409, turns: 1, json: { data: { reason: "return_requested" } } });
    expect(await change(browser, "returns/approve", { returnId })).toMatchObject({ status: 200, turns: 2, after: 0, json: { returnId, status: "approved" } });
    expect(await change(browser, "returns/receive", { returnId, restock: true })).toMatchObject({ status: 200, turns: 2, after: 0, json: { returnId, status: "received" } });
    const second = await change<{ returnId: string; number: number }>(browser, "returns/request", { orderId, lines: [{ orderLineId: lineId, quantity: 1 }], reason: "Colour" });
    expect(second).toMatchObject({ status: 200, turns: 2, json: { number: 2 } });
    expect(await change(browser, "returns/reject", { returnId: second.json.returnId, reason: "Worn" })).toMatchObject({ status: 200, turns: 2, after: 0, json: { status: "rejected" } });
    const none = await change<RpcError>(browser, "returns/request", { orderId, lines: [{ orderLineId: lineId, quantity: 2 }], reason: "More" });
    expect(none).toMatchObject({ status: 409, turns: 1, json: { data: { reason: "not_returnable" } } });
    expect(await sql("select kind, payload->>'returnId' as return_id, payload->>'number' as number from outbox_event where kind like 'return.%' order by seq")).toEqual([
      { kind: "return.requested", return_id: returnId, number: "1" },
      { kind: "return.approved", return_id: returnId, number: "1" },
      { kind: "return.received", return_id: returnId, number: "1" },
      { kind: "return.requested", return_id: second.json.returnId, number: "2" },
      { kind: "return.rejected", return_id: second.json.returnId, number: "2" },
    ]);
    expect(await sql("select delta, reason, note from inventory_adjustment where reason = 'returned'")).toEqual([
      { delta: 1, reason: "returned", note: expect.stringMatching(/^Return 1 of order #\d+$/) },
    ]);
  });
});

describe("guards of these changes", () => {
  it("another store's shipment and return are not found, and stay as they were", async () => {
    const mine = await shippedOrder(1);
    const theirs = await shippedOrder(1);
    const theirReturn = await change<{ returnId: string }>(theirs.browser, "returns/request", { orderId: theirs.orderId, lines: [{ orderLineId: theirs.lineId, quantity: 1 }], reason: "Theirs" });
    expect(await change(mine.browser, "orders/markRto", { orderId: theirs.orderId, shipmentId: theirs.shipmentId })).toMatchObject({ status: 404, turns: 1 });
    expect(await change(mine.browser, "returns/approve", { returnId: theirReturn.json.returnId })).toMatchObject({ status: 404, turns: 1 });
    expect(await change(mine.browser, "returns/request", { orderId: theirs.orderId, lines: [{ orderLineId: theirs.lineId, quantity: 1 }], reason: "Mine" })).toMatchObject({ status: 404, turns: 1 });
    expect(await theirs.sql("select status from shipment where id = $1", [theirs.shipmentId])).toEqual([{ status: "pending" }]);
    expect(await theirs.sql("select status from order_return where order_id = $1", [theirs.orderId])).toEqual([{ status: "requested" }]);
  });

  it("racing changes: one approval of a return, one return of the last unit, one RTO task", async () => {
    const { sql, browser, orderId, shipmentId, lineId } = await shippedOrder(1);
    const requests = await Promise.all(
      Array.from({ length: 4 }, (_, i) => change<RpcError>(browser, "returns/request", { orderId, lines: [{ orderLineId: lineId, quantity: 1 }], reason: `Race ${i}` })),
    );
    expect(requests.map((r) => r.status).sort()).toEqual([200, 409, 409, 409]);
    expect(requests.filter((r) => r.status === 409).map((r) => r.json.data?.reason)).toEqual(["not_returnable", "not_returnable", "not_returnable"]);
    const [{ id: returnId }] = (await sql<{ id: string }>("select id from order_return where order_id = $1", [orderId])) as [{ id: string }];
    const approvals = await Promise.all(Array.from({ length: 4 }, () => change<RpcError>(browser, "returns/approve", { returnId })));
    expect(approvals.map((r) => r.status).sort()).toEqual([200, 409, 409, 409]);
    expect(approvals.filter((r) => r.status === 409).map((r) => r.json.data?.reason)).toEqual(["return_approved", "return_approved", "return_approved"]);
    const marks = await Promise.all(Array.from({ length: 4 }, () => change(browser, "orders/markRto", { orderId, shipmentId })));
    expect(marks.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(await sql("select count(*)::int as n from merchant_task where subject_id = $1", [shipmentId])).toEqual([{ n: 1 }]);
    expect(await sql("select kind from outbox_event where kind in ('return.approved', 'order.rto') order by kind")).toEqual([{ kind: "order.rto" }, { kind: "return.approved" }]);
  });
});
