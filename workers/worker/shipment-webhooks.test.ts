import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { providerServices } from "#shared/pipeline/providers";
import type { ShipmentStatus } from "#shared/rules/status";
import { buildLocalCourierWebhook, deriveLocalCourierSecret } from "#shared/shipping/local-protocol";
import { call } from "../../test/call";
import { testDb } from "../../test/harness";
import { orderShop, paidGatewayOrder } from "../../test/orders";
import { callerFor } from "../../test/procedures";
import type { ShopStore } from "../../test/storefront";
import worker from "./index";
import { WEBHOOK_POLICY } from "./webhooks";

/** POST /webhooks/shipments/<provider>/<storeId> on the real worker, real Postgres, the local courier (issue 11 part 7). */
const db = testDb();
const ORIGIN = "http://worker.test";
const ip = () => `2001:db8:5::${crypto.randomUUID().slice(0, 4)}:${crypto.randomUUID().slice(0, 4)}`;

/** A paid order whose parcel was booked with the store's courier (the local one, as the test projects configure). */
async function shipped() {
  const { s, sql } = await orderShop(db);
  const paid = await paidGatewayOrder(db, s, 1);
  const call_ = callerFor(db, s.ownerUserId, s.id, providerServices(env));
  const order = (await call_("orders.get", { id: paid.orderId })) as { parcels: { id: string }[] };
  const out = (await call_("orders.fulfill", { orderId: paid.orderId, parcelId: order.parcels[0]!.id })) as { shipmentId: string };
  const [row] = await sql<{ awb: string; provider: string; tracking_url: string }>("select awb, provider, tracking_url from shipment where id = $1", [out.shipmentId]);
  return { s, sql, paid, shipmentId: out.shipmentId, awb: row!.awb, row: row! };
}

async function report(s: ShopStore, awb: string, status: ShipmentStatus, options: { from?: string; secretOf?: string; path?: string } = {}) {
  const secret = await deriveLocalCourierSecret("local-courier-test-secret", options.secretOf ?? s.id);
  const hook = await buildLocalCourierWebhook({ storeId: s.id, awb, status, secret, workerOrigin: ORIGIN });
  return call(worker, `${ORIGIN}${options.path ?? `/webhooks/shipments/local/${s.id}`}`, {
    method: "POST",
    headers: { ...hook.headers, "cf-connecting-ip": options.from ?? ip() },
    body: hook.body,
  });
}

const orderRow = async (sql: Awaited<ReturnType<typeof shipped>>["sql"], id: string) =>
  (await sql<{ status: string; fulfillment_status: string }>("select status, fulfillment_status from shop_order where id = $1", [id]))[0];

describe("shipment webhooks", () => {
  it("orders.fulfill books the local courier; its signed reports move the shipment; a repeat changes nothing", async () => {
    const { s, sql, paid, shipmentId, awb, row } = await shipped();
    expect(row.provider).toBe("local");
    expect(row.tracking_url).toContain("/-courier/track/");
    expect(await (await report(s, awb, "in_transit")).json()).toMatchObject({ ok: true, duplicate: false, applied: true, status: "in_transit" });
    expect(await (await report(s, awb, "in_transit")).json()).toMatchObject({ ok: true, duplicate: true });
    expect(await (await report(s, awb, "delivered")).json()).toMatchObject({ applied: true, status: "delivered" });
    expect(await orderRow(sql, paid.orderId)).toEqual({ status: "completed", fulfillment_status: "delivered" });
    expect(await sql("select status, source from shipment_event where shipment_id = $1 order by occurred_at, created_at", [shipmentId])).toEqual([
      { status: "pending", source: "merchant" },
      { status: "in_transit", source: "webhook" },
      { status: "delivered", source: "webhook" },
    ]);
    // A late RTO report after the delivery is accepted as a delivery and changes nothing.
    expect(await (await report(s, awb, "rto_initiated")).json()).toMatchObject({ applied: false, status: "delivered" });
  });

  it("RTO by the courier: order.rto and the merchant's task, once", async () => {
    const { s, sql, paid, awb } = await shipped();
    await report(s, awb, "in_transit");
    await report(s, awb, "rto_initiated");
    await report(s, awb, "rto_delivered");
    expect(await orderRow(sql, paid.orderId)).toEqual({ status: "completed", fulfillment_status: "rto_delivered" });
    expect(await sql("select count(*)::int as n from outbox_event where kind = 'order.rto' and payload->>'orderId' = $1", [paid.orderId])).toEqual([{ n: 1 }]);
    expect(await sql("select kind, status from merchant_task where order_id = $1", [paid.orderId])).toEqual([{ kind: "rto", status: "open" }]);
  });

  it("refuses another store's signature, an unknown provider or store, an unknown AWB; writes nothing", async () => {
    const { s, sql, awb, shipmentId } = await shipped();
    const { s: other } = await orderShop(db);
    expect((await report(s, awb, "delivered", { secretOf: other.id })).status).toBe(401);
    expect((await report(s, awb, "delivered", { path: `/webhooks/shipments/shiprocket/${s.id}` })).status).toBe(404);
    expect((await report(s, awb, "delivered", { path: `/webhooks/shipments/local/not-a-store` })).status).toBe(404);
    expect((await report(s, awb, "delivered", { path: `/webhooks/shipments/local/${other.id}` })).status).toBe(401);
    const unknown = await report(s, "LCNOSUCHAWB1", "delivered");
    expect(unknown.status).toBe(404);
    expect(await sql("select status from shipment where id = $1", [shipmentId])).toEqual([{ status: "pending" }]);
    expect(await sql("select count(*)::int as n from webhook_receipt where provider like 'courier:%'")).toEqual([{ n: 0 }]);
  });

  it(`an unsigned flood: 429 after ${WEBHOOK_POLICY.limit} a minute from one address, never a 5xx`, async () => {
    const { s } = await shipped();
    const from = ip();
    const junk = () => call(worker, `${ORIGIN}/webhooks/shipments/local/${s.id}`, { method: "POST", headers: { "cf-connecting-ip": from }, body: "{}" });
    const answers = await Promise.all(Array.from({ length: WEBHOOK_POLICY.limit + 3 }, junk));
    expect(answers.filter((r) => r.status === 401)).toHaveLength(WEBHOOK_POLICY.limit);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(3);
    const huge = await call(worker, `${ORIGIN}/webhooks/shipments/local/${s.id}`, { method: "POST", headers: { "cf-connecting-ip": ip() }, body: "x".repeat(70_000) });
    expect(huge.status).toBe(413);
  });

  it("a courier report racing the merchant's RTO mark: one change each way, no deadlock", async () => {
    const { s, sql, paid, shipmentId, awb } = await shipped();
    const member = callerFor(db, s.ownerUserId, s.id);
    await Promise.all([report(s, awb, "rto_initiated"), member("orders.markRto", { orderId: paid.orderId, shipmentId }), report(s, awb, "in_transit")]);
    expect(await sql("select count(*)::int as n from merchant_task where subject_id = $1", [shipmentId])).toEqual([{ n: 1 }]);
    await withStore(db, s.id, async (tx) => expect((await tx.$client.query("select status from shipment where id = $1", [shipmentId])).rows).toEqual([{ status: "rto_initiated" }]));
  });
});
