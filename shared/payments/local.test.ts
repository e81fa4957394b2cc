import { describe, expect, it } from "vitest";
import { decodeJson, encodeJson } from "../core/crypto";
import { localGateway, parseLocalBehaviour, type LocalBehaviour } from "./local";
import { buildLocalWebhook, deriveLocalSecret, localConfirmationFields, readLocalRef, sendLocalWebhook } from "./local-protocol";
import { createInput, gatewayFailure } from "../../test/fakes/payments";

const ROOT = "dev-root-secret-0123456789";
const STORE = "5f0e4c1a-aaaa-4bbb-8ccc-000000000001";
const OTHER_STORE = "5f0e4c1a-aaaa-4bbb-8ccc-000000000002";
const WORKER = "http://localhost:8789";

async function setup(behaviour: LocalBehaviour = {}, timeoutMs?: number) {
  const secret = await deriveLocalSecret(ROOT, STORE);
  return { secret, gateway: localGateway({ storeId: STORE, secret, behaviour, timeoutMs }) };
}

const input = createInput;
const failure = gatewayFailure;

describe("local gateway: create → hosted page → signed webhook, with no storage", () => {
  it("round trip: the page's token carries the attempt; its webhook verifies with the store's secret", async () => {
    const { secret, gateway } = await setup();
    const created = await gateway.createPayment(input());
    const page = `http://demo.localhost:8788/-gateway/pay/${created.providerRef}`;
    expect(created.redirect).toEqual({ method: "GET", url: page });
    expect(created.redirectUrl).toBe(page);

    expect(await readLocalRef(created.providerRef, secret)).toEqual({
      storeId: STORE,
      orderId: input().orderId,
      orderNumber: "1001",
      attempt: 1,
      amount: 123_450,
      currency: "INR",
      returnUrl: input().returnUrl,
    });

    const webhook = await buildLocalWebhook({ providerRef: created.providerRef, outcome: "captured", secret, workerOrigin: WORKER });
    expect(webhook?.url).toBe(`${WORKER}/webhooks/payments/local/${STORE}`);
    const request = new Request(webhook!.url, { method: "POST", headers: webhook!.headers, body: webhook!.body });
    const event = await gateway.verifyWebhook(await request.text(), request.headers, secret);
    expect(event).toEqual({
      kind: "payment",
      eventId: webhook!.eventId,
      event: "payment.captured",
      providerRef: created.providerRef,
      status: "captured",
      amount: 123_450,
      currency: "INR",
      providerPaymentId: expect.stringMatching(/^lpay_[0-9a-f]{20}$/),
      storeId: STORE,
    });
  });

  it("the same attempt always gets the same ref (idempotent without storage); the next attempt another", async () => {
    const { gateway } = await setup();
    const a = await gateway.createPayment(input());
    const b = await gateway.createPayment(input());
    const c = await gateway.createPayment(input(2));
    expect(b.providerRef).toBe(a.providerRef);
    expect(c.providerRef).not.toBe(a.providerRef);
  });

  it("a ref with a changed amount, another store's ref, or garbage reads as nothing", async () => {
    const { secret, gateway } = await setup();
    const { providerRef } = await gateway.createPayment(input());
    const [version, payload, sig] = providerRef.split(".") as [string, string, string];
    const cheaper = { ...(decodeJson(payload) as Record<string, unknown>), m: 100 };
    expect(await readLocalRef(`${version}.${encodeJson(cheaper)}.${sig}`, secret)).toBeNull();
    expect(await readLocalRef(providerRef, await deriveLocalSecret(ROOT, OTHER_STORE))).toBeNull();
    expect(await readLocalRef("lp1.garbage", secret)).toBeNull();
    expect(await buildLocalWebhook({ providerRef: "lp1.a.b", outcome: "captured", secret, workerOrigin: WORKER })).toBeNull();
  });

  it("a wrong secret (another store's) or a tampered body → null", async () => {
    const { secret, gateway } = await setup();
    const { providerRef } = await gateway.createPayment(input());
    const w = (await buildLocalWebhook({ providerRef, outcome: "captured", secret, workerOrigin: WORKER }))!;
    const headers = new Headers(w.headers);
    expect(await gateway.verifyWebhook(w.body, headers, await deriveLocalSecret(ROOT, OTHER_STORE))).toBeNull();
    expect(await gateway.verifyWebhook(w.body, headers, "wrong")).toBeNull();
    expect(await gateway.verifyWebhook(w.body.replace('"amount":123450', '"amount":100'), headers, secret)).toBeNull();
    expect(await gateway.verifyWebhook(w.body, new Headers({ "x-local-event-id": w.eventId }), secret)).toBeNull();
  });

  it("a duplicate delivery (or a second click on Pay) carries the same event id; Fail is another event", async () => {
    const { secret, gateway } = await setup();
    const { providerRef } = await gateway.createPayment(input());
    const w = (await buildLocalWebhook({ providerRef, outcome: "captured", secret, workerOrigin: WORKER }))!;
    const delivered: string[] = [];
    const statuses = await sendLocalWebhook(w, {
      deliveries: 2,
      delayMs: 5,
      fetch: async (request) => {
        const event = await gateway.verifyWebhook(await request.text(), request.headers, secret);
        delivered.push(event?.eventId ?? "rejected");
        return new Response(null, { status: 204 });
      },
    });
    expect(statuses).toEqual([204, 204]);
    expect(delivered).toEqual([w.eventId, w.eventId]);
    const click2 = await buildLocalWebhook({ providerRef, outcome: "captured", secret, workerOrigin: WORKER });
    expect(click2?.eventId).toBe(w.eventId);
    const failed = await buildLocalWebhook({ providerRef, outcome: "failed", secret, workerOrigin: WORKER });
    expect(failed?.eventId).not.toBe(w.eventId);
    expect(await gateway.verifyWebhook(failed!.body, new Headers(failed!.headers), secret)).toMatchObject({ status: "failed", event: "payment.failed" });
  });

  it("the page's confirmation fields verify, carry the amount and currency, and cannot be turned from failed to captured", async () => {
    const { secret, gateway } = await setup();
    const { providerRef } = await gateway.createPayment(input());
    const fields = (await localConfirmationFields(providerRef, "captured", secret))!;
    expect(await gateway.verifyClientConfirmation(fields, secret)).toEqual({
      providerRef,
      providerPaymentId: fields.local_payment_id,
      status: "captured",
      amount: 123_450,
      currency: "INR",
    });
    expect(await gateway.verifyClientConfirmation(fields, await deriveLocalSecret(ROOT, OTHER_STORE))).toBeNull();
    const failed = (await localConfirmationFields(providerRef, "failed", secret))!;
    expect(await gateway.verifyClientConfirmation({ ...failed, local_status: "captured" }, secret)).toBeNull();
    expect(await gateway.verifyClientConfirmation({ local_ref: providerRef }, secret)).toBeNull();
  });
});

describe("local gateway: failures and delays on demand", () => {
  it("fails the create call for the first attempt only, so the shopper's retry works", async () => {
    const { gateway } = await setup({ failCreate: "unavailable", failCreateUpToAttempt: 1 });
    expect(await failure(gateway.createPayment(input(1)))).toMatchObject({ provider: "local", kind: "unavailable", retryable: true });
    expect((await gateway.createPayment(input(2))).providerRef).toMatch(/^lp1\./);
  });

  it("declines every attempt when told to", async () => {
    const { gateway } = await setup({ failCreate: "declined" });
    expect(await failure(gateway.createPayment(input(3)))).toMatchObject({ kind: "declined", retryable: false });
  });

  it("answers late, and past the deadline fails with timeout", async () => {
    const slow = await setup({ createDelayMs: 30 }, 1_000);
    const started = Date.now();
    await slow.gateway.createPayment(input());
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
    const stuck = await setup({ createDelayMs: 5_000 }, 40);
    expect(await failure(stuck.gateway.createPayment(input()))).toMatchObject({ kind: "timeout", retryable: true });
  });

  it("getPayment reports what it is told (default: nobody paid) and refuses a foreign ref", async () => {
    const plain = await setup();
    const { providerRef } = await plain.gateway.createPayment(input());
    expect(await plain.gateway.getPayment(providerRef)).toEqual({ status: "created", amount: 123_450, currency: "INR" });
    const paid = await setup({ reportStatus: "captured" });
    const w = await buildLocalWebhook({ providerRef, outcome: "captured", secret: paid.secret, workerOrigin: WORKER });
    const event = await paid.gateway.verifyWebhook(w!.body, new Headers(w!.headers), paid.secret);
    expect(await paid.gateway.getPayment(providerRef)).toEqual({ status: "captured", amount: 123_450, currency: "INR", providerPaymentId: event?.kind === "payment" ? event.providerPaymentId : "" });
    const other = localGateway({ storeId: OTHER_STORE, secret: await deriveLocalSecret(ROOT, OTHER_STORE) });
    expect(await failure(other.getPayment(providerRef))).toMatchObject({ kind: "bad_request", field: "providerRef" });
  });

  it("refunds: the same key gives the same refund id; failures on demand", async () => {
    const { gateway } = await setup();
    const pay = `lpay_${"a".repeat(20)}`;
    const first = await gateway.refund(pay, 10_000, "order-1:refund:1");
    expect(first).toMatchObject({ status: "processed" });
    expect((await gateway.refund(pay, 10_000, "order-1:refund:1")).refundId).toBe(first.refundId);
    expect((await gateway.refund(pay, 10_000, "order-1:refund:2")).refundId).not.toBe(first.refundId);
    expect(await failure(gateway.refund("pay_x", 100, "k"))).toMatchObject({ kind: "bad_request", field: "providerPaymentId" });
    const broken = await setup({ failRefund: "unavailable" });
    expect(await failure(broken.gateway.refund(pay, 100, "k"))).toMatchObject({ kind: "unavailable" });
  });

  it("LOCAL_GATEWAY_BEHAVIOUR is checked, naming the wrong key", () => {
    expect(parseLocalBehaviour(undefined)).toEqual({});
    expect(parseLocalBehaviour('{"failCreate":"timeout","webhookDeliveries":2}')).toEqual({ failCreate: "timeout", webhookDeliveries: 2 });
    expect(() => parseLocalBehaviour("{")).toThrow(/not JSON/);
    expect(() => parseLocalBehaviour('{"failCreat":"timeout"}')).toThrow(/failCreat/);
    expect(() => parseLocalBehaviour('{"failCreate":"boom"}')).toThrow(/failCreate/);
  });
});
