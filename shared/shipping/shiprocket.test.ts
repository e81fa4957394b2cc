import { describe, expect, it } from "vitest";
import type { CreateShipmentInput } from "./courier";
import { shiprocketCourier, type ShiprocketConfig } from "./shiprocket";
import { ShiprocketTokens, TOKEN_LIFETIME_MS } from "./shiprocket-http";
import { shiprocketServer, type ShiprocketServerOptions } from "../../test/fakes/shiprocket-server";
import { courierFailure, SHIPMENT_ID, shipmentInput } from "../../test/fakes/shipping";

const BASE = "https://shiprocket.local";

function setup(options: ShiprocketServerOptions & { timeoutMs?: number; adapter?: Partial<ShiprocketConfig> } = {}) {
  let clock = Date.parse("2026-05-04T06:30:00Z");
  const now = () => clock;
  const server = shiprocketServer({ now, ...options });
  const tokens = new ShiprocketTokens();
  const make = (extra: Partial<ShiprocketConfig> = {}) =>
    shiprocketCourier({ email: server.email, password: server.password, baseUrl: BASE, fetch: server.fetch, timeoutMs: options.timeoutMs ?? 2_000, tokens, now, ...options.adapter, ...extra });
  return { server, tokens, courier: make(), make, advance: (ms: number) => void (clock += ms) };
}

const failure = courierFailure;
const onlyOrder = (server: ReturnType<typeof shiprocketServer>) => {
  const orders = [...server.state.orders.values()];
  expect(orders).toHaveLength(1);
  return orders[0]!;
};

describe("Shiprocket adapter: login and its token", () => {
  it("logs in once and reuses the token for every call and every adapter of the isolate", async () => {
    const { server, tokens, courier, make } = setup();
    await courier.createShipment(shipmentInput());
    await make().track((await courier.createShipment(shipmentInput())).awb);
    expect(tokens.logins).toBe(1);
    expect(server.requests.filter((r) => r === "POST /v1/external/auth/login")).toHaveLength(1);
  });

  it("logs in again once after a 401 (a token revoked early) and repeats the call", async () => {
    const { server, tokens, courier } = setup();
    const { awb } = await courier.createShipment(shipmentInput());
    server.expireTokens();
    expect(await courier.track(awb)).toMatchObject({ awb, status: "pending" });
    expect(tokens.logins).toBe(2);
    expect(server.requests.slice(-3)).toEqual(["GET /v1/external/courier/track/awb/" + awb, "POST /v1/external/auth/login", "GET /v1/external/courier/track/awb/" + awb]);
  });

  it("logs in again a day before the token's 10 days run out, not before", async () => {
    const { tokens, courier, advance } = setup();
    const { awb } = await courier.createShipment(shipmentInput());
    advance(TOKEN_LIFETIME_MS - 2 * 24 * 3600_000);
    await courier.track(awb);
    expect(tokens.logins).toBe(1);
    advance(24 * 3600_000 + 1);
    await courier.track(awb);
    expect(tokens.logins).toBe(2);
  });

  it("concurrent first calls share one login", async () => {
    const { tokens, courier } = setup();
    await Promise.all([courier.track("100000000001"), courier.track("100000000002"), courier.track("100000000003")]);
    expect(tokens.logins).toBe(1);
  });

  it("a wrong password → auth, not retryable; a 401 that persists after the new login → auth", async () => {
    const wrong = setup({ adapter: { password: "not-the-password" } });
    const e = await failure(wrong.courier.createShipment(shipmentInput()));
    expect(e).toMatchObject({ provider: "shiprocket", kind: "auth", retryable: false, status: 400 });
    expect(e.message).toContain("Invalid email and password combination");
    const { server, courier } = setup();
    server.fail({ status: 401, message: "Unauthenticated.", times: 2, match: /track/ });
    expect(await failure(courier.track("100000000001"))).toMatchObject({ kind: "auth", status: 401 });
  });
});

describe("Shiprocket adapter: createShipment", () => {
  it("creates an ad-hoc order (order_id = our shipment id) and assigns its AWB", async () => {
    const { server, courier } = setup();
    const created = await courier.createShipment(shipmentInput());
    const order = onlyOrder(server);
    expect(created).toEqual({
      awb: order.shipment.awb,
      providerRef: String(order.shipment.id),
      courierName: "Delhivery Surface",
      trackingUrl: `https://shiprocket.co/tracking/${order.shipment.awb}`,
      status: "pending",
    });
    expect(order.request).toEqual({
      order_id: SHIPMENT_ID,
      order_date: "2026-05-04 12:00",
      pickup_location: "Mumbai Warehouse",
      comment: "Order 1002",
      billing_customer_name: "Asha Rao",
      billing_address: "12 MG Road",
      billing_city: "Pune",
      billing_pincode: 411001,
      billing_state: "Maharashtra",
      billing_country: "India",
      billing_email: "asha@example.test",
      billing_phone: 9800000001,
      shipping_is_billing: true,
      order_items: [
        { name: "Handloom saree", sku: "SAREE-RED", units: 1, selling_price: 999.5 },
        { name: "Cotton stole", sku: "STOLE-1", units: 2, selling_price: 167 },
      ],
      payment_method: "Prepaid",
      total_discount: 100,
      sub_total: 1233.5,
      length: 10,
      breadth: 10,
      height: 10,
      weight: 0.85,
    });
    expect(server.requests.filter((r) => !r.includes("login"))).toEqual(["GET /v1/external/orders", "POST /v1/external/orders/create/adhoc", "POST /v1/external/courier/assign/awb"]);
  });

  it("is idempotent by channel order id: a retry gets the same AWB and makes no second order", async () => {
    const { server, courier } = setup();
    const first = await courier.createShipment(shipmentInput());
    const again = await courier.createShipment(shipmentInput());
    expect(again).toEqual(first);
    onlyOrder(server);
    const other = await courier.createShipment(shipmentInput({ shipmentId: "7d1e3c55-2222-4333-8444-000000000009" }));
    expect(other.awb).not.toBe(first.awb);
  });

  it("an order whose AWB assignment failed gets its AWB on the retry, on the same order", async () => {
    const { server, courier } = setup();
    server.fail({ status: 502, match: /assign\/awb/ });
    expect(await failure(courier.createShipment(shipmentInput()))).toMatchObject({ kind: "unavailable", retryable: true, status: 502 });
    const created = await courier.createShipment(shipmentInput());
    expect(created.awb).toBe(onlyOrder(server).shipment.awb);
  });

  it("an order Shiprocket made after our deadline (the answer lost) is the one the retry finds", async () => {
    const { server, courier } = setup({ timeoutMs: 50 });
    server.fail({ delayMs: 120, match: /create\/adhoc/ });
    expect(await failure(courier.createShipment(shipmentInput()))).toMatchObject({ kind: "timeout", retryable: true });
    await new Promise((r) => setTimeout(r, 200));
    const late = onlyOrder(server);
    expect((await courier.createShipment(shipmentInput())).providerRef).toBe(String(late.shipment.id));
    onlyOrder(server);
  });

  it("takes the AWB from the create answer on accounts that assign couriers automatically", async () => {
    const { server, courier } = setup({ autoAssign: true });
    const created = await courier.createShipment(shipmentInput());
    expect(created.awb).toBe(onlyOrder(server).shipment.awb);
    expect(server.requests.some((r) => r.includes("assign/awb"))).toBe(false);
  });

  it("a shipment whose Shiprocket order was cancelled cannot be created again under its id", async () => {
    const { courier } = setup();
    const { awb } = await courier.createShipment(shipmentInput());
    await courier.cancel(awb);
    expect(await failure(courier.createShipment(shipmentInput()))).toMatchObject({ kind: "bad_request", field: "shipmentId" });
  });

  it("a pincode no courier serves → not_serviceable, not retryable", async () => {
    const { courier } = setup({ unserviceablePincodes: ["194101"] });
    const input = shipmentInput();
    input.shipTo = { ...input.shipTo, city: "Leh", state: "IN-LA", postalCode: "194101" };
    const e = await failure(courier.createShipment(input));
    expect(e).toMatchObject({ provider: "shiprocket", kind: "not_serviceable", retryable: false });
    expect(e.message).toContain("194101");
  });

  it("Shiprocket's 422 → bad_request naming our field", async () => {
    const { courier } = setup();
    const e = await failure(courier.createShipment(shipmentInput({ pickup: { locationId: "x", name: "Bandra Boutique" } })));
    expect(e).toMatchObject({ kind: "bad_request", retryable: false, status: 422, field: "pickup.name" });
    expect(e.message).toContain("Wrong Pickup location");
  });

  it("refuses, before sending anything, what Shiprocket cannot take", async () => {
    const { server, courier } = setup();
    const cases: [CreateShipmentInput, string][] = [
      [{ ...shipmentInput(), shipTo: { ...shipmentInput().shipTo, phone: undefined } }, "shipTo.phone"],
      [{ ...shipmentInput(), shipTo: { ...shipmentInput().shipTo, phone: "12345" } }, "shipTo.phone"],
      [{ ...shipmentInput(), shipTo: { ...shipmentInput().shipTo, email: undefined } }, "shipTo.email"],
      [{ ...shipmentInput(), shipTo: { ...shipmentInput().shipTo, state: "IN-XX" } }, "shipTo.state"],
      [shipmentInput({ currency: "USD" }), "currency"],
      [shipmentInput({ weightGrams: 0 }), "weightGrams"],
      [shipmentInput({ shipmentId: "x".repeat(51) }), "shipmentId"],
    ];
    for (const [input, field] of cases) expect(await failure(courier.createShipment(input))).toMatchObject({ kind: "bad_request", field });
    expect(server.requests).toEqual([]);
  });

  it("5xx → unavailable; 429 → rate_limited with Retry-After; slow → timeout; unreachable or odd answers → unavailable", async () => {
    const { server, courier } = setup({ timeoutMs: 50 });
    server.fail({ status: 503, match: /orders$/ });
    expect(await failure(courier.createShipment(shipmentInput()))).toMatchObject({ kind: "unavailable", retryable: true, status: 503 });
    server.fail({ status: 429, retryAfter: 30, message: "Too Many Attempts." });
    expect(await failure(courier.createShipment(shipmentInput()))).toMatchObject({ kind: "rate_limited", retryable: true, status: 429, retryAfterSeconds: 30 });
    server.fail({ delayMs: 1_000, match: /orders$/ });
    const started = Date.now();
    expect(await failure(courier.createShipment(shipmentInput()))).toMatchObject({ kind: "timeout", retryable: true });
    expect(Date.now() - started).toBeLessThan(900);
    const down = shiprocketCourier({ email: "a@b.test", password: "p", fetch: () => Promise.reject(new TypeError("connection refused")), tokens: new ShiprocketTokens() });
    expect((await failure(down.track("100000000001"))).message).toContain("connection refused");
    const odd = shiprocketCourier({ email: "a@b.test", password: "p", fetch: async () => Response.json({ hello: 1 }), tokens: new ShiprocketTokens() });
    expect(await failure(odd.track("100000000001"))).toMatchObject({ kind: "unavailable" });
    const html = shiprocketCourier({ email: "a@b.test", password: "p", fetch: async () => new Response("<html>", { status: 200 }), tokens: new ShiprocketTokens() });
    expect(await failure(html.track("100000000001"))).toMatchObject({ kind: "unavailable" });
  });

  it("403 → auth", async () => {
    const { server, courier } = setup();
    server.fail({ status: 403, message: "You are not authorized", match: /orders$/ });
    expect(await failure(courier.createShipment(shipmentInput()))).toMatchObject({ kind: "auth", status: 403, retryable: false });
  });
});

describe("Shiprocket adapter: track and cancel", () => {
  it("tracks by AWB: pending before the first scan, then Shiprocket's status mapped to ours", async () => {
    const { server, courier } = setup();
    const { awb } = await courier.createShipment(shipmentInput());
    expect(await courier.track(awb)).toEqual({ awb, status: "pending", providerStatus: "NO SCANS YET" });
    server.scan(awb, 42);
    expect(await courier.track(awb)).toEqual({ awb, status: "in_transit", providerStatus: "PICKED UP", occurredAt: "2026-05-04T12:00:00+05:30" });
    server.scan(awb, 21);
    expect(await courier.track(awb)).toMatchObject({ status: "pending", providerStatus: "UNDELIVERED" });
    server.scan(awb, 7);
    expect(await courier.track(awb)).toMatchObject({ status: "delivered", providerStatus: "DELIVERED" });
  });

  it("cancels by AWB before pickup; after pickup Shiprocket refuses (bad_request)", async () => {
    const { server, courier } = setup();
    const { awb } = await courier.createShipment(shipmentInput());
    await courier.cancel(awb);
    expect(server.state.byAwb(awb)?.shipment.statusId).toBe(8);
    expect(await courier.track(awb)).toMatchObject({ status: "cancelled" });
    const picked = await courier.createShipment(shipmentInput({ shipmentId: "7d1e3c55-2222-4333-8444-000000000010" }));
    server.scan(picked.awb, 42);
    expect(await failure(courier.cancel(picked.awb))).toMatchObject({ kind: "bad_request", status: 400 });
  });

  it("refuses an AWB that could change the path before sending", async () => {
    const { server, courier } = setup();
    expect(await failure(courier.track("../orders"))).toMatchObject({ kind: "bad_request", field: "awb" });
    expect(await failure(courier.cancel(""))).toMatchObject({ kind: "bad_request", field: "awb" });
    expect(server.requests).toEqual([]);
  });
});
