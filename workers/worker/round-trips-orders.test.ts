import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { balanceStore } from "#shared/jobs/preorder-balance";
import { trackStore } from "#shared/jobs/shipping-track";
import { expireStoreUnpaid } from "#shared/jobs/unpaid-expiry";
import { paymentRequest } from "#shared/orders/payments";
import { applyPaymentReport } from "#shared/orders/reports";
import type { ShipmentStatus } from "#shared/rules/status";
import { buildLocalWebhook, type LocalOutcome } from "#shared/payments/local-protocol";
import { providerServices } from "#shared/pipeline/providers";
import { buildLocalCourierWebhook, deriveLocalCourierSecret } from "#shared/shipping/local-protocol";
import { call } from "../../test/call";
import { jobContext, servicesFor, type StoreProviders } from "../../test/jobs";
import { orderShop, paidGatewayOrder, placeGatewayOrder, placeTestOrder, refundProcessed, type GatewayOrder } from "../../test/orders";
import { callerFor } from "../../test/procedures";
import { traced, tracedWork } from "../../test/proxy";
import { placeRazorpayOrder, razorpayDeployment } from "../../test/razorpay";
import type { ShopStore } from "../../test/storefront";
import { testDb } from "../../test/harness";
import worker from "./index";

/**
 * Round trips of the order flow's webhooks and jobs, counted by the local proxy: a webhook's from the
 * signature check on (the receipt dedupe, the attempt or shipment found, its status applied through the
 * routine: at most two), a job's per store (at most two; outside calls to the gateway or the courier are
 * no round trips to the database). Then the races these units are guarded against.
 */
const db = testDb();
const ORIGIN = "http://worker.test";
const HOUR = 3_600_000;
const ago = (ms: number) => new Date(Date.now() - ms);
const ip = () => `2001:db8:4::${crypto.randomUUID().slice(0, 4)}:${crypto.randomUUID().slice(0, 4)}`;

/** A webhook through the worker's door, traced: its status, answer and round trips. */
async function send(path: string, hook: { headers: Record<string, string>; body: string }) {
  const { status, body, trips } = await traced((h) => call(worker, `${ORIGIN}${path}`, { method: "POST", headers: { ...hook.headers, "cf-connecting-ip": ip(), ...h }, body: hook.body }));
  return { status, json: JSON.parse(body) as Record<string, unknown>, turns: trips.turns, after: trips.after.turns };
}

const payment = async (s: ShopStore, o: Pick<GatewayOrder, "providerRef" | "sg">, outcome: LocalOutcome) =>
  send(`/webhooks/payments/local/${s.id}`, (await buildLocalWebhook({ providerRef: o.providerRef, outcome, secret: o.sg.webhookSecret, workerOrigin: ORIGIN }))!);

async function courierReport(s: ShopStore, awb: string, status: ShipmentStatus) {
  const secret = await deriveLocalCourierSecret("local-courier-test-secret", s.id);
  return send(`/webhooks/shipments/local/${s.id}`, await buildLocalCourierWebhook({ storeId: s.id, awb, status, secret, workerOrigin: ORIGIN }));
}

/** A shop with `n` paid orders, each shipped with the store's (local) courier. */
async function shippedShop(n: number) {
  const { s, sql } = await orderShop(db);
  const member = callerFor(db, s.ownerUserId, s.id, providerServices(env));
  const shipments: { id: string; orderId: string; awb: string }[] = [];
  for (let i = 0; i < n; i++) {
    const paid = await paidGatewayOrder(db, s, 1);
    const parcelId = ((await member("orders.get", { id: paid.orderId })) as { parcels: { id: string }[] }).parcels[0]!.id;
    const { shipmentId } = (await member("orders.fulfill", { orderId: paid.orderId, parcelId })) as { shipmentId: string };
    const [row] = await sql<{ awb: string }>("select awb from shipment where id = $1", [shipmentId]);
    shipments.push({ id: shipmentId, orderId: paid.orderId, awb: row!.awb });
  }
  return { s, sql, shipments };
}

describe("round trips: payment webhooks", () => {
  it("a status applies in two round trips; a duplicate delivery and an unknown payment cost one", async () => {
    const { s, sql } = await orderShop(db);
    const o = await placeGatewayOrder(db, s);
    expect(await payment(s, o, "captured")).toMatchObject({ status: 200, turns: 2, after: 0, json: { duplicate: false, applied: true, status: "captured" } });
    expect(await payment(s, o, "captured")).toMatchObject({ status: 200, turns: 1, after: 0, json: { duplicate: true } });
    const failing = await placeGatewayOrder(db, s);
    expect(await payment(s, failing, "failed")).toMatchObject({ status: 200, turns: 2, json: { applied: true, status: "failed" } });
    // A reference the gateway made but no attempt of this store holds: nothing kept.
    const placed = await placeTestOrder(db, s);
    const stray = await o.sg.gateway.createPayment(paymentRequest(placed.order, { ...placed.attempt, attempt: 9, idempotencyKey: `${placed.order.id}:9` }, "https://x.test/r"));
    expect(await payment(s, { providerRef: stray.providerRef, sg: o.sg }, "captured")).toMatchObject({ status: 404, turns: 1 });
    expect(await sql("select payment_status from shop_order where id = $1", [o.orderId])).toEqual([{ payment_status: "paid" }]);
    expect(await sql("select count(*)::int as n from webhook_receipt where provider = 'local'")).toEqual([{ n: 3 }]); // the fixture's and the two applied
  });

  it("a Razorpay payment event names no store: at another store's address one round trip finds no attempt and keeps nothing; at its own, two", async () => {
    const { s, sql } = await orderShop(db);
    const { s: other, sql: otherSql } = await orderShop(db);
    const rp = razorpayDeployment();
    const o = await placeRazorpayOrder(db, s, rp);
    const [authorized] = (await rp.server.pay(o.providerRef, "authorized")).webhooks;
    const at = async (storeId: string) => {
      const { status, body, trips } = await traced((h) =>
        call(worker, `${ORIGIN}/webhooks/payments/razorpay/${storeId}`, { method: "POST", headers: { ...authorized!.headers, "cf-connecting-ip": ip(), ...h }, body: authorized!.body }, rp.env),
      );
      return { status, json: JSON.parse(body) as Record<string, unknown>, turns: trips.turns };
    };
    expect(await at(other.id)).toMatchObject({ status: 200, turns: 1, json: { ok: true, ignored: expect.stringContaining("another store") } });
    expect(await otherSql("select count(*)::int as n from webhook_receipt where provider = 'razorpay'")).toEqual([{ n: 0 }]);
    expect(await at(s.id)).toMatchObject({ status: 200, turns: 2, json: { duplicate: false, applied: true, status: "authorized" } });
    expect(await sql("select status from payment_attempt where id = $1", [o.attemptId])).toEqual([{ status: "authorized" }]);
  });

  it("a refund the gateway reports: two round trips, recorded once, a pending row settled, a capture it proves applied first", async () => {
    const { s, sql } = await orderShop(db);
    const paid = await paidGatewayOrder(db, s, 2);
    const report = (o: GatewayOrder, refundId: string, amount: number) => tracedWork((t) => applyPaymentReport(t, s.id, "local", refundProcessed(o, refundId, amount)));
    const first = await report(paid, "rfnd_dash1", 300);
    expect([first.result, first.trips.turns]).toEqual([{ duplicate: false, applied: true, status: "refunded" }, 2]);
    const again = await report(paid, "rfnd_dash1", 300);
    expect([again.result, again.trips.turns]).toEqual([{ duplicate: false, applied: false, status: "refunded" }, 2]);
    // A refund made here and still pending: the report settles its row (its place among the processed ones by id).
    for (const id of [`00000000-${crypto.randomUUID().slice(9)}`, `ffffffff-${crypto.randomUUID().slice(9)}`]) {
      await sql("insert into refund (id, store_id, order_id, payment_attempt_id, amount, status, provider_refund_id) values ($1, $2, $3, $4, 100, 'pending', $5)", [
        id,
        s.id,
        paid.orderId,
        paid.attemptId,
        `rfnd_${id}`,
      ]);
      const settled = await report(paid, `rfnd_${id}`, 100);
      expect([settled.result, settled.trips.turns]).toEqual([{ duplicate: false, applied: true, status: "refunded" }, 2]);
    }
    expect(await sql("select status, amount::int from refund where order_id = $1 order by amount, id", [paid.orderId])).toEqual([
      { status: "processed", amount: 100 },
      { status: "processed", amount: 100 },
      { status: "processed", amount: 300 },
    ]);
    expect(await sql("select payment_status from shop_order where id = $1", [paid.orderId])).toEqual([{ payment_status: "partially_refunded" }]);
    // The rest given back at the gateway: the attempt is refunded, in the same two trips.
    const rest = await report(paid, "rfnd_dash2", paid.total - 500);
    expect(rest.trips.turns).toBe(2);
    expect(await sql("select status from payment_attempt where id = $1", [paid.attemptId])).toEqual([{ status: "refunded" }]);
    // An attempt still pending in our rows: the refund proves the capture (order.paid), then refunds it all.
    const early = await placeGatewayOrder(db, s, 1);
    const proved = await report(early, "rfnd_early", early.total);
    expect([proved.result, proved.trips.turns]).toEqual([{ duplicate: false, applied: true, status: "refunded" }, 2]);
    expect(await sql("select status from payment_attempt where id = $1", [early.attemptId])).toEqual([{ status: "refunded" }]);
    expect(await sql("select kind from outbox_event where order_id = $1 and kind like 'order.%' order by seq", [early.orderId])).toEqual([
      { kind: "order.placed" },
      { kind: "order.paid" },
      { kind: "order.refunded" },
    ]);
    expect(await sql("select payment_status from shop_order where id = $1", [early.orderId])).toEqual([{ payment_status: "refunded" }]);
  });
});

describe("round trips: shipment webhooks", () => {
  it("a status applies in two round trips; a duplicate delivery and an unknown tracking number cost one", async () => {
    const { s, sql, shipments } = await shippedShop(1);
    const [shipment] = shipments;
    expect(await courierReport(s, shipment!.awb, "in_transit")).toMatchObject({ status: 200, turns: 2, after: 0, json: { duplicate: false, applied: true, status: "in_transit" } });
    expect(await courierReport(s, shipment!.awb, "in_transit")).toMatchObject({ status: 200, turns: 1, json: { duplicate: true } });
    expect(await courierReport(s, shipment!.awb, "rto_initiated")).toMatchObject({ status: 200, turns: 2, json: { applied: true, status: "rto_initiated" } });
    expect(await courierReport(s, "LCNOSUCHAWB1", "delivered")).toMatchObject({ status: 404, turns: 1 });
    expect(await sql("select count(*)::int as n from outbox_event where kind = 'order.rto' and order_id = $1", [shipment!.orderId])).toEqual([{ n: 1 }]);
    expect(await sql("select fulfillment_status from shop_order where id = $1", [shipment!.orderId])).toEqual([{ fulfillment_status: "rto_initiated" }]);
  });
});

describe("round trips: the order flow's jobs, per store", () => {
  const run = <T>(job: (ctx: ReturnType<typeof jobContext>) => Promise<T>, stores: Record<string, StoreProviders> = {}) =>
    tracedWork((t) => job(jobContext(t, new Date(), servicesFor(stores))));

  it("{payments}-unpaid-expiry: reminders in one round trip; expiries in two; money found at the gateway in three", async () => {
    const { s, sql } = await orderShop(db);
    await sql("update inventory_level set on_hand = 10");
    const near = (await placeTestOrder(db, s, { paymentMethod: "manual_transfer", at: ago(2.5 * 24 * HOUR) })).order;
    const reminded = await run((ctx) => expireStoreUnpaid(ctx, s.id));
    expect([reminded.result, reminded.trips.turns]).toEqual([{ reminded: 1, expired: 0, reconciled: 0, left: 0, changed: 0 }, 1]);
    const due = [await placeGatewayOrder(db, s, 1, ago(2 * HOUR)), await placeGatewayOrder(db, s, 2, ago(2 * HOUR))];
    const expired = await run((ctx) => expireStoreUnpaid(ctx, s.id));
    expect([expired.result, expired.trips.turns]).toEqual([{ reminded: 0, expired: 2, reconciled: 0, left: 0, changed: 0 }, 2]);
    const paid = await placeGatewayOrder(db, s, 1, ago(2 * HOUR));
    const reconciled = await run((ctx) => expireStoreUnpaid(ctx, s.id), { [s.id]: { gateway: { reportStatus: "captured" } } });
    expect([reconciled.result, reconciled.trips.turns]).toEqual([{ reminded: 0, expired: 0, reconciled: 1, left: 0, changed: 0 }, 3]);
    expect(await sql("select id, status, payment_status from shop_order where id = any($1) order by id", [[near.id, paid.orderId, ...due.map((o) => o.orderId)]])).toEqual(
      [
        { id: near.id, status: "open", payment_status: "unpaid" },
        { id: paid.orderId, status: "open", payment_status: "paid" },
        ...due.map((o) => ({ id: o.orderId, status: "expired", payment_status: "pending" })),
      ].sort((a, b) => (a.id < b.id ? -1 : 1)),
    );
  });

  it("{payments}-preorder-balance: two round trips, with work or without", async () => {
    const { s, sql } = await orderShop(db);
    await sql("update product_variant set preorder = true");
    await sql("update inventory_level set on_hand = 0");
    await sql("update store set preorder_deposit_percent = 30");
    const member = callerFor(db, s.ownerUserId, s.id);
    const { order } = await placeTestOrder(db, s, { lines: [[s.variantId, 2]], paymentMethod: "manual_transfer" });
    await member("orders.setStatus", { orderId: order.id, action: "mark_paid" });
    const [location] = await sql<{ id: string }>("select id from location");
    await member("inventory.adjust", { variantId: s.variantId, locationId: location!.id, delta: 2, reason: "received" });
    const requested = await run((ctx) => balanceStore(ctx, s.id));
    expect([requested.result, requested.trips.turns]).toEqual([{ reservedUnits: 2, requested: 1, reminded: 0, expired: 0 }, 2]);
    const again = await run((ctx) => balanceStore(ctx, s.id));
    expect([again.result, again.trips.turns]).toEqual([{ reservedUnits: 0, requested: 0, reminded: 0, expired: 0 }, 2]);
    expect(await sql("select attempt, status, amount::int from payment_attempt where order_id = $1 order by attempt", [order.id])).toEqual([
      { attempt: 1, status: "captured", amount: 600 },
      { attempt: 2, status: "created", amount: 1400 },
    ]);
  });

  it("{shipping}-track: two round trips when no report moves a shipment; three when some do", async () => {
    const { s, sql, shipments } = await shippedShop(2);
    const moved = await run((ctx) => trackStore(ctx, s.id), { [s.id]: { courier: { reportStatus: "in_transit" } } });
    expect([moved.result, moved.trips.turns]).toEqual([{ asked: 2, moved: 2, unchanged: 0, errors: 0, otherCourier: 0 }, 3]);
    const same = await run((ctx) => trackStore(ctx, s.id), { [s.id]: { courier: { reportStatus: "in_transit" } } });
    expect([same.result, same.trips.turns]).toEqual([{ asked: 2, moved: 0, unchanged: 2, errors: 0, otherCourier: 0 }, 2]);
    expect(await sql("select status, tracked_at is not null as tracked from shipment where id = any($1)", [shipments.map((x) => x.id)])).toEqual([
      { status: "in_transit", tracked: true },
      { status: "in_transit", tracked: true },
    ]);
  });
});

describe("races these units are guarded against", () => {
  it("the same payment delivered twice at once: applied once, the other answered as a duplicate", async () => {
    const { s, sql } = await orderShop(db);
    const o = await placeGatewayOrder(db, s);
    const answers = await Promise.all([payment(s, o, "captured"), payment(s, o, "captured"), payment(s, o, "captured")]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(answers.filter((a) => a.json["duplicate"] === false)).toHaveLength(1);
    expect(await sql("select count(*)::int as n from outbox_event where kind = 'order.paid' and order_id = $1", [o.orderId])).toEqual([{ n: 1 }]);
  });

  it("the same courier report delivered twice at once, racing the tracking job: one move, one event row", async () => {
    const { s, sql, shipments } = await shippedShop(1);
    const [shipment] = shipments;
    const [a, b] = await Promise.all([
      courierReport(s, shipment!.awb, "in_transit"),
      courierReport(s, shipment!.awb, "in_transit"),
      trackStore(jobContext(db, new Date(), servicesFor({ [s.id]: { courier: { reportStatus: "in_transit" } } })), s.id),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(await sql("select count(*)::int as n from shipment_event where shipment_id = $1 and status = 'in_transit'", [shipment!.id])).toEqual([{ n: 1 }]);
    expect(await sql("select count(*)::int as n from outbox_event where kind = 'shipment.in_transit' and order_id = $1", [shipment!.orderId])).toEqual([{ n: 1 }]);
  });
});
