import { describe, expect, it } from "vitest";
import { ADMIN, rpc, sessionFor, type Browser, type RpcError } from "../../test/admin";
import { uuidFrom } from "#shared/db/ids";
import { withStore } from "#shared/db/with-store";
import { applyPaymentReport } from "#shared/orders/reports";
import { applyShipmentStatus } from "#shared/orders/shipments";
import { GatewayError, type PaymentGateway, type RefundResult } from "#shared/payments/gateway";
import { localGateway, type LocalBehaviour } from "#shared/payments/local";
import { deriveLocalSecret } from "#shared/payments/local-protocol";
import { call } from "../../test/call";
import { testDb } from "../../test/harness";
import { orderShop, paidGatewayOrder, refundProcessed, TEST_GATEWAY, type GatewayOrder } from "../../test/orders";
import { callerFor, failureMessage } from "../../test/procedures";
import { traced, tracedWork } from "../../test/proxy";
import worker from "./index";

/**
 * Round trips of the order flow's changes after checkout (modelled on ./round-trips.test.ts "round trips:
 * changes"): RTO marks and the steps of a return read, then change (two round trips; one when the reading
 * refuses). Shipping reads, books the courier between the two units (or records the merchant's own
 * tracking), then changes: two. Refunds claim their rows (the gateway's keys), call the gateway, then
 * record its answers: two (docs/payments.md, "Refunds in two round trips"). Then the guards, and the races
 * a refund's claim is there for: the gateway is asked once per key, a failed refund's retry asks with the
 * same key.
 */
const db = testDb();

/** A traced POST /api/rpc; `vars` overrides the Worker's variables (e.g. LOCAL_GATEWAY_BEHAVIOUR). */
async function change<T = Record<string, unknown>>(browser: Browser, path: string, input: unknown, vars: Record<string, string> = {}) {
  const { status, json, trips } = await traced((h) =>
    Object.keys(vars).length
      ? call(worker, `${ADMIN}/api/rpc/${path}`, { method: "POST", headers: { "content-type": "application/json", origin: ADMIN, cookie: browser.cookie, ...h }, body: JSON.stringify({ json: input }) }, vars)
      : rpc(browser, path, input, h),
  );
  return { status, json: json<T>(), turns: trips.turns, after: trips.after.turns };
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

/** The store's local gateway, with the keys of the refunds it was asked for; `during` runs inside each call, before it answers. */
async function countingGateway(storeId: string, behaviours: LocalBehaviour[] = [], during?: (result: RefundResult, amount: number) => Promise<void>) {
  const secret = await deriveLocalSecret(TEST_GATEWAY.rootSecret, storeId);
  const keys: string[] = [];
  const base = localGateway({ storeId, secret });
  const gateway: PaymentGateway = {
    ...base,
    async refund(paymentId, amount, key) {
      // The n-th call behaves as told (failures first), the rest as the plain local gateway.
      const behaviour = behaviours[keys.length];
      keys.push(key);
      const result = await (behaviour ? localGateway({ storeId, secret, behaviour }) : base).refund(paymentId, amount, key);
      await during?.(result, amount);
      return result;
    },
  };
  return { keys, services: { gateway: async () => gateway } };
}

/** The gateway's `refund.processed` report of a refund, as its webhook delivers it. */
const refundReport = (storeId: string, o: GatewayOrder, refundId: string, amount: number) =>
  applyPaymentReport(db, storeId, "local", refundProcessed(o, refundId, amount, storeId));

const refundsOf = (sql: Awaited<ReturnType<typeof orderShop>>["sql"], orderId: string) =>
  sql("select id, amount::int, status, reason from refund where order_id = $1 order by amount, id", [orderId]);
const refundedEvents = async (sql: Awaited<ReturnType<typeof orderShop>>["sql"], orderId: string) =>
  (await sql<{ n: number }>("select count(*)::int as n from outbox_event where kind = 'order.refunded' and payload->>'orderId' = $1", [orderId]))[0]!.n;

describe("round trips: refunds", () => {
  it("orders.refund and returns.refund claim, call the gateway, record: two round trips; a refusal is one; a failed gateway is two and leaves nothing", async () => {
    const { sql, browser, orderId, lineId } = await shippedOrder(2);
    const part = await change<{ refunds: { id: string }[] }>(browser, "orders/refund", { orderId, amount: 300, reason: "Late" });
    expect(part).toMatchObject({ status: 200, turns: 2, after: 0, json: { refunds: [{ amount: 300, status: "processed", outsideGateway: false }], order: { id: orderId, paymentStatus: "partially_refunded" } } });
    expect(part.json.refunds[0]!.id).toBe(await uuidFrom(`${orderId}:refund:1`));
    expect(await change<RpcError>(browser, "orders/refund", { orderId, amount: 10_000_000 })).toMatchObject({ status: 409, turns: 1, json: { data: { reason: "exceeds_refundable" } } });
    const down = await change<RpcError>(browser, "orders/refund", { orderId, amount: 100 }, { LOCAL_GATEWAY_BEHAVIOUR: JSON.stringify({ failRefund: "unavailable" }) });
    expect(down).toMatchObject({ status: 503, turns: 2, after: 0, json: { data: { reason: "gateway_unavailable" } } });
    expect(await refundsOf(sql, orderId)).toEqual([{ id: part.json.refunds[0]!.id, amount: 300, status: "processed", reason: "Late" }]);

    const { returnId } = (await change<{ returnId: string }>(browser, "returns/request", { orderId, lines: [{ orderLineId: lineId, quantity: 1 }], reason: "Small" })).json;
    expect(await change<RpcError>(browser, "returns/refund", { returnId })).toMatchObject({ status: 409, turns: 1, json: { data: { reason: "return_requested" } } });
    await change(browser, "returns/approve", { returnId });
    await change(browser, "returns/receive", { returnId });
    const back = await change<{ refunds: { id: string }[] }>(browser, "returns/refund", { returnId });
    expect(back).toMatchObject({ status: 200, turns: 2, after: 0, json: { returnId, status: "refunded", refunds: [{ status: "processed", outsideGateway: false }] } });
    expect(back.json.refunds[0]!.id).toBe(await uuidFrom(`${orderId}:refund:2`));
    expect(await change<RpcError>(browser, "returns/refund", { returnId })).toMatchObject({ status: 409, turns: 1, json: { data: { reason: "return_refunded" } } });
    expect(await sql("select kind, payload->>'returnId' as return_id from outbox_event where kind in ('order.refunded', 'return.refunded') order by seq")).toEqual([
      { kind: "order.refunded", return_id: null },
      { kind: "order.refunded", return_id: returnId },
      { kind: "return.refunded", return_id: returnId },
    ]);
  });

  it("a refund whose second unit loses its race to the gateway's own report asks the gateway once and is recorded once", async () => {
    const { s, sql } = await orderShop(db);
    const paid = await paidGatewayOrder(db, s, 2);
    // The gateway's refund.processed webhook lands before the refund's second unit: it settles the claimed row first.
    const reports: unknown[] = [];
    const raced = await countingGateway(s.id, [], async (result, amount) => void reports.push(await refundReport(s.id, paid, result.refundId, amount)));
    const out = await tracedWork((t) => callerFor(t, s.ownerUserId, s.id, raced.services)("orders.refund", { orderId: paid.orderId, amount: 300 }));
    const key = await uuidFrom(`${paid.orderId}:refund:1`);
    expect(raced.keys).toEqual([key]);
    expect(reports).toEqual([{ duplicate: false, applied: true, status: "refunded" }]);
    // The claim, the record that lost, the reading again, the record: the gateway was not asked again.
    expect(out).toMatchObject({ trips: { turns: 4 }, result: { refunds: [{ id: key, amount: 300, status: "processed" }], order: { paymentStatus: "partially_refunded" } } });
    // A refund made in the gateway's dashboard lands between the units instead: the order changed, the record reads again.
    const dashboard = await countingGateway(s.id, [], async () => void (await refundReport(s.id, paid, "rfnd_dashboard", 50)));
    const next = await tracedWork((t) => callerFor(t, s.ownerUserId, s.id, dashboard.services)("orders.refund", { orderId: paid.orderId, amount: 200 }));
    expect(dashboard.keys).toEqual([await uuidFrom(`${paid.orderId}:refund:2`)]);
    expect(next).toMatchObject({ trips: { turns: 4 }, result: { refunds: [{ id: dashboard.keys[0], amount: 200, status: "processed" }] } });
    expect(await refundsOf(sql, paid.orderId)).toEqual([
      { id: expect.any(String), amount: 50, status: "processed", reason: "Refunded at the gateway" },
      { id: dashboard.keys[0], amount: 200, status: "processed", reason: null },
      { id: key, amount: 300, status: "processed", reason: null },
    ]);
    expect(await refundedEvents(sql, paid.orderId)).toBe(3);
  });

  it("a call that timed out after the gateway refunded, and whose report came first, answers the refund made", async () => {
    const { s, sql } = await orderShop(db);
    const paid = await paidGatewayOrder(db, s, 1);
    const late = await countingGateway(s.id, [], async (result, amount) => {
      await refundReport(s.id, paid, result.refundId, amount);
      throw new GatewayError("local", "timeout", "the local gateway did not answer within 10000 ms");
    });
    const out = await tracedWork((t) => callerFor(t, s.ownerUserId, s.id, late.services)("orders.refund", { orderId: paid.orderId, amount: 400 }));
    expect(late.keys).toEqual([await uuidFrom(`${paid.orderId}:refund:1`)]);
    expect(out).toMatchObject({ trips: { turns: 4 }, result: { refunds: [{ id: late.keys[0], amount: 400, status: "processed" }], order: { paymentStatus: "partially_refunded" } } });
    expect(await refundsOf(sql, paid.orderId)).toEqual([{ id: late.keys[0], amount: 400, status: "processed", reason: null }]);
    expect(await refundedEvents(sql, paid.orderId)).toBe(1);
  });

  it("a return whose refund a report settled before the call's record is finished by the repeated call, without asking the gateway again", async () => {
    const { s, sql, browser, orderId, lineId } = await shippedOrder(2);
    const { returnId } = (await change<{ returnId: string }>(browser, "returns/request", { orderId, lines: [{ orderLineId: lineId, quantity: 1 }], reason: "Small" })).json;
    await change(browser, "returns/approve", { returnId });
    await change(browser, "returns/receive", { returnId });
    // What the report leaves when the call died after the gateway: the claimed row processed, the return still received.
    const [{ id: attemptId }] = (await sql<{ id: string }>("select id from payment_attempt where order_id = $1", [orderId])) as [{ id: string }];
    const claimId = await uuidFrom(`${orderId}:refund:1`);
    await sql("insert into refund (id, store_id, order_id, payment_attempt_id, return_id, amount, reason, status, provider_refund_id) values ($1, $2, $3, $4, $5, 1000, 'Return 1', 'processed', 'lrfnd_reported')", [
      claimId,
      s.id,
      orderId,
      attemptId,
      returnId,
    ]);
    const gateway = await countingGateway(s.id);
    const out = await tracedWork((t) => callerFor(t, s.ownerUserId, s.id, gateway.services)("returns.refund", { returnId }));
    expect(gateway.keys).toEqual([]);
    expect([out.trips.turns, out.result]).toEqual([2, { returnId, status: "refunded", refunds: [{ id: claimId, amount: 1000, status: "processed", outsideGateway: false }] }]);
    expect(await sql("select r.status, o.payment_status from order_return r join shop_order o on o.id = r.order_id where r.id = $1", [returnId])).toEqual([
      { status: "refunded", payment_status: "partially_refunded" },
    ]);
    expect(await sql("select payload->>'amount' as amount from outbox_event where kind = 'return.refunded'")).toEqual([{ amount: "1000" }]);
  });

  it("a repeated identical call after a failure asks with the same key; the failure left nothing", async () => {
    const { s, sql } = await orderShop(db);
    const paid = await paidGatewayOrder(db, s, 1);
    const gateway = await countingGateway(s.id, [{ failRefund: "timeout" }, { failRefund: "declined" }]);
    const refund = () => callerFor(db, s.ownerUserId, s.id, gateway.services)("orders.refund", { orderId: paid.orderId, amount: 400, reason: "Torn" });
    expect(await failureMessage(refund())).toMatch(/SERVICE_UNAVAILABLE.*Nothing was refunded; try again in a minute/);
    expect(await failureMessage(refund())).toMatch(/CONFLICT.*Nothing was refunded/);
    expect(await refundsOf(sql, paid.orderId)).toEqual([]);
    const made = (await refund()) as { refunds: { id: string }[] };
    const key = await uuidFrom(`${paid.orderId}:refund:1`);
    expect(gateway.keys).toEqual([key, key, key]);
    expect(made.refunds).toMatchObject([{ id: key, amount: 400, status: "processed" }]);
    expect(await refundsOf(sql, paid.orderId)).toEqual([{ id: key, amount: 400, status: "processed", reason: "Torn" }]);
  });

  it("a claim whose call may be in flight holds the order's refunds; one left behind is taken over, key and all, by the same refund", async () => {
    const { sql, browser, orderId } = await shippedOrder(2);
    const [{ id: attemptId, store_id: storeId }] = (await sql<{ id: string; store_id: string }>("select id, store_id from payment_attempt where order_id = $1", [orderId])) as [
      { id: string; store_id: string },
    ];
    // What a call that died between the gateway and its second unit leaves: a claimed row, no answer.
    const claimId = await uuidFrom(`${orderId}:refund:1`);
    await sql("insert into refund (id, store_id, order_id, payment_attempt_id, amount, reason, status) values ($1, $2, $3, $4, 300, 'Late', 'pending')", [claimId, storeId, orderId, attemptId]);
    expect(await change<RpcError>(browser, "orders/refund", { orderId, amount: 300, reason: "Late" })).toMatchObject({ status: 409, turns: 1, json: { data: { reason: "refund_in_progress" } } });
    await sql("update refund set updated_at = now() - interval '5 minutes' where id = $1", [claimId]);
    // Another refund does not take it: it holds its money, and the new one gets its own key.
    const other = await change<{ refunds: { id: string }[] }>(browser, "orders/refund", { orderId, amount: 100 });
    expect(other).toMatchObject({ status: 200, turns: 2, json: { refunds: [{ id: await uuidFrom(`${orderId}:refund:2`), amount: 100 }] } });
    const again = await change(browser, "orders/refund", { orderId, amount: 300, reason: "Late" });
    expect(again).toMatchObject({ status: 200, turns: 2, after: 0, json: { refunds: [{ id: claimId, amount: 300, status: "processed" }] } });
    expect((await refundsOf(sql, orderId)).map((r) => [r.amount, r.status])).toEqual([
      [100, "processed"],
      [300, "processed"],
    ]);
  });
});
