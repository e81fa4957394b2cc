import { describe, expect, it } from "vitest";
import { razorpayServer, type RazorpayServer } from "./razorpay-server";

// The local server must refuse what Razorpay refuses, or the adapter's tests would prove nothing.
interface Call {
  method?: string;
  body?: unknown;
  /** "key:secret" for Basic auth; null sends none; default the server's own. */
  auth?: string | null;
  headers?: Record<string, string>;
}

async function send(server: RazorpayServer, path: string, init: Call = {}) {
  const headers: Record<string, string> = { "content-type": "application/json", ...init.headers };
  const auth = init.auth === undefined ? `${server.keyId}:${server.keySecret}` : init.auth;
  if (auth !== null) headers.authorization = `Basic ${btoa(auth)}`;
  const response = await server.fetch(`https://razorpay.local${path}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers,
    body: init.body === undefined ? undefined : typeof init.body === "string" ? init.body : JSON.stringify(init.body),
  });
  return { status: response.status, body: (await response.json()) as { error?: { code: string; description: string; field?: string } } & Record<string, unknown> };
}

describe("local Razorpay server: what Razorpay refuses", () => {
  it.each([
    ["no credentials", { auth: null, body: { amount: 100, currency: "INR" } }, 401, undefined],
    ["a wrong secret", { auth: "rzp_test_localKey0001:nope", body: { amount: 100, currency: "INR" } }, 401, undefined],
    ["an amount under 100 paise", { body: { amount: 99, currency: "INR" } }, 400, "amount"],
    ["a fractional amount", { body: { amount: 100.5, currency: "INR" } }, 400, "amount"],
    ["an amount as text", { body: { amount: "100", currency: "INR" } }, 400, "amount"],
    ["no currency", { body: { amount: 100 } }, 400, "currency"],
    ["a receipt over 40 characters", { body: { amount: 100, currency: "INR", receipt: "r".repeat(41) } }, 400, "receipt"],
    ["16 notes", { body: { amount: 100, currency: "INR", notes: Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, "v"])) } }, 400, "notes"],
    ["a field Razorpay does not take", { body: { amount: 100, currency: "INR", customer_email: "x@y.z" } }, 400, undefined],
    ["a body that is not JSON", { body: "amount=100" }, 400, undefined],
  ] as const)("POST /v1/orders with %s", async (_what, init, status, field) => {
    const { status: got, body } = await send(razorpayServer(), "/v1/orders", init);
    expect(got).toBe(status);
    expect(body.error?.code).toBe("BAD_REQUEST_ERROR");
    expect(body.error?.field).toBe(field);
  });

  it("takes a 40-character receipt and answers Razorpay's order entity", async () => {
    const { status, body } = await send(razorpayServer(), "/v1/orders", { body: { amount: 100, currency: "INR", receipt: "r".repeat(40), notes: { a: "b" } } });
    expect(status).toBe(200);
    expect(body).toMatchObject({ entity: "order", amount: 100, amount_paid: 0, amount_due: 100, currency: "INR", status: "created", attempts: 0, notes: { a: "b" } });
    expect(body.id).toMatch(/^order_[A-Za-z0-9]{14}$/);
  });

  it("an unknown id → 400 'does not exist'; an unknown path → 400", async () => {
    const server = razorpayServer();
    expect((await send(server, "/v1/orders/order_Nope00000000001")).body.error?.description).toBe("The id provided does not exist");
    expect((await send(server, "/v1/nothing")).status).toBe(400);
  });

  it("refunds: the same idempotency key with another body is refused; a key under 10 characters too", async () => {
    const server = razorpayServer();
    const order = (await send(server, "/v1/orders", { body: { amount: 10_000, currency: "INR" } })).body as { id: string };
    const { payment } = await server.pay(order.id, "captured");
    const path = `/v1/payments/${payment.id}/refund`;
    const first = await send(server, path, { body: { amount: 1_000 }, headers: { "x-refund-idempotency": "key-0000000001" } });
    expect(first.status).toBe(200);
    const replay = await send(server, path, { body: { amount: 1_000 }, headers: { "x-refund-idempotency": "key-0000000001" } });
    expect(replay.body.id).toBe(first.body.id);
    const other = await send(server, path, { body: { amount: 2_000 }, headers: { "x-refund-idempotency": "key-0000000001" } });
    expect(other.body.error?.description).toBe("Different request with the same idempotency key has already been processed.");
    expect((await send(server, path, { body: { amount: 1_000 }, headers: { "x-refund-idempotency": "short" } })).status).toBe(400);
    expect(server.state.refunds.size).toBe(1);
  });

  it("refuses to refund a payment that is only authorized", async () => {
    const server = razorpayServer();
    const order = (await send(server, "/v1/orders", { body: { amount: 10_000, currency: "INR" } })).body as { id: string };
    const { payment } = await server.pay(order.id, "authorized");
    expect((await send(server, `/v1/payments/${payment.id}/refund`, { body: { amount: 1_000 } })).status).toBe(400);
  });

  it("a fault applies to the requests it names, as many times as told, then the server answers again", async () => {
    const server = razorpayServer();
    server.fail({ status: 503, times: 2, match: /^GET / });
    expect((await send(server, "/v1/orders", { body: { amount: 100, currency: "INR" } })).status).toBe(200);
    expect((await send(server, "/v1/orders")).status).toBe(503);
    expect((await send(server, "/v1/orders")).status).toBe(503);
    expect((await send(server, "/v1/orders")).status).toBe(200);
  });
});
