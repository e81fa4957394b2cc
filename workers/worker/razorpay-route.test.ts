import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { SignedWebhook } from "../../test/fakes/razorpay-sim";
import { providerServices } from "#shared/pipeline/providers";
import { call } from "../../test/call";
import { testDb } from "../../test/harness";
import { orderShop } from "../../test/orders";
import { callerFor } from "../../test/procedures";
import { placeRazorpayOrder, razorpayDeployment, type RazorpayDeployment } from "../../test/razorpay";
import type { ShopStore } from "../../test/storefront";
import worker from "./index";

/**
 * Issue 20 item 10: Razorpay's webhooks end to end, through the worker's real route
 * `/webhooks/payments/razorpay/<storeId>` (the deployment configured for Razorpay), signed as Razorpay
 * signs them (X-Razorpay-Signature: HMAC-SHA256 of the raw body with the webhook secret) by the local
 * Razorpay-speaking server, against real Postgres: payments, refund.processed and refund.failed, and
 * the store_id note that decides which store's address applies an event.
 */
const db = testDb();
const ORIGIN = "http://worker.test";
const ip = () => `2001:db8:21::${crypto.randomUUID().slice(0, 4)}:${crypto.randomUUID().slice(0, 4)}`;

type Sql = Awaited<ReturnType<typeof orderShop>>["sql"];

async function send(storeId: string, rp: RazorpayDeployment, w: Pick<SignedWebhook, "headers" | "body">) {
  const res = await call(worker, `${ORIGIN}/webhooks/payments/razorpay/${storeId}`, { method: "POST", headers: { ...w.headers, "cf-connecting-ip": ip() }, body: w.body }, rp.env);
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

/** A shop with a Razorpay order whose payment was captured and delivered to the route (so the attempt knows its payment id). */
async function paidShop() {
  const { s, sql } = await orderShop(db);
  const rp = razorpayDeployment();
  const o = await placeRazorpayOrder(db, s, rp);
  const paid = await rp.server.pay(o.providerRef, "captured", { form: o.form });
  for (const w of paid.webhooks) expect((await send(s.id, rp, w)).status).toBe(200);
  const member = callerFor(db, s.ownerUserId, s.id, { ...providerServices(env), gateway: rp.gatewayOf });
  return { s, sql, rp, o, paid, member };
}

const refundRows = (sql: Sql, orderId: string) =>
  sql("select status, amount::int, reason, provider_refund_id, last_error from refund where order_id = $1 order by created_at, id", [orderId]);
const kinds = async (sql: Sql, orderId: string, like: string) =>
  (await sql<{ kind: string }>("select kind from outbox_event where order_id = $1 and kind like $2 order by seq", [orderId, like])).map((e) => e.kind);

describe("Razorpay payment webhooks through the worker's route", () => {
  it("a payment's events apply in order through the routine; every retry is answered 200 and changes nothing", async () => {
    const { s, sql } = await orderShop(db);
    const rp = razorpayDeployment();
    const o = await placeRazorpayOrder(db, s, rp);
    expect(Object.keys(o.form).filter((k) => k.startsWith("notes["))).toEqual([]); // the shopper's browser posts the form
    const paid = await rp.server.pay(o.providerRef, "captured", { form: o.form });
    expect(paid.webhooks.map((w) => w.event)).toEqual(["payment.authorized", "payment.captured", "order.paid"]);
    const answers = [];
    for (const w of paid.webhooks) answers.push(await send(s.id, rp, w));
    expect(answers).toEqual([
      { status: 200, json: { ok: true, duplicate: false, applied: true, status: "authorized" } },
      { status: 200, json: { ok: true, duplicate: false, applied: true, status: "captured" } },
      { status: 200, json: { ok: true, duplicate: false, applied: false, status: "captured" } },
    ]);
    expect(await sql("select status, provider_payment_id, review_reason from payment_attempt where id = $1", [o.attemptId])).toEqual([
      { status: "captured", provider_payment_id: paid.payment.id, review_reason: null },
    ]);
    expect(await sql("select payment_status from shop_order where id = $1", [o.orderId])).toEqual([{ payment_status: "paid" }]);
    for (const w of paid.webhooks) expect(await send(s.id, rp, w)).toEqual({ status: 200, json: { ok: true, duplicate: true } });
    expect(await kinds(sql, o.orderId, "order.paid")).toEqual(["order.paid"]);
    expect(await sql("select count(*)::int as n from webhook_receipt where provider = 'razorpay'")).toEqual([{ n: 3 }]);
  });

  it("a body not signed with the webhook secret is refused with nothing written", async () => {
    const { s, sql } = await orderShop(db);
    const rp = razorpayDeployment();
    const o = await placeRazorpayOrder(db, s, rp);
    const [authorized] = (await rp.server.pay(o.providerRef, "authorized", { form: o.form })).webhooks;
    const tampered = { ...authorized!, body: authorized!.body.replace('"status":"authorized"', '"status":"captured"') };
    expect((await send(s.id, rp, tampered)).status).toBe(401);
    const unsigned = { ...authorized!, headers: { "content-type": "application/json", "x-razorpay-event-id": authorized!.eventId } };
    expect((await send(s.id, rp, unsigned)).status).toBe(401);
    expect((await send(s.id, { ...rp, env: { ...rp.env, RAZORPAY_WEBHOOK_SECRET: "another-webhook-secret-0001" } }, authorized!)).status).toBe(401);
    expect(await sql("select status from payment_attempt where id = $1", [o.attemptId])).toEqual([{ status: "pending" }]);
    expect(await sql("select count(*)::int as n from webhook_receipt where provider = 'razorpay'")).toEqual([{ n: 0 }]);
  });

  it("an event is applied only at its own store's address (its order's note, else its attempt); others answer 200 and write nothing", async () => {
    const { s, sql } = await orderShop(db);
    const { s: other, sql: otherSql } = await orderShop(db);
    const rp = razorpayDeployment();
    const o = await placeRazorpayOrder(db, s, rp);
    const paid = await rp.server.pay(o.providerRef, "captured", { form: o.form });
    // One Razorpay account sends every store's events to every store's webhook address.
    for (const w of paid.webhooks) {
      expect(await send(other.id, rp, w)).toEqual({ status: 200, json: { ok: true, ignored: expect.stringContaining("another store") } });
    }
    expect(await sql("select status from payment_attempt where id = $1", [o.attemptId])).toEqual([{ status: "pending" }]);
    for (const q of [sql, otherSql]) expect(await q("select count(*)::int as n from webhook_receipt where provider = 'razorpay'")).toEqual([{ n: 0 }]);
    // At its own store's address the same events apply: payment.* by the attempt that holds the reference,
    // order.paid by the Razorpay order's own note.
    const answers = [];
    for (const w of paid.webhooks) answers.push((await send(s.id, rp, w)).json);
    expect(answers).toEqual([
      { ok: true, duplicate: false, applied: true, status: "authorized" },
      { ok: true, duplicate: false, applied: true, status: "captured" },
      { ok: true, duplicate: false, applied: false, status: "captured" },
    ]);
    expect(await sql("select payment_status from shop_order where id = $1", [o.orderId])).toEqual([{ payment_status: "paid" }]);
  });

  it("a payment without a store note (begun before notes were ignored) is applied at its store by its payment events", async () => {
    const { s, sql } = await orderShop(db);
    const rp = razorpayDeployment();
    const o = await placeRazorpayOrder(db, s, rp);
    const authorized = await rp.server.pay(o.providerRef, "authorized");
    expect(authorized.webhooks.map((w) => w.event)).toEqual(["payment.authorized"]);
    expect(await send(s.id, rp, authorized.webhooks[0]!)).toEqual({ status: 200, json: { ok: true, duplicate: false, applied: true, status: "authorized" } });
    const [captured] = await rp.server.capture(authorized.payment.id);
    expect(captured!.event).toBe("payment.captured");
    expect(await send(s.id, rp, captured!)).toEqual({ status: 200, json: { ok: true, duplicate: false, applied: true, status: "captured" } });
    expect(await sql("select status, provider_payment_id from payment_attempt where id = $1", [o.attemptId])).toEqual([{ status: "captured", provider_payment_id: authorized.payment.id }]);
    expect(await sql("select payment_status from shop_order where id = $1", [o.orderId])).toEqual([{ payment_status: "paid" }]);
  });

  it("a store_id note the shopper forged on Checkout's form neither skips the real store nor applies at the store it names", async () => {
    const { s, sql } = await orderShop(db);
    const { s: named, sql: namedSql } = await orderShop(db);
    const rp = razorpayDeployment();
    const o = await placeRazorpayOrder(db, s, rp);
    const forged = await rp.server.pay(o.providerRef, "authorized", { form: { ...o.form, "notes[store_id]": named.id } });
    const [w] = forged.webhooks;
    expect(JSON.parse(w!.body)).toMatchObject({ payload: { payment: { entity: { notes: { store_id: named.id } } } } });
    // At the store it names: no attempt there holds the reference, so nothing is applied or kept (and no 404 for Razorpay to retry).
    expect(await send(named.id, rp, w!)).toEqual({ status: 200, json: { ok: true, ignored: expect.stringContaining("another store") } });
    expect(await namedSql("select count(*)::int as n from webhook_receipt where provider = 'razorpay'")).toEqual([{ n: 0 }]);
    // At the real store's address: applied.
    expect(await send(s.id, rp, w!)).toEqual({ status: 200, json: { ok: true, duplicate: false, applied: true, status: "authorized" } });
    expect(await sql("select status from payment_attempt where id = $1", [o.attemptId])).toEqual([{ status: "authorized" }]);
  });
});

describe("Razorpay refund webhooks through the worker's route", () => {
  it("refund.processed settles the refund Razorpay answered pending; the order follows its refund rows", async () => {
    const { s, sql, rp, o, member } = await paidShop();
    rp.server.holdRefunds();
    const out = (await member("orders.refund", { orderId: o.orderId, amount: 300 })) as { refunds: { status: string }[] };
    expect(out.refunds).toMatchObject([{ status: "pending" }]);
    const [row] = await refundRows(sql, o.orderId);
    expect(row).toMatchObject({ status: "pending", amount: 300, provider_refund_id: expect.stringMatching(/^rfnd_/) });
    const settled = await rp.server.settleRefund(String(row!["provider_refund_id"]), "processed");
    expect(settled.event).toBe("refund.processed");
    expect(await send(s.id, rp, settled)).toEqual({ status: 200, json: { ok: true, duplicate: false, applied: true, status: "refunded" } });
    expect(await refundRows(sql, o.orderId)).toMatchObject([{ status: "processed", amount: 300 }]);
    expect(await sql("select payment_status from shop_order where id = $1", [o.orderId])).toEqual([{ payment_status: "partially_refunded" }]);
    expect(await send(s.id, rp, settled)).toEqual({ status: 200, json: { ok: true, duplicate: true } });
    expect(await kinds(sql, o.orderId, "order.refunded")).toEqual(["order.refunded"]);
  });

  it("refund.failed fails the pending refund and gives the merchant a task, once; the order stays paid", async () => {
    const { s, sql, rp, o, member } = await paidShop();
    rp.server.holdRefunds();
    await member("orders.refund", { orderId: o.orderId });
    const [row] = await sql<{ id: string; provider_refund_id: string }>("select id, provider_refund_id from refund where order_id = $1", [o.orderId]);
    const failed = await rp.server.settleRefund(row!.provider_refund_id, "failed");
    expect(failed.event).toBe("refund.failed");
    expect(await send(s.id, rp, failed)).toEqual({ status: 200, json: { ok: true, duplicate: false, applied: true, status: "refund_failed" } });
    expect(await refundRows(sql, o.orderId)).toEqual([
      { status: "failed", amount: o.total, reason: null, provider_refund_id: row!.provider_refund_id, last_error: "The gateway reported the refund failed." },
    ]);
    expect(await sql("select kind, subject_id, status from merchant_task where order_id = $1", [o.orderId])).toEqual([{ kind: "refund_failed", subject_id: row!.id, status: "open" }]);
    expect(await kinds(sql, o.orderId, "refund.%")).toEqual(["refund.failed"]);
    expect(await sql("select payment_status from shop_order where id = $1", [o.orderId])).toEqual([{ payment_status: "paid" }]);
    // Retried, and the same body under another event id: 200, nothing more.
    expect(await send(s.id, rp, failed)).toEqual({ status: 200, json: { ok: true, duplicate: true } });
    expect((await send(s.id, rp, { ...failed, headers: { ...failed.headers, "x-razorpay-event-id": "evt_AnotherIdOfTheSameEvent" } })).json).toMatchObject({ applied: false });
    expect(await sql("select count(*)::int as n from merchant_task where order_id = $1", [o.orderId])).toEqual([{ n: 1 }]);
    expect(await kinds(sql, o.orderId, "refund.%")).toEqual(["refund.failed"]);
    // The money stayed with the merchant: the refund can be made again.
    rp.server.state.refundsPending = false;
    expect(((await member("orders.refund", { orderId: o.orderId })) as { refunds: { status: string }[] }).refunds).toMatchObject([{ status: "processed" }]);
    expect(await sql("select payment_status from shop_order where id = $1", [o.orderId])).toEqual([{ payment_status: "refunded" }]);
  });

  it("a refund made in Razorpay's dashboard that failed is recorded failed, with its task", async () => {
    const { s, sql, rp, o, paid } = await paidShop();
    const { s: other } = await orderShop(db);
    rp.server.holdRefunds();
    // Made in the dashboard: the refund carries no store note, and the payment none either.
    const refund = rp.server.state.refund(rp.server.state.payments.get(paid.payment.id)!, 200, "normal");
    const failed = await rp.server.settleRefund(refund.id, "failed");
    expect(JSON.parse(failed.body)).toMatchObject({ payload: { refund: { entity: { notes: [] } }, payment: { entity: { notes: [] } } } });
    expect(await send(other.id, rp, failed)).toEqual({ status: 200, json: { ok: true, ignored: expect.stringContaining("another store") } });
    expect((await send(s.id, rp, failed)).json).toMatchObject({ applied: true, status: "refund_failed" });
    expect(await refundRows(sql, o.orderId)).toMatchObject([{ status: "failed", amount: 200, reason: "Refunded at the gateway", provider_refund_id: refund.id }]);
    expect(await sql("select kind from merchant_task where order_id = $1", [o.orderId])).toEqual([{ kind: "refund_failed" }]);
    expect(await sql("select payment_status from shop_order where id = $1", [o.orderId])).toEqual([{ payment_status: "paid" }]);
  });
});
