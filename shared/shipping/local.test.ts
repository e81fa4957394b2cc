import { describe, expect, it } from "vitest";
import { decodeJson, encodeJson, hmacSha256Hex } from "#shared/core/crypto";
import { sendLocalWebhook } from "#shared/payments/local-protocol";
import { localCourier, parseLocalCourierBehaviour, type LocalCourierBehaviour } from "./local";
import { buildLocalCourierWebhook, deriveLocalCourierSecret, localRefStoreId, readLocalShipmentRef } from "./local-protocol";
import { courierFailure, OTHER_STORE_ID, SHIPMENT_ID, shipmentInput, STORE_ID } from "../../test/fakes/shipping";

const ROOT = "dev-root-secret-0123456789";
const WORKER = "http://localhost:8789";

async function setup(behaviour: LocalCourierBehaviour = {}, timeoutMs?: number, storeId = STORE_ID) {
  const secret = await deriveLocalCourierSecret(ROOT, storeId);
  return { secret, courier: localCourier({ storeId, secret, pageOrigin: WORKER, behaviour, timeoutMs }) };
}

const hook = (secret: string, awb: string, status: "in_transit" | "delivered" | "rto_initiated" | "rto_delivered" = "delivered", occurredAt?: string) =>
  buildLocalCourierWebhook({ storeId: STORE_ID, awb, status, secret, workerOrigin: WORKER, occurredAt });

describe("local courier: create → tracking page → signed webhook, with no storage", () => {
  it("answers an AWB, its name and a tracking page whose ref carries the shipment", async () => {
    const { secret, courier } = await setup();
    const created = await courier.createShipment(shipmentInput());
    expect(created).toEqual({ awb: expect.stringMatching(/^LC[0-9A-F]{12}$/), courierName: "Local Courier", trackingUrl: expect.any(String), status: "pending" });
    const url = new URL(created.trackingUrl!);
    expect(url.origin).toBe(WORKER);
    expect(url.pathname).toMatch(/^\/-courier\/track\/lc1\./);
    const ref = url.pathname.slice("/-courier/track/".length);
    expect(localRefStoreId(ref)).toBe(STORE_ID);
    expect(await readLocalShipmentRef(ref, secret)).toEqual({ storeId: STORE_ID, shipmentId: SHIPMENT_ID, orderNumber: "1002", awb: created.awb, destination: "Pune 411001" });
  });

  it("the same shipment always gets the same AWB (a retry is idempotent); another shipment or store another", async () => {
    const { courier } = await setup();
    const a = await courier.createShipment(shipmentInput());
    const b = await courier.createShipment(shipmentInput());
    const c = await courier.createShipment(shipmentInput({ shipmentId: "7d1e3c55-2222-4333-8444-000000000000" }));
    const other = await (await setup({}, undefined, OTHER_STORE_ID)).courier.createShipment(shipmentInput());
    expect(b.awb).toBe(a.awb);
    expect(c.awb).not.toBe(a.awb);
    expect(other.awb).not.toBe(a.awb);
  });

  it("a ref with a changed AWB, another store's ref, or garbage reads as nothing", async () => {
    const { secret, courier } = await setup();
    const ref = new URL((await courier.createShipment(shipmentInput())).trackingUrl!).pathname.split("/").pop()!;
    const [version, payload, sig] = ref.split(".") as [string, string, string];
    const forged = { ...(decodeJson(payload) as Record<string, unknown>), w: "LC000000000000" };
    expect(await readLocalShipmentRef(`${version}.${encodeJson(forged)}.${sig}`, secret)).toBeNull();
    expect(await readLocalShipmentRef(ref, await deriveLocalCourierSecret(ROOT, OTHER_STORE_ID))).toBeNull();
    expect(await readLocalShipmentRef("lc1.garbage", secret)).toBeNull();
    expect(localRefStoreId("lp1.e30.00")).toBeNull();
  });

  it("refuses a bad input before anything, naming the field", async () => {
    const { courier } = await setup();
    expect(await courierFailure(courier.createShipment(shipmentInput({ items: [] })))).toMatchObject({ provider: "local", kind: "bad_request", field: "items" });
    const badPin = shipmentInput();
    badPin.shipTo.postalCode = "4110";
    expect(await courierFailure(courier.createShipment(badPin))).toMatchObject({ kind: "bad_request", field: "shipTo.postalCode", retryable: false });
  });
});

describe("local courier webhooks: X-Local-Courier-Signature over the raw body, event id in the body", () => {
  it("a signed update verifies with the store's secret and names the AWB, status and time", async () => {
    const { secret, courier } = await setup();
    const { awb } = await courier.createShipment(shipmentInput());
    const w = await hook(secret, awb, "delivered", "2026-05-04T10:00:00.000Z");
    expect(w.url).toBe(`${WORKER}/webhooks/shipments/local/${STORE_ID}`);
    const request = new Request(w.url, { method: "POST", headers: w.headers, body: w.body });
    expect(await courier.verifyWebhook(await request.text(), request.headers, secret)).toEqual({
      kind: "shipment",
      eventId: w.eventId,
      awb,
      status: "delivered",
      providerStatus: "DELIVERED",
      occurredAt: "2026-05-04T10:00:00.000Z",
    });
  });

  it("a wrong secret (another store's), a tampered body or a missing signature → null", async () => {
    const { secret, courier } = await setup();
    const { awb } = await courier.createShipment(shipmentInput());
    const w = await hook(secret, awb);
    const headers = new Headers(w.headers);
    expect(await courier.verifyWebhook(w.body, headers, await deriveLocalCourierSecret(ROOT, OTHER_STORE_ID))).toBeNull();
    expect(await courier.verifyWebhook(w.body.replace('"delivered"', '"rto_delivered"'), headers, secret)).toBeNull();
    expect(await courier.verifyWebhook(w.body, new Headers({ "content-type": "application/json" }), secret)).toBeNull();
    expect(await courier.verifyWebhook(w.body, headers, "")).toBeNull();
  });

  it("a second delivery or a second click carries the same event id; another status is another event", async () => {
    const { secret, courier } = await setup();
    const { awb } = await courier.createShipment(shipmentInput());
    const w = await hook(secret, awb, "in_transit");
    const seen: string[] = [];
    const statuses = await sendLocalWebhook(w, {
      deliveries: 2,
      fetch: async (request) => {
        seen.push((await courier.verifyWebhook(await request.text(), request.headers, secret))?.eventId ?? "rejected");
        return new Response(null, { status: 204 });
      },
    });
    expect(statuses).toEqual([204, 204]);
    expect(seen).toEqual([w.eventId, w.eventId]);
    expect((await hook(secret, awb, "in_transit", "2030-01-01T00:00:00Z")).eventId).toBe(w.eventId);
    expect((await hook(secret, awb, "delivered")).eventId).not.toBe(w.eventId);
  });

  it("a signed body that is no status update is acknowledged and ignored", async () => {
    const { secret, courier } = await setup();
    const sign = async (body: string) => new Headers({ "x-local-courier-signature": await hmacSha256Hex(secret, body) });
    const odd = JSON.stringify({ id: "evt_1", event: "shipment.status", awb: "LC000000000000", status: "lost" });
    expect(await courier.verifyWebhook(odd, await sign(odd), secret)).toEqual({ kind: "ignored", eventId: "evt_1", reason: expect.stringContaining("lost") });
    const junk = "not json";
    expect(await courier.verifyWebhook(junk, await sign(junk), secret)).toMatchObject({ kind: "ignored", eventId: expect.stringMatching(/^body:/) });
  });
});

describe("local courier: failures and delays on demand", () => {
  it("fails the first create calls of a shipment only, so that the retry works", async () => {
    const { courier } = await setup({ failCreate: "unavailable", failCreateUpTo: 2 });
    const input = shipmentInput({ shipmentId: crypto.randomUUID() });
    expect(await courierFailure(courier.createShipment(input))).toMatchObject({ provider: "local", kind: "unavailable", retryable: true });
    expect(await courierFailure(courier.createShipment(input))).toMatchObject({ kind: "unavailable" });
    expect((await courier.createShipment(input)).awb).toMatch(/^LC/);
  });

  it("refuses every shipment as not serviceable when told to", async () => {
    const { courier } = await setup({ failCreate: "not_serviceable" });
    expect(await courierFailure(courier.createShipment(shipmentInput()))).toMatchObject({ kind: "not_serviceable", retryable: false });
  });

  it("answers late, and past the deadline fails with timeout", async () => {
    const slow = await setup({ createDelayMs: 30 }, 1_000);
    const started = Date.now();
    await slow.courier.createShipment(shipmentInput());
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
    const stuck = await setup({ createDelayMs: 5_000 }, 40);
    expect(await courierFailure(stuck.courier.createShipment(shipmentInput()))).toMatchObject({ kind: "timeout", retryable: true });
  });

  it("track reports what it is told (default pending); track and cancel fail on demand and refuse a foreign AWB", async () => {
    const plain = await setup();
    const { awb } = await plain.courier.createShipment(shipmentInput());
    expect(await plain.courier.track(awb)).toEqual({ awb, status: "pending", providerStatus: "PENDING" });
    await plain.courier.cancel(awb);
    const told = await setup({ reportStatus: "in_transit", failCancel: "bad_request" });
    expect(await told.courier.track(awb)).toMatchObject({ status: "in_transit", providerStatus: "IN_TRANSIT" });
    expect(await courierFailure(told.courier.cancel(awb))).toMatchObject({ kind: "bad_request" });
    expect(await courierFailure((await setup({ failTrack: "rate_limited" })).courier.track(awb))).toMatchObject({ kind: "rate_limited", retryable: true });
    expect(await courierFailure(plain.courier.track("1234"))).toMatchObject({ kind: "bad_request", field: "awb" });
  });

  it("LOCAL_COURIER_BEHAVIOUR is checked, naming the wrong key", () => {
    expect(parseLocalCourierBehaviour(undefined)).toEqual({});
    expect(parseLocalCourierBehaviour('{"failCreate":"not_serviceable","webhookDeliveries":2}')).toEqual({ failCreate: "not_serviceable", webhookDeliveries: 2 });
    expect(() => parseLocalCourierBehaviour("{")).toThrow(/not JSON/);
    expect(() => parseLocalCourierBehaviour('{"failCreat":"timeout"}')).toThrow(/failCreat/);
    expect(() => parseLocalCourierBehaviour('{"reportStatus":"lost"}')).toThrow(/reportStatus/);
  });
});
