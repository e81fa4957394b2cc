import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { providerServices } from "#shared/pipeline/providers";
import type { LocalCourierBehaviour } from "#shared/shipping/local";
import { testDb } from "../../test/harness";
import { jobContext, servicesFor, type StoreProviders } from "../../test/jobs";
import { orderShop, paidGatewayOrder } from "../../test/orders";
import { callerFor } from "../../test/procedures";
import { trackShipments } from "./shipping-track";

/** {shipping}-track against real Postgres and the local courier, whose `reportStatus` is what it reports. */
const db = testDb();

/** A shop with `n` paid orders, each shipped with the store's (local) courier: n pending shipments. */
async function shippedShop(n: number) {
  const { s, sql } = await orderShop(db);
  const call = callerFor(db, s.ownerUserId, s.id, providerServices(env));
  const shipments: { id: string; orderId: string }[] = [];
  for (let i = 0; i < n; i++) {
    const paid = await paidGatewayOrder(db, s, 1);
    const parcelId = ((await call("orders.get", { id: paid.orderId })) as { parcels: { id: string }[] }).parcels[0]!.id;
    const out = (await call("orders.fulfill", { orderId: paid.orderId, parcelId })) as { shipmentId: string };
    shipments.push({ id: out.shipmentId, orderId: paid.orderId });
  }
  const status = async () =>
    (await sql<{ id: string; status: string; provider_status: string | null }>("select id, status, provider_status from shipment where provider = 'local' order by created_at, id")).map((r) => r.status);
  const trackingEvents = async () => (await sql<{ n: number }>("select count(*)::int as n from shipment_event where source = 'tracking'"))[0]!.n;
  return { s, sql, call, shipments, status, trackingEvents };
}

const run = (stores: Record<string, StoreProviders>) => {
  const ctx = jobContext(db, new Date(), servicesFor(stores));
  return trackShipments(ctx, Object.keys(stores)).then((result) => ({ result, lines: ctx.log.lines }));
};
const reporting = (s: { id: string }, courier: LocalCourierBehaviour) => ({ [s.id]: { courier } });

describe("{shipping}-track", () => {
  it("applies the courier's reports through the shipment routine, forward only: a stale report changes nothing", async () => {
    const { s, sql, status, trackingEvents, shipments } = await shippedShop(2);
    await run(reporting(s, { reportStatus: "in_transit" }));
    expect(await status()).toEqual(["in_transit", "in_transit"]);
    expect(await sql("select status, provider_status, source from shipment_event where shipment_id = $1 order by created_at", [shipments[0]!.id])).toEqual([
      { status: "pending", provider_status: null, source: "merchant" },
      { status: "in_transit", provider_status: "IN_TRANSIT", source: "tracking" },
    ]);
    // The same report again, then a stale one: nothing moves, no event.
    await run(reporting(s, { reportStatus: "in_transit" }));
    await run(reporting(s, { reportStatus: "pending" }));
    expect(await status()).toEqual(["in_transit", "in_transit"]);
    expect(await trackingEvents()).toBe(2);
    await run(reporting(s, { reportStatus: "delivered" }));
    expect(await status()).toEqual(["delivered", "delivered"]);
    expect(await sql("select status, fulfillment_status from shop_order where id = $1", [shipments[0]!.orderId])).toEqual([{ status: "completed", fulfillment_status: "delivered" }]);
    // Delivered is final: an RTO report afterwards changes nothing, and delivered shipments are not asked about.
    const { lines } = await run(reporting(s, { reportStatus: "rto_initiated" }));
    expect(await status()).toEqual(["delivered", "delivered"]);
    expect(lines.find((l) => l.msg === "job.store" && l.storeId === s.id)).toMatchObject({ level: "debug", asked: 0 });
    expect((await sql<{ n: number }>("select count(*)::int as n from outbox_event where kind = 'shipment.delivered'"))[0]!.n).toBe(2);
  });

  it("a courier error for one shipment leaves it for the next run and does not stop the rest; own tracking numbers are not asked", async () => {
    const { s, sql, call, status, shipments } = await shippedShop(3);
    // A tracking number the local courier refuses (bad_request), and one the merchant entered by hand.
    await sql("update shipment set awb = 'LC-NOT-OURS' where id = $1", [shipments[1]!.id]);
    const own = await paidGatewayOrder(db, s, 1);
    const parcelId = ((await call("orders.get", { id: own.orderId })) as { parcels: { id: string }[] }).parcels[0]!.id;
    await call("orders.fulfill", { orderId: own.orderId, parcelId, tracking: { awb: "DLV-1", courierName: "Delhivery" } });
    const { lines } = await run(reporting(s, { reportStatus: "in_transit" }));
    expect(await status()).toEqual(["in_transit", "pending", "in_transit"]);
    expect(await sql("select status from shipment where provider = 'manual' and awb = 'DLV-1'")).toEqual([{ status: "pending" }]);
    expect(lines.find((l) => l.msg === "tracking.courier_error")).toMatchObject({ level: "warn", storeId: s.id, shipmentId: shipments[1]!.id, kind: "bad_request" });
    expect(lines.find((l) => l.msg === "job.store" && l.storeId === s.id)).toMatchObject({ asked: 3, moved: 2, errors: 1 });
    expect((await sql<{ tracked: boolean }>("select tracked_at is not null as tracked from shipment where provider = 'local'")).map((r) => r.tracked)).toEqual([true, true, true]);
    // Fixed at the courier: the next run applies it.
    await sql("update shipment set awb = 'LC0123456789AB' where id = $1", [shipments[1]!.id]);
    await run(reporting(s, { reportStatus: "in_transit" }));
    expect(await status()).toEqual(["in_transit", "in_transit", "in_transit"]);
  });

  it("one failing store among three: the others are tracked, the failure is logged with its store", async () => {
    const shops = [await shippedShop(1), await shippedShop(1), await shippedShop(1)];
    const bad = shops[1]!.s;
    const { result, lines } = await run({
      [shops[0]!.s.id]: { courier: { reportStatus: "in_transit" } },
      [bad.id]: { courier: "broken" },
      [shops[2]!.s.id]: { courier: { reportStatus: "in_transit" } },
    });
    expect(await shops[0]!.status()).toEqual(["in_transit"]);
    expect(await shops[1]!.status()).toEqual(["pending"]);
    expect(await shops[2]!.status()).toEqual(["in_transit"]);
    expect(lines.filter((l) => l.msg === "job.store_failed")).toEqual([expect.objectContaining({ level: "error", storeId: bad.id })]);
    expect(result["failedStores"]).toBe(1);
  });
});
