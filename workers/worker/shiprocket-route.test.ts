import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { applyPaymentStatus } from "#shared/orders/routines";
import { providerServices } from "#shared/pipeline/providers";
import { storeCourier, type CourierConfig } from "#shared/shipping/select";
import { ShiprocketTokens } from "#shared/shipping/shiprocket-http";
import { shiprocketServer } from "../../test/fakes/shiprocket-server";
import { call } from "../../test/call";
import { testDb } from "../../test/harness";
import { orderShop, placeTestOrder } from "../../test/orders";
import { callerFor } from "../../test/procedures";
import worker from "./index";

/**
 * Issue 20 item 10: Shiprocket's tracking webhooks end to end, through the worker's real routes
 * `/webhooks/shipments/tracking/<storeId>` (the address to enter in Shiprocket's panel, which refuses one
 * containing "shiprocket") and `/webhooks/shipments/shiprocket/<storeId>`, sent as Shiprocket sends them
 * (the panel's token in `x-api-key`; Shiprocket signs nothing) by the local Shiprocket-speaking server,
 * for a parcel booked through the adapter by `orders.fulfill`, against real Postgres.
 */
const db = testDb();
const ORIGIN = "http://worker.test";
const ip = () => `2001:db8:22::${crypto.randomUUID().slice(0, 4)}:${crypto.randomUUID().slice(0, 4)}`;
const BASE_URL = "https://shiprocket.local";

/** A paid order of a shop whose parcel `orders.fulfill` booked with Shiprocket (the local server). */
async function booked() {
  const { s, sql } = await orderShop(db);
  const [location] = await sql<{ name: string }>("select name from location order by name limit 1");
  const server = shiprocketServer({ pickupLocations: [location!.name] });
  const config: CourierConfig = { provider: "shiprocket", email: server.email, password: server.password, webhookToken: server.webhookToken };
  const vars = { COURIER: "shiprocket", SHIPROCKET_EMAIL: server.email, SHIPROCKET_PASSWORD: server.password, SHIPROCKET_WEBHOOK_TOKEN: server.webhookToken };
  const tokens = new ShiprocketTokens();
  const courier = async (storeId: string) => (await storeCourier(config, storeId, { fetch: server.fetch, baseUrl: BASE_URL, tokens })).courier;
  const member = callerFor(db, s.ownerUserId, s.id, { ...providerServices(env), courier });
  const placed = await placeTestOrder(db, s, { phone: "+919876543210" });
  await withStore(db, s.id, (tx) => applyPaymentStatus(tx, placed.attempt.id, "captured", "webhook"));
  const order = (await member("orders.get", { id: placed.order.id })) as { parcels: { id: string }[] };
  const { shipmentId } = (await member("orders.fulfill", { orderId: placed.order.id, parcelId: order.parcels[0]!.id })) as { shipmentId: string };
  const [row] = await sql<{ awb: string; provider: string }>("select awb, provider from shipment where id = $1", [shipmentId]);
  expect(row).toMatchObject({ provider: "shiprocket" });
  const post = async (hook: { headers: Record<string, string>; body: string }, options: { segment?: string; storeId?: string } = {}) => {
    const path = `/webhooks/shipments/${options.segment ?? "tracking"}/${options.storeId ?? s.id}`;
    const res = await call(worker, `${ORIGIN}${path}`, { method: "POST", headers: { ...hook.headers, "cf-connecting-ip": ip() }, body: hook.body }, vars);
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  };
  return { s, sql, server, post, orderId: placed.order.id, shipmentId, awb: row!.awb };
}

describe("Shiprocket webhooks through the worker's routes", () => {
  it("scans move the shipment through the routine, at the panel's address and at /shiprocket/; a redelivery is answered 200 and changes nothing", async () => {
    const { sql, server, post, orderId, shipmentId, awb } = await booked();
    const shipped = server.scan(awb, 6);
    expect(await post(shipped)).toEqual({ status: 200, json: { ok: true, duplicate: false, applied: true, status: "in_transit" } });
    expect(await post(shipped)).toEqual({ status: 200, json: { ok: true, duplicate: true } });
    expect(await post(shipped, { segment: "shiprocket" })).toEqual({ status: 200, json: { ok: true, duplicate: true } });
    expect((await post(server.scan(awb, 17), { segment: "shiprocket" })).json).toMatchObject({ applied: false, status: "in_transit" });
    expect((await post(server.scan(awb, 7))).json).toMatchObject({ applied: true, status: "delivered" });
    expect(await sql("select status, fulfillment_status from shop_order where id = $1", [orderId])).toEqual([{ status: "completed", fulfillment_status: "delivered" }]);
    expect(await sql("select status, provider_status, source from shipment_event where shipment_id = $1 order by created_at, id", [shipmentId])).toEqual([
      { status: "pending", provider_status: null, source: "merchant" },
      { status: "in_transit", provider_status: "SHIPPED", source: "webhook" },
      { status: "delivered", provider_status: "DELIVERED", source: "webhook" },
    ]);
    // A scan we do not act on is acknowledged.
    expect((await post(server.scan(awb, 19))).json).toMatchObject({ ok: true, ignored: expect.any(String) });
  });

  it("RTO reported by Shiprocket: the merchant's task and order.rto, once", async () => {
    const { sql, server, post, orderId, awb } = await booked();
    for (const code of [6, 9, 9, 10]) expect((await post(server.scan(awb, code))).status).toBe(200);
    expect(await sql("select fulfillment_status from shop_order where id = $1", [orderId])).toEqual([{ fulfillment_status: "rto_delivered" }]);
    expect(await sql("select kind, status from merchant_task where order_id = $1", [orderId])).toEqual([{ kind: "rto", status: "open" }]);
    expect(await sql("select count(*)::int as n from outbox_event where kind = 'order.rto' and order_id = $1", [orderId])).toEqual([{ n: 1 }]);
  });

  it("the panel's token is checked (401 with nothing written); another store's address finds no such parcel", async () => {
    const { sql, server, post, shipmentId, awb } = await booked();
    const { s: other } = await orderShop(db);
    const scan = server.scan(awb, 7);
    expect((await post({ ...scan, headers: { ...scan.headers, "x-api-key": "not-the-panel-token" } })).status).toBe(401);
    const { "x-api-key": _token, ...unsigned } = scan.headers;
    expect((await post({ ...scan, headers: unsigned })).status).toBe(401);
    expect(await post(scan, { storeId: other.id })).toMatchObject({ status: 404, json: { json: { code: "NOT_FOUND", data: { reason: "unknown_shipment" } } } });
    expect(await sql("select status from shipment where id = $1", [shipmentId])).toEqual([{ status: "pending" }]);
    expect(await sql("select count(*)::int as n from webhook_receipt where provider like 'courier:%'")).toEqual([{ n: 0 }]);
  });
});
