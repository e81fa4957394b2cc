import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { expireStoreUnpaid } from "#shared/jobs/unpaid-expiry";
import { applyPaymentStatus, type PaymentTrigger } from "#shared/orders/routines";
import { buildLocalWebhook } from "#shared/payments/local-protocol";
import type { SignedWebhook } from "../../test/fakes/razorpay-sim";
import { providerServices } from "#shared/pipeline/providers";
import { env } from "cloudflare:workers";
import { call } from "../../test/call";
import { testDb } from "../../test/harness";
import { jobContext } from "../../test/jobs";
import { orderShop, placeGatewayOrder, type GatewayOrder } from "../../test/orders";
import { traced } from "../../test/proxy";
import { placeRazorpayOrder, razorpayDeployment, type RazorpayDeployment } from "../../test/razorpay";
import type { ShopStore } from "../../test/storefront";
import worker from "./index";

/**
 * Issue 20 item 5: a report of money held or taken (authorized, captured) for less than its attempt, or
 * in another currency, does not move the order; the attempt is put under review and the merchant gets a
 * task. Through the worker's real webhook route, for the local gateway and for Razorpay (its local
 * server, signed as Razorpay signs), against real Postgres; then every other trigger of the routine.
 */
const db = testDb();
const ORIGIN = "http://worker.test";
const ip = () => `2001:db8:20::${crypto.randomUUID().slice(0, 4)}:${crypto.randomUUID().slice(0, 4)}`;

type Sql = Awaited<ReturnType<typeof orderShop>>["sql"];

async function post(path: string, hook: { headers: Record<string, string>; body: string }, overrides: Record<string, unknown> = {}) {
  const res = await call(worker, `${ORIGIN}${path}`, { method: "POST", headers: { ...hook.headers, "cf-connecting-ip": ip() }, body: hook.body }, overrides);
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

const local = async (s: ShopStore, o: GatewayOrder, outcome: "authorized" | "captured", money: { amount?: number; currency?: string } = {}) =>
  (await buildLocalWebhook({ providerRef: o.providerRef, outcome, secret: o.sg.webhookSecret, workerOrigin: ORIGIN, ...money }))!;
const razorpay = (s: ShopStore, rp: RazorpayDeployment, w: SignedWebhook) => post(`/webhooks/payments/razorpay/${s.id}`, w, rp.env);

/** What the order, its attempt, its tasks and its events say after a report. */
async function state(sql: Sql, orderId: string, attemptId: string) {
  const [order] = await sql("select status, payment_status from shop_order where id = $1", [orderId]);
  const [attempt] = await sql("select status, review_reason, review_report, review_at from payment_attempt where id = $1", [attemptId]);
  const tasks = await sql("select kind, subject_id, status from merchant_task where order_id = $1", [orderId]);
  const events = await sql<{ kind: string }>("select kind from outbox_event where order_id = $1 and kind in ('order.paid', 'payment.review') order by seq", [orderId]);
  return { order, attempt, tasks, events: events.map((e) => e.kind) };
}

describe("payment check: the local gateway's webhooks", () => {
  it("a capture for less than the attempt: not applied, the attempt under review, one task; replays change nothing; a full capture still pays", async () => {
    const { s, sql } = await orderShop(db);
    const o = await placeGatewayOrder(db, s);
    const short = await local(s, o, "captured", { amount: o.total - 1 });
    expect(await post(`/webhooks/payments/local/${s.id}`, short)).toEqual({
      status: 200,
      json: { ok: true, duplicate: false, applied: false, status: "pending", review: "amount_below" },
    });
    const after = await state(sql, o.orderId, o.attemptId);
    expect(after).toMatchObject({
      order: { status: "open", payment_status: "pending" },
      attempt: {
        status: "pending",
        review_reason: "amount_below",
        review_report: { status: "captured", amount: o.total - 1, currency: "INR", paymentId: expect.stringMatching(/^lpay_/), trigger: "webhook" },
      },
      tasks: [{ kind: "payment_review", subject_id: o.attemptId, status: "open" }],
      events: ["payment.review"],
    });
    // The same delivery again, then the same body under another event id: 200, nothing more.
    expect(await post(`/webhooks/payments/local/${s.id}`, short)).toEqual({ status: 200, json: { ok: true, duplicate: true } });
    const replay = { ...short, headers: { ...short.headers, "x-local-event-id": "evt_replayed_under_a_new_id" } };
    expect((await post(`/webhooks/payments/local/${s.id}`, replay)).json).toMatchObject({ duplicate: false, applied: false, review: "amount_below" });
    expect(await state(sql, o.orderId, o.attemptId)).toEqual(after);
    // An authorization for less is held the same way (the attempt stays as it was).
    expect((await post(`/webhooks/payments/local/${s.id}`, await local(s, o, "authorized", { amount: 1 }))).json).toMatchObject({ applied: false, status: "pending", review: "amount_below" });
    // The money that adds up still moves it: the review stays on the attempt for the merchant.
    expect((await post(`/webhooks/payments/local/${s.id}`, await local(s, o, "captured"))).json).toMatchObject({ applied: true, status: "captured" });
    expect(await state(sql, o.orderId, o.attemptId)).toMatchObject({
      order: { payment_status: "paid" },
      attempt: { status: "captured", review_reason: "amount_below" },
      events: ["payment.review", "order.paid"],
    });
  });

  it("a capture in another currency: not applied, under review", async () => {
    const { s, sql } = await orderShop(db);
    const o = await placeGatewayOrder(db, s);
    expect((await post(`/webhooks/payments/local/${s.id}`, await local(s, o, "captured", { currency: "USD" }))).json).toEqual({
      ok: true,
      duplicate: false,
      applied: false,
      status: "pending",
      review: "currency_differs",
    });
    expect(await state(sql, o.orderId, o.attemptId)).toMatchObject({
      order: { payment_status: "pending" },
      attempt: { status: "pending", review_reason: "currency_differs", review_report: { status: "captured", amount: o.total, currency: "USD" } },
      tasks: [{ kind: "payment_review", subject_id: o.attemptId }],
      events: ["payment.review"],
    });
  });

  it("more than the attempt counts (the surplus can be refunded), and a review costs the webhook's two round trips", async () => {
    const { s, sql } = await orderShop(db);
    const more = await placeGatewayOrder(db, s);
    expect((await post(`/webhooks/payments/local/${s.id}`, await local(s, more, "captured", { amount: more.total + 500 }))).json).toMatchObject({ applied: true, status: "captured" });
    expect((await state(sql, more.orderId, more.attemptId)).attempt).toMatchObject({ status: "captured", review_reason: null });
    const o = await placeGatewayOrder(db, s);
    const hook = await local(s, o, "captured", { amount: 100 });
    const { status, trips } = await traced((h) => call(worker, `${ORIGIN}/webhooks/payments/local/${s.id}`, { method: "POST", headers: { ...hook.headers, "cf-connecting-ip": ip(), ...h }, body: hook.body }));
    expect([status, trips.turns, trips.after.turns]).toEqual([200, 2, 0]);
  });
});

describe("payment check: Razorpay's webhooks, from its local server", () => {
  it("a partial payment (authorized, then captured, no order.paid): not applied, under review; the order stays unpaid", async () => {
    const { s, sql } = await orderShop(db);
    const rp = razorpayDeployment();
    const o = await placeRazorpayOrder(db, s, rp);
    const paid = await rp.server.pay(o.providerRef, "captured", { form: o.form, amount: o.total - 100 });
    expect(paid.webhooks.map((w) => w.event)).toEqual(["payment.authorized", "payment.captured"]);
    const answers = [];
    for (const w of paid.webhooks) answers.push((await razorpay(s, rp, w)).json);
    expect(answers).toEqual([
      { ok: true, duplicate: false, applied: false, status: "pending", review: "amount_below" },
      { ok: true, duplicate: false, applied: false, status: "pending", review: "amount_below" },
    ]);
    expect(await state(sql, o.orderId, o.attemptId)).toMatchObject({
      order: { status: "open", payment_status: "pending" },
      attempt: { status: "pending", review_reason: "amount_below", review_report: { status: "authorized", amount: o.total - 100, currency: "INR", paymentId: paid.payment.id } },
      tasks: [{ kind: "payment_review", subject_id: o.attemptId, status: "open" }],
      events: ["payment.review"],
    });
    // Razorpay retries a delivery with its event id: answered 200, nothing changes.
    expect((await razorpay(s, rp, paid.webhooks[1]!)).json).toEqual({ ok: true, duplicate: true });
    // The shopper pays the rest: that payment adds up to nothing either (less than the attempt), and the order stays unpaid.
    const rest = await rp.server.pay(o.providerRef, "captured", { form: o.form });
    for (const w of rest.webhooks) expect((await razorpay(s, rp, w)).status).toBe(200);
    expect((await state(sql, o.orderId, o.attemptId)).order).toMatchObject({ payment_status: "pending" });
  });

  it("a payment in another currency: not applied, under review", async () => {
    const { s, sql } = await orderShop(db);
    const rp = razorpayDeployment();
    const o = await placeRazorpayOrder(db, s, rp);
    const paid = await rp.server.pay(o.providerRef, "captured", { form: o.form, currency: "USD" });
    expect(paid.webhooks.map((w) => w.event)).toEqual(["payment.authorized", "payment.captured", "order.paid"]);
    for (const w of paid.webhooks) expect((await razorpay(s, rp, w)).json).toMatchObject({ applied: false, review: "currency_differs" });
    expect(await state(sql, o.orderId, o.attemptId)).toMatchObject({
      order: { payment_status: "pending" },
      attempt: { status: "pending", review_reason: "currency_differs", review_report: { currency: "USD", amount: o.total } },
      tasks: [{ kind: "payment_review" }],
      events: ["payment.review"],
    });
  });
});

describe("payment check: every trigger of the one routine", () => {
  it("client confirmation, Mark as paid's routine, expiry reconciliation and webhooks all hold a report that does not add up", async () => {
    const triggers: PaymentTrigger[] = ["webhook", "client_confirmation", "mark_paid", "expiry_reconciliation"];
    for (const trigger of triggers) {
      const { s, sql } = await orderShop(db);
      const o = await placeGatewayOrder(db, s);
      const applied = await withStore(db, s.id, (tx) => applyPaymentStatus(tx, o.attemptId, "captured", trigger, { reported: { amount: o.total - 1, currency: "INR" } }));
      expect(applied).toMatchObject({ applied: false, status: "pending", review: "amount_below", order: { paymentStatus: "pending" } });
      expect((await state(sql, o.orderId, o.attemptId)).attempt).toMatchObject({ status: "pending", review_report: { trigger } });
    }
  });

  it("the expiry job asks Razorpay: a short capture pays nothing, the order expires and its attempt is under review", async () => {
    const { s, sql } = await orderShop(db);
    const rp = razorpayDeployment();
    const o = await placeRazorpayOrder(db, s, rp);
    await rp.server.pay(o.providerRef, "captured", { form: o.form, amount: o.total - 100 });
    const services = { ...providerServices(env), gateway: async (id: string) => (id === s.id ? rp.gatewayOf(id) : providerServices(env).gateway(id)) };
    const later = new Date(Date.now() + 8 * 86_400_000); // past any payment window
    const counts = await expireStoreUnpaid(jobContext(db, later, services), s.id);
    expect(counts).toMatchObject({ expired: 1, reconciled: 0 });
    expect(await state(sql, o.orderId, o.attemptId)).toMatchObject({
      order: { status: "expired", payment_status: "pending" },
      attempt: { status: "pending", review_reason: "amount_below", review_report: { status: "captured", trigger: "expiry_reconciliation" } },
      tasks: [{ kind: "payment_review" }],
    });
  });
});
