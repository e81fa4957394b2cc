import { describe, expect, it } from "vitest";
import { adhocOrder } from "#shared/shipping/shiprocket";
import { shiprocketServer, type ShiprocketServer } from "./shiprocket-server";
import { shipmentInput } from "./shipping";

// The local server must refuse what Shiprocket refuses, or the adapter's tests would prove nothing.
async function send(server: ShiprocketServer, method: string, path: string, body?: unknown, token?: string | null) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await server.fetch(`https://shiprocket.local${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as { message?: string; errors?: Record<string, string[]>; token?: string } };
}

async function loggedIn() {
  const server = shiprocketServer();
  const login = await send(server, "POST", "/v1/external/auth/login", { email: server.email, password: server.password });
  expect(login.status).toBe(200);
  return { server, token: login.body.token! };
}

const order = (overrides: Record<string, unknown> = {}) => ({ ...adhocOrder(shipmentInput(), "2026-05-04 12:00"), ...overrides });

describe("local Shiprocket server: what Shiprocket refuses", () => {
  it("a wrong password, and any call without a valid bearer token", async () => {
    const server = shiprocketServer();
    expect(await send(server, "POST", "/v1/external/auth/login", { email: server.email, password: "x" })).toMatchObject({ status: 400, body: { message: "Invalid email and password combination" } });
    expect(await send(server, "GET", "/v1/external/orders")).toMatchObject({ status: 401, body: { message: "Unauthenticated." } });
    expect(await send(server, "GET", "/v1/external/orders", undefined, "sim.forged")).toMatchObject({ status: 401 });
  });

  it.each([
    ["a missing required field", { weight: undefined }, "weight"],
    ["an unknown pickup location", { pickup_location: "Nowhere" }, "pickup_location"],
    ["an undocumented field", { pickup_id: 3 }, "pickup_id"],
    ["a 5-digit pincode", { billing_pincode: 41100 }, "billing_pincode"],
    ["a box under 0.5 cm", { height: 0.4 }, "height"],
    ["an order_id of 51 characters", { order_id: "x".repeat(51) }, "order_id"],
    ["an item without its sku", { order_items: [{ name: "A", units: 1, selling_price: 10 }] }, "order_items.0.sku"],
  ])("an ad-hoc order with %s → 422 naming the field", async (_, overrides, field) => {
    const { server, token } = await loggedIn();
    const res = await send(server, "POST", "/v1/external/orders/create/adhoc", order(overrides), token);
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors ?? {})).toEqual([field]);
  });

  it("accepts the adapter's order as is; the same order_id again answers the existing order", async () => {
    const { server, token } = await loggedIn();
    const first = await send(server, "POST", "/v1/external/orders/create/adhoc", order(), token);
    const again = await send(server, "POST", "/v1/external/orders/create/adhoc", order(), token);
    expect(first.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(server.state.orders.size).toBe(1);
  });

  it("AWB assignment and cancelling need their fields; an unknown endpoint is Shiprocket's 404", async () => {
    const { server, token } = await loggedIn();
    expect(await send(server, "POST", "/v1/external/courier/assign/awb", {}, token)).toMatchObject({ status: 422, body: { errors: { shipment_id: expect.any(Array) } } });
    expect(await send(server, "POST", "/v1/external/courier/assign/awb", { shipment_id: 1 }, token)).toMatchObject({ status: 400, body: { message: "Invalid shipment id" } });
    expect(await send(server, "POST", "/v1/external/orders/cancel/shipment/awbs", { awbs: [] }, token)).toMatchObject({ status: 422 });
    expect(await send(server, "GET", "/v1/external/nothing", undefined, token)).toMatchObject({ status: 404, body: { message: "404 Not Found" } });
  });
});
