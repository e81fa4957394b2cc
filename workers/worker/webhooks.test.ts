import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { applyPaymentStatus } from "#shared/orders/routines";
import { buildLocalWebhook, type LocalOutcome } from "#shared/payments/local-protocol";
import { call } from "../../test/call";
import { testDb } from "../../test/harness";
import { placeGatewayOrder, type GatewayOrder } from "../../test/orders";
import { makeShop, type ShopStore } from "../../test/storefront";
import worker from "./index";
import { WEBHOOK_POLICY } from "./webhooks";

/** POST /webhooks/payments/<provider>/<storeId> on the real worker, against real Postgres (issue 11 part 7). */
const db = testDb();
const ORIGIN = "http://worker.test";

/** A documentation-range IPv6 address of its own for each call site, so no test shares another's limit. */
const ip = () => `2001:db8::${crypto.randomUUID().slice(0, 4)}:${crypto.randomUUID().slice(0, 4)}`;
async function webhook(shop: ShopStore, o: GatewayOrder, outcome: LocalOutcome, options: { ip?: string; tamper?: boolean } = {}) {
  const hook = (await buildLocalWebhook({ providerRef: o.providerRef, outcome, secret: o.sg.webhookSecret, workerOrigin: ORIGIN }))!;
  const body = options.tamper ? hook.body.replace('"amount":', '"amount":1') : hook.body;
  return call(worker, `${ORIGIN}/webhooks/payments/local/${shop.id}`, {
    method: "POST",
    headers: { ...hook.headers, "cf-connecting-ip": options.ip ?? ip() },
    body,
  });
}
const rows = (s: ShopStore, text: string, values: unknown[] = []) => withStore(db, s.id, (tx) => tx.$client.query(text, values)).then((r) => r.rows);
const paidEvents = async (s: ShopStore, orderId: string) =>
  Number((await rows(s, "select count(*) as n from outbox_event where kind = 'order.paid' and payload->>'orderId' = $1", [orderId]))[0].n);

describe("payment webhooks", () => {
  it("a signed capture applies through the routine; the same delivery again changes nothing", async () => {
    const shop = await makeShop(db);
    const o = await placeGatewayOrder(db, shop);
    const first = await webhook(shop, o, "captured");
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ ok: true, duplicate: false, applied: true, status: "captured" });
    const again = await webhook(shop, o, "captured");
    expect(await again.json()).toMatchObject({ ok: true, duplicate: true });
    expect((await rows(shop, "select payment_status from shop_order where id = $1", [o.orderId]))[0].payment_status).toBe("paid");
    expect(await paidEvents(shop, o.orderId)).toBe(1);
    expect(Number((await rows(shop, "select count(*) as n from webhook_receipt where provider = 'local'"))[0].n)).toBe(2); // fixture's + this one
  });

  it("a bad signature, a tampered body, another store's path or provider: refused with nothing written", async () => {
    const [shop, other] = [await makeShop(db), await makeShop(db)];
    const o = await placeGatewayOrder(db, shop);
    expect((await webhook(shop, o, "captured", { tamper: true })).status).toBe(401);
    const hook = (await buildLocalWebhook({ providerRef: o.providerRef, outcome: "captured", secret: o.sg.webhookSecret, workerOrigin: ORIGIN }))!;
    const send = (path: string) => call(worker, `${ORIGIN}${path}`, { method: "POST", headers: { ...hook.headers, "cf-connecting-ip": ip() }, body: hook.body });
    // Under another store's id the signature does not match that store's secret.
    expect((await send(`/webhooks/payments/local/${other.id}`)).status).toBe(401);
    expect((await send(`/webhooks/payments/razorpay/${shop.id}`)).status).toBe(404);
    expect((await send(`/webhooks/payments/local/not-a-store`)).status).toBe(404);
    expect((await rows(shop, "select status from payment_attempt where id = $1", [o.attemptId]))[0].status).toBe("pending");
    expect(Number((await rows(shop, "select count(*) as n from webhook_receipt"))[0].n)).toBe(1); // the fixture's only
  });

  it("a webhook racing the client's confirmation captures once", async () => {
    const shop = await makeShop(db);
    const o = await placeGatewayOrder(db, shop);
    const [hook] = await Promise.all([
      webhook(shop, o, "captured"),
      withStore(db, shop.id, (tx) => applyPaymentStatus(tx, o.attemptId, "captured", "client_confirmation")),
      webhook(shop, o, "authorized"),
    ]);
    expect(hook.status).toBe(200);
    expect((await rows(shop, "select status from payment_attempt where id = $1", [o.attemptId]))[0].status).toBe("captured");
    expect(await paidEvents(shop, o.orderId)).toBe(1);
  });

  it("a failure webhook marks the attempt failed and the order stays placed", async () => {
    const shop = await makeShop(db);
    const o = await placeGatewayOrder(db, shop);
    expect(await (await webhook(shop, o, "failed")).json()).toMatchObject({ applied: true, status: "failed" });
    expect((await rows(shop, "select status, payment_status from shop_order where id = $1", [o.orderId]))[0]).toEqual({ status: "open", payment_status: "unpaid" });
  });

  it(`an unsigned flood from one address: 429 with Retry-After after ${WEBHOOK_POLICY.limit} a minute, before anything is read`, async () => {
    const shop = await makeShop(db);
    const from = ip();
    const junk = () => call(worker, `${ORIGIN}/webhooks/payments/local/${shop.id}`, { method: "POST", headers: { "cf-connecting-ip": from }, body: "x" });
    const statuses = await Promise.all(Array.from({ length: WEBHOOK_POLICY.limit + 5 }, junk));
    expect(statuses.filter((r) => r.status === 401)).toHaveLength(WEBHOOK_POLICY.limit);
    const refused = statuses.filter((r) => r.status === 429);
    expect(refused).toHaveLength(5);
    expect(Number(refused[0]!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    // With the database out of reach, a refused call still answers 429: it never got that far. (Only the
    // URL changes: the driver's proxy setting is one per isolate, and this file's queue consumers share it.)
    const cut = await call(worker, `${ORIGIN}/webhooks/payments/local/${shop.id}`, { method: "POST", headers: { "cf-connecting-ip": from }, body: "x" }, {
      DATABASE_URL: "postgres://x:y@127.0.0.1:19/none",
    });
    expect(cut.status).toBe(429);
  });
});
