import { describe, expect, it } from "vitest";
import type { CreatePaymentInput } from "./gateway";
import { razorpayGateway } from "./razorpay";
import { razorpayServer, type RazorpayServer } from "../../test/fakes/razorpay-server";
import { createInput, gatewayFailure, ORDER_ID } from "../../test/fakes/payments";

function setup(overrides: { keySecret?: string; timeoutMs?: number } = {}) {
  const server = razorpayServer();
  const gateway = razorpayGateway({
    keyId: server.keyId,
    keySecret: overrides.keySecret ?? server.keySecret,
    baseUrl: "https://razorpay.local",
    fetch: server.fetch,
    timeoutMs: overrides.timeoutMs ?? 2_000,
    merchantName: "Demo Store",
  });
  return { server, gateway };
}

const RETURN_URL = `https://demo.localhost/api/checkout/${ORDER_ID}/confirm`;

function input(attempt = 1, amount = 123_450): CreatePaymentInput {
  return createInput(attempt, { amount, customer: { email: "asha@example.test", phone: "+919800000001" }, returnUrl: RETURN_URL });
}

const failure = gatewayFailure;

function onlyOrder(server: RazorpayServer) {
  const orders = [...server.state.orders.values()];
  expect(orders).toHaveLength(1);
  return orders[0]!;
}

describe("Razorpay adapter: createPayment", () => {
  it("creates one Razorpay order per attempt (receipt = the attempt's key) and hands back Hosted Checkout's form", async () => {
    const { server, gateway } = setup();
    const created = await gateway.createPayment(input());
    const order = onlyOrder(server);
    expect(order).toMatchObject({ amount: 123_450, currency: "INR", receipt: input().idempotencyKey, status: "created" });
    expect(order.notes).toEqual({ order_id: ORDER_ID, order_number: "1001", attempt: "1" });
    expect(created.providerRef).toBe(order.id);
    expect(created.redirectUrl).toBeUndefined();
    expect(created.redirect).toEqual({
      method: "POST",
      url: "https://razorpay.local/v1/checkout/embedded",
      fields: {
        key_id: server.keyId,
        order_id: order.id,
        amount: "123450",
        currency: "INR",
        name: "Demo Store",
        description: "Order 1001",
        "prefill[email]": "asha@example.test",
        "prefill[contact]": "+919800000001",
        callback_url: input().returnUrl,
        cancel_url: input().returnUrl,
      },
    });
    expect(server.requests).toEqual(["GET /v1/orders", "POST /v1/orders"]);
  });

  it("is idempotent: the same key answers the same Razorpay order, never a second one", async () => {
    const { server, gateway } = setup();
    const first = await gateway.createPayment(input());
    const again = await gateway.createPayment(input());
    expect(again.providerRef).toBe(first.providerRef);
    onlyOrder(server);
    const next = await gateway.createPayment(input(2));
    expect(next.providerRef).not.toBe(first.providerRef);
    expect(server.state.orders.size).toBe(2);
  });

  it("refuses a key reused for another amount", async () => {
    const { gateway } = setup();
    await gateway.createPayment(input());
    const e = await failure(gateway.createPayment(input(1, 999_00)));
    expect(e).toMatchObject({ kind: "bad_request", retryable: false, field: "idempotencyKey" });
  });

  it("passes on Razorpay's validation as a bad_request naming the field", async () => {
    const { gateway } = setup();
    const e = await failure(gateway.createPayment(input(1, 50)));
    expect(e).toMatchObject({ provider: "razorpay", kind: "bad_request", retryable: false, status: 400, code: "BAD_REQUEST_ERROR", field: "amount" });
    expect(e.message).toContain("at least INR 1.00");
  });

  it("refuses, before sending anything, a key longer than Razorpay's 40-character receipt", async () => {
    const { server, gateway } = setup();
    const long = input(1000);
    expect(long.idempotencyKey.length).toBe(41);
    const e = await failure(gateway.createPayment(long));
    expect(e).toMatchObject({ kind: "bad_request", field: "idempotencyKey" });
    expect(server.requests).toEqual([]);
  });

  it("5xx → unavailable and retryable; the retry with the same key makes one order", async () => {
    const { server, gateway } = setup();
    server.fail({ status: 500, match: /^POST \/v1\/orders$/ });
    const e = await failure(gateway.createPayment(input()));
    expect(e).toMatchObject({ kind: "unavailable", retryable: true, status: 500, code: "SERVER_ERROR" });
    server.fail({ status: 502 });
    expect(await failure(gateway.createPayment(input()))).toMatchObject({ kind: "unavailable", retryable: true, code: "GATEWAY_ERROR" });
    await gateway.createPayment(input());
    onlyOrder(server);
  });

  it("429 → rate_limited, retryable, with Retry-After's seconds", async () => {
    const { server, gateway } = setup();
    server.fail({ status: 429, retryAfter: 7 });
    const e = await failure(gateway.createPayment(input()));
    expect(e).toMatchObject({ kind: "rate_limited", retryable: true, status: 429, retryAfterSeconds: 7 });
  });

  it("a slow Razorpay → timeout at the deadline, retryable", async () => {
    const { server, gateway } = setup({ timeoutMs: 50 });
    server.fail({ delayMs: 1_000 });
    const started = Date.now();
    const e = await failure(gateway.createPayment(input()));
    expect(e).toMatchObject({ kind: "timeout", retryable: true });
    expect(Date.now() - started).toBeLessThan(900);
  });

  it("an order Razorpay made after our deadline (the answer lost) is the one the retry gets", async () => {
    const { server, gateway } = setup({ timeoutMs: 50 });
    server.fail({ delayMs: 120, match: /^POST \/v1\/orders$/ });
    expect(await failure(gateway.createPayment(input()))).toMatchObject({ kind: "timeout" });
    await new Promise((r) => setTimeout(r, 200));
    const late = onlyOrder(server);
    expect((await gateway.createPayment(input())).providerRef).toBe(late.id);
    onlyOrder(server);
  });

  it("wrong key secret → auth, not retryable", async () => {
    const { gateway } = setup({ keySecret: "not-the-secret" });
    const e = await failure(gateway.createPayment(input()));
    expect(e).toMatchObject({ kind: "auth", retryable: false, status: 401 });
    expect(e.message).toContain("The api key provided is invalid");
  });

  it("an unreachable Razorpay → unavailable (never a raw error)", async () => {
    const gateway = razorpayGateway({ keyId: "rzp_test_x", keySecret: "s", fetch: () => Promise.reject(new TypeError("connection refused")) });
    const e = await failure(gateway.createPayment(input()));
    expect(e).toMatchObject({ kind: "unavailable", retryable: true });
    expect(e.message).toContain("connection refused");
  });

  it("an answer of another shape → unavailable", async () => {
    const gateway = razorpayGateway({ keyId: "rzp_test_x", keySecret: "s", fetch: () => Promise.resolve(Response.json({ entity: "collection", count: 0, items: "no" })) });
    expect(await failure(gateway.createPayment(input()))).toMatchObject({ kind: "unavailable" });
  });

  it("refuses a bad input before sending anything", async () => {
    const { server, gateway } = setup();
    expect(await failure(gateway.createPayment({ ...input(), idempotencyKey: "other:1" }))).toMatchObject({ kind: "bad_request", field: "idempotencyKey" });
    expect(await failure(gateway.createPayment({ ...input(), amount: 10.5 }))).toMatchObject({ field: "amount" });
    expect(await failure(gateway.createPayment({ ...input(), currency: "inr" }))).toMatchObject({ field: "currency" });
    expect(server.requests).toEqual([]);
  });
});

describe("Razorpay adapter: getPayment (asked before an unpaid order expires)", () => {
  it("created while nobody paid, then the deciding payment's status", async () => {
    const { server, gateway } = setup();
    const { providerRef } = await gateway.createPayment(input());
    expect(await gateway.getPayment(providerRef)).toEqual({ status: "created", amount: 123_450, currency: "INR" });

    await server.pay(providerRef, "failed");
    expect(await gateway.getPayment(providerRef)).toMatchObject({ status: "failed" });

    const { payment } = await server.pay(providerRef, "authorized");
    expect(await gateway.getPayment(providerRef)).toEqual({ status: "authorized", amount: 123_450, currency: "INR", providerPaymentId: payment.id });

    await server.capture(payment.id);
    expect(await gateway.getPayment(providerRef)).toMatchObject({ status: "captured", providerPaymentId: payment.id });

    await gateway.refund(payment.id, 123_450, "refund-key-0001");
    expect(await gateway.getPayment(providerRef)).toMatchObject({ status: "refunded", providerPaymentId: payment.id });
  });

  it("an unknown order → bad_request; a ref that is no order id is refused before sending", async () => {
    const { server, gateway } = setup();
    expect(await failure(gateway.getPayment("order_Unknown000000001"))).toMatchObject({ kind: "bad_request", status: 400 });
    const before = server.requests.length;
    expect(await failure(gateway.getPayment("../v1/payments"))).toMatchObject({ kind: "bad_request", field: "providerRef" });
    expect(server.requests.length).toBe(before);
  });
});

describe("Razorpay adapter: refund", () => {
  async function captured() {
    const s = setup();
    const { providerRef } = await s.gateway.createPayment(input());
    const { payment } = await s.server.pay(providerRef, "captured");
    return { ...s, payment };
  }

  it("refunds, and a retry with the same key makes no second refund", async () => {
    const { server, gateway, payment } = await captured();
    const first = await gateway.refund(payment.id, 50_000, `${ORDER_ID}:refund:1`);
    expect(first).toMatchObject({ status: "processed" });
    expect(first.refundId).toMatch(/^rfnd_/);
    const again = await gateway.refund(payment.id, 50_000, `${ORDER_ID}:refund:1`);
    expect(again.refundId).toBe(first.refundId);
    expect(server.state.refunds.size).toBe(1);
    const second = await gateway.refund(payment.id, 50_000, `${ORDER_ID}:refund:2`);
    expect(second.refundId).not.toBe(first.refundId);
    expect(server.state.payments.get(payment.id)).toMatchObject({ amount_refunded: 100_000, refund_status: "partial" });
  });

  it("more than is left → bad_request naming amount; an unknown payment → bad_request", async () => {
    const { gateway, payment } = await captured();
    expect(await failure(gateway.refund(payment.id, 200_000, "refund-key-0001"))).toMatchObject({ kind: "bad_request", field: "amount" });
    expect(await failure(gateway.refund("pay_Unknown000000001", 100, "refund-key-0002"))).toMatchObject({ kind: "bad_request", status: 400 });
  });

  it("Razorpay's refusal for the merchant's balance → declined", async () => {
    const { server, gateway, payment } = await captured();
    server.fail({
      status: 400,
      error: { code: "BAD_REQUEST_ERROR", description: "Your account does not have enough balance to carry out the refund operation.", source: "business", reason: "insufficient_balance" },
    });
    expect(await failure(gateway.refund(payment.id, 100, "refund-key-0003"))).toMatchObject({ kind: "declined", retryable: false });
  });
});
