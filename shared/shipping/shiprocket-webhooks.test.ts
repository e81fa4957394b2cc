import { describe, expect, it } from "vitest";
import { SHIPMENT_STATUSES } from "#shared/rules/status";
import { shiprocketCourier } from "./shiprocket";
import { ShiprocketTokens } from "./shiprocket-http";
import { shiprocketServer } from "../../test/fakes/shiprocket-server";
import { SHIPROCKET_STATUS, SHIPROCKET_UNMAPPED, istToIso, shipmentStatusOf } from "./shiprocket-status";
import { shipmentInput } from "../../test/fakes/shipping";

async function shipped() {
  let clock = Date.parse("2026-05-04T06:30:00Z");
  const server = shiprocketServer({ now: () => clock });
  const courier = shiprocketCourier({ email: server.email, password: server.password, baseUrl: "https://shiprocket.local", fetch: server.fetch, tokens: new ShiprocketTokens() });
  const { awb } = await courier.createShipment(shipmentInput());
  return { server, courier, awb, token: server.webhookToken, advance: (ms: number) => void (clock += ms) };
}

const headersOf = (w: { headers: Record<string, string> }) => new Headers(w.headers);

describe("Shiprocket webhooks: the panel's token in x-api-key, deduped by AWB + status + scan time", () => {
  it("maps a scan to our status, with Shiprocket's words and the scan's India time", async () => {
    const { server, courier, awb, token } = await shipped();
    const w = server.scan(awb, 17);
    expect(await courier.verifyWebhook(w.body, headersOf(w), token)).toEqual({
      kind: "shipment",
      eventId: expect.stringMatching(/^sr:[0-9a-f]{40}$/),
      awb,
      status: "in_transit",
      providerStatus: "OUT FOR DELIVERY",
      occurredAt: "2026-05-04T12:00:00+05:30",
    });
  });

  it("a wrong, missing or empty token → null, before the body is read", async () => {
    const { server, courier, awb, token } = await shipped();
    const w = server.scan(awb, 7);
    const wrong = headersOf(w);
    wrong.set("x-api-key", `${token}x`);
    expect(await courier.verifyWebhook(w.body, wrong, token)).toBeNull();
    const missing = headersOf(w);
    missing.delete("x-api-key");
    expect(await courier.verifyWebhook(w.body, missing, token)).toBeNull();
    expect(await courier.verifyWebhook(w.body, headersOf(w), "")).toBeNull();
    expect(await courier.verifyWebhook("not even json", wrong, token)).toBeNull();
  });

  it("the dedupe id is the same for a redelivery of one scan, and differs for the next scan even with the same status", async () => {
    const { server, courier, awb, token, advance } = await shipped();
    const first = server.scan(awb, 18);
    const again = server.state.webhook(awb);
    const a = await courier.verifyWebhook(first.body, headersOf(first), token);
    const b = await courier.verifyWebhook(again.body, headersOf(again), token);
    expect(b?.eventId).toBe(a?.eventId);
    // The same scan re-sent with its scan list grown or ETA changed is still the same event.
    const edited = JSON.stringify({ ...(JSON.parse(first.body) as object), etd: "2026-05-06 18:00:00", scans: [] });
    expect((await courier.verifyWebhook(edited, headersOf(first), token))?.eventId).toBe(a?.eventId);
    advance(3_600_000);
    const next = server.scan(awb, 18);
    expect((await courier.verifyWebhook(next.body, headersOf(next), token))?.eventId).not.toBe(a?.eventId);
  });

  it("a status we do not act on, a return's update, or a body that is no update: acknowledged and ignored", async () => {
    const { server, courier, awb, token } = await shipped();
    const pickup = server.scan(awb, 19);
    expect(await courier.verifyWebhook(pickup.body, headersOf(pickup), token)).toMatchObject({ kind: "ignored", reason: expect.stringContaining("OUT FOR PICKUP") });
    const ret = JSON.stringify({ ...(JSON.parse(server.scan(awb, 7).body) as object), is_return: 1 });
    expect(await courier.verifyWebhook(ret, headersOf(pickup), token)).toMatchObject({ kind: "ignored", reason: "a return shipment's update" });
    // What the panel's "test webhook" may send.
    const test = await courier.verifyWebhook("{}", headersOf(pickup), token);
    expect(test).toMatchObject({ kind: "ignored", eventId: expect.stringMatching(/^body:/) });
  });

  it("a body without status codes is mapped by its status name", async () => {
    const { courier, token } = await shipped();
    const body = JSON.stringify({ awb: 123456789012, current_status: "RTO Delivered", current_timestamp: "05 05 2026 09:15:00" });
    expect(await courier.verifyWebhook(body, new Headers({ "x-api-key": token }), token)).toMatchObject({
      kind: "shipment",
      awb: "123456789012",
      status: "rto_delivered",
      providerStatus: "RTO DELIVERED",
      occurredAt: "2026-05-05T09:15:00+05:30",
    });
  });
});

describe("Shiprocket's status codes → ours (docs/shipping.md)", () => {
  it("is exactly this table", () => {
    const table = Object.fromEntries(Object.entries(SHIPROCKET_STATUS).map(([code, { status }]) => [code, status]));
    expect(table).toEqual({
      6: "in_transit",
      7: "delivered",
      8: "cancelled",
      9: "rto_initiated",
      10: "rto_delivered",
      14: "rto_delivered",
      17: "in_transit",
      18: "in_transit",
      22: "in_transit",
      38: "in_transit",
      39: "in_transit",
      40: "rto_initiated",
      41: "rto_initiated",
      42: "in_transit",
      45: "cancelled",
      46: "rto_initiated",
      48: "in_transit",
      50: "in_transit",
      51: "in_transit",
      75: "rto_initiated",
      78: "rto_initiated",
    });
    for (const { status } of Object.values(SHIPROCKET_STATUS)) expect(SHIPMENT_STATUSES).toContain(status);
  });

  it("codes we leave alone map to nothing; names map as their codes do", () => {
    for (const code of Object.keys(SHIPROCKET_UNMAPPED)) expect(shipmentStatusOf(Number(code), undefined)).toBeUndefined();
    expect(shipmentStatusOf(undefined, "out_for_delivery")).toBe("in_transit");
    expect(shipmentStatusOf(undefined, "Cancelled")).toBe("cancelled");
    expect(shipmentStatusOf(undefined, "PICKUP SCHEDULED")).toBeUndefined();
    // A code wins over a name that disagrees.
    expect(shipmentStatusOf(7, "IN TRANSIT")).toBe("delivered");
  });

  it("reads Shiprocket's two India-time formats", () => {
    expect(istToIso("23 05 2023 11:43:52")).toBe("2023-05-23T11:43:52+05:30");
    expect(istToIso("2022-07-19 11:37:00")).toBe("2022-07-19T11:37:00+05:30");
    expect(istToIso("yesterday")).toBeUndefined();
    expect(istToIso(undefined)).toBeUndefined();
  });
});
