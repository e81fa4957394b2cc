import { describe, expect, it } from "vitest";
import { hmacSha256Hex } from "../core/crypto";
import { razorpayGateway } from "./razorpay";
import { RAZORPAY_EVENT_STATUS, RAZORPAY_REFUND_EVENTS } from "./razorpay-entities";
import { razorpayServer } from "../../test/fakes/razorpay-server";
import { webhookRequest, type SignedWebhook } from "../../test/fakes/razorpay-sim";
import { createInput } from "../../test/fakes/payments";

const STORE = "9b1f0c3e-5d2a-4c47-8a52-0d6f3e1b7a10";

const OTHER = "0c6e2f1a-8b3d-4e59-9a71-5f2d8c4b6e23";

/** A payment on Checkout for a Razorpay order of STORE (its form's notes, if any, go on the payment, as Checkout does). */
async function paidOrder(outcome: "authorized" | "captured" | "failed" = "captured") {
  const server = razorpayServer();
  const gateway = razorpayGateway({ keyId: server.keyId, keySecret: server.keySecret, baseUrl: "https://razorpay.local", fetch: server.fetch, storeId: STORE });
  const created = await gateway.createPayment(createInput(1, { amount: 49_900 }));
  const form = created.redirect.method === "POST" ? created.redirect.fields : {};
  const paid = await server.pay(created.providerRef, outcome, { form });
  return { server, gateway, providerRef: created.providerRef, ...paid };
}

const headersOf = (w: SignedWebhook) => new Headers(w.headers);

describe("Razorpay webhooks: X-Razorpay-Signature over the raw body, deduped by X-Razorpay-Event-Id", () => {
  it("maps each event we act on to the attempt status it means", async () => {
    const { server, gateway, providerRef, payment, webhooks } = await paidOrder("captured");
    expect(webhooks.map((w) => w.event)).toEqual(["payment.authorized", "payment.captured", "order.paid"]);
    const seen = [];
    for (const w of webhooks) seen.push(await gateway.verifyWebhook(w.body, headersOf(w), server.webhookSecret));
    const common = { kind: "payment", providerRef, amount: 49_900, currency: "INR", providerPaymentId: payment.id, storeId: null };
    expect(seen).toEqual([
      { ...common, eventId: webhooks[0]!.eventId, event: "payment.authorized", status: "authorized" },
      { ...common, eventId: webhooks[1]!.eventId, event: "payment.captured", status: "captured" },
      { ...common, eventId: webhooks[2]!.eventId, event: "order.paid", status: "captured", storeId: STORE },
    ]);
  });

  it("payment.failed → failed; refund.processed and refund.failed → the refund's outcome, amount and id, with its payment's amount", async () => {
    const failed = await paidOrder("failed");
    const [w] = failed.webhooks;
    expect(await failed.gateway.verifyWebhook(w!.body, headersOf(w!), failed.server.webhookSecret)).toMatchObject({ event: "payment.failed", status: "failed", providerRef: failed.providerRef });

    const { server, gateway, providerRef, payment } = await paidOrder("captured");
    const refund = await gateway.refund(payment.id, 10_000, "refund-key-0001");
    const r = await server.refundWebhook(refund.refundId);
    const processed = {
      kind: "refund",
      eventId: r.eventId,
      event: "refund.processed",
      providerRef,
      refundId: refund.refundId,
      status: "processed",
      amount: 10_000,
      currency: "INR",
      providerPaymentId: payment.id,
      payment: { amount: 49_900, currency: "INR" },
      storeId: STORE,
    };
    expect(await gateway.verifyWebhook(r.body, headersOf(r), server.webhookSecret)).toEqual(processed);
    server.holdRefunds();
    const pending = await gateway.refund(payment.id, 5_000, "refund-key-0002");
    expect(pending.status).toBe("pending");
    const f = await server.settleRefund(pending.refundId, "failed");
    expect(await gateway.verifyWebhook(f.body, headersOf(f), server.webhookSecret)).toEqual({
      ...processed,
      eventId: f.eventId,
      event: "refund.failed",
      refundId: pending.refundId,
      status: "failed",
      amount: 5_000,
    });
  });

  it("only a note this server wrote names the store: the Razorpay order's (order.paid) and the refund's, never the payment's own", async () => {
    const { server, gateway } = await paidOrder("captured");
    const created = await gateway.createPayment(createInput(2, { amount: 49_900 }));
    const form = created.redirect.method === "POST" ? created.redirect.fields : {};
    expect(Object.keys(form).filter((k) => k.startsWith("notes["))).toEqual([]);
    // The shopper's browser posts the form: a store_id note it adds goes on the payment, and is not read.
    const forged = await server.pay(created.providerRef, "captured", { form: { ...form, "notes[store_id]": OTHER } });
    const stores = [];
    for (const w of forged.webhooks) stores.push(((await gateway.verifyWebhook(w.body, headersOf(w), server.webhookSecret)) as { storeId: string | null }).storeId);
    expect(forged.payment.notes).toEqual({ store_id: OTHER });
    expect(stores).toEqual([null, null, STORE]);
    // A refund made through the adapter names its store; one made in the dashboard (no notes) names none.
    const refund = await gateway.refund(forged.payment.id, 100, "refund-key-0003");
    const viaApi = await server.refundWebhook(refund.refundId);
    expect(await gateway.verifyWebhook(viaApi.body, headersOf(viaApi), server.webhookSecret)).toMatchObject({ kind: "refund", storeId: STORE });
    const dashboard = server.state.refund(server.state.payments.get(forged.payment.id)!, 100, "normal");
    const viaDashboard = await server.refundWebhook(dashboard.id);
    expect(await gateway.verifyWebhook(viaDashboard.body, headersOf(viaDashboard), server.webhookSecret)).toMatchObject({ kind: "refund", storeId: null });
  });

  it("the mapping tables are exactly the six events", () => {
    expect(RAZORPAY_EVENT_STATUS).toEqual({
      "payment.authorized": "authorized",
      "payment.captured": "captured",
      "payment.failed": "failed",
      "order.paid": "captured",
    });
    expect(RAZORPAY_REFUND_EVENTS).toEqual({ "refund.processed": "processed", "refund.failed": "failed" });
  });

  it("a redelivery carries the same event id (the dedupe key)", async () => {
    const { server, gateway, webhooks } = await paidOrder();
    const w = webhooks[1]!;
    const a = await gateway.verifyWebhook(w.body, headersOf(w), server.webhookSecret);
    const b = await gateway.verifyWebhook(w.body, headersOf(w), server.webhookSecret);
    expect(a?.eventId).toBe(w.eventId);
    expect(b?.eventId).toBe(a?.eventId);
  });

  it("wrong secret, tampered body, missing or altered signature → null", async () => {
    const { server, gateway, webhooks } = await paidOrder();
    const w = webhooks[1]!;
    expect(await gateway.verifyWebhook(w.body, headersOf(w), "another-webhook-secret")).toBeNull();
    expect(await gateway.verifyWebhook(w.body.replace('"amount":49900', '"amount":100'), headersOf(w), server.webhookSecret)).toBeNull();
    expect(await gateway.verifyWebhook(`${w.body} `, headersOf(w), server.webhookSecret)).toBeNull();
    const unsigned = headersOf(w);
    unsigned.delete("x-razorpay-signature");
    expect(await gateway.verifyWebhook(w.body, unsigned, server.webhookSecret)).toBeNull();
    const truncated = headersOf(w);
    truncated.set("x-razorpay-signature", w.headers["x-razorpay-signature"]!.slice(0, -1));
    expect(await gateway.verifyWebhook(w.body, truncated, server.webhookSecret)).toBeNull();
    expect(await gateway.verifyWebhook(w.body, headersOf(w), "")).toBeNull();
  });

  it("a signed event we do not act on is acknowledged and ignored; without an event id the body's digest is the key", async () => {
    const { server, gateway } = await paidOrder();
    const body = JSON.stringify({ entity: "event", account_id: "acc_x", event: "refund.created", contains: [], payload: {}, created_at: 1 });
    const headers = new Headers({ "x-razorpay-signature": await hmacSha256Hex(server.webhookSecret, body) });
    const result = await gateway.verifyWebhook(body, headers, server.webhookSecret);
    expect(result).toMatchObject({ kind: "ignored", event: "refund.created" });
    expect(result?.eventId).toMatch(/^body:[0-9a-f]{40}$/);
    expect((await gateway.verifyWebhook(body, headers, server.webhookSecret))?.eventId).toBe(result?.eventId);
  });

  it("arrives at a route as Razorpay sends it: the raw body read from the request verifies", async () => {
    const { server, gateway, webhooks } = await paidOrder();
    const request = webhookRequest("https://worker.local/webhooks/payments/razorpay/store-1", webhooks[1]!);
    expect(await gateway.verifyWebhook(await request.text(), request.headers, server.webhookSecret)).toMatchObject({ status: "captured" });
  });
});

describe("Razorpay Checkout's confirmation: HMAC-SHA256(key_secret, order_id|payment_id)", () => {
  it("a right signature proves the payment authorized", async () => {
    const { server, gateway, providerRef, payment, confirmation } = await paidOrder("captured");
    expect(await gateway.verifyClientConfirmation(confirmation, server.keySecret)).toEqual({ providerRef, providerPaymentId: payment.id, status: "authorized" });
  });

  it("a wrong secret, another payment's id, a forged signature or missing fields → null", async () => {
    const { server, gateway, confirmation } = await paidOrder("captured");
    expect(await gateway.verifyClientConfirmation(confirmation, "another-secret")).toBeNull();
    expect(await gateway.verifyClientConfirmation({ ...confirmation, razorpay_payment_id: "pay_Other0000000001" }, server.keySecret)).toBeNull();
    expect(await gateway.verifyClientConfirmation({ ...confirmation, razorpay_signature: "0".repeat(64) }, server.keySecret)).toBeNull();
    expect(await gateway.verifyClientConfirmation({ razorpay_order_id: confirmation!.razorpay_order_id }, server.keySecret)).toBeNull();
    expect(await gateway.verifyClientConfirmation("not an object", server.keySecret)).toBeNull();
  });

  it("a failed payment brings no confirmation", async () => {
    const { confirmation } = await paidOrder("failed");
    expect(confirmation).toBeUndefined();
  });
});
