import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "#shared/core/tokens";
import { withStore } from "#shared/db/with-store";
import { createLogger } from "#shared/core/log";
import { emailLinkSecretFromEnv } from "#shared/mail/links";
import { localMailer } from "#shared/mail/local";
import { sendNotification } from "#shared/notifications/send";
import { deriveLocalSecret, localConfirmationFields, readLocalRef } from "#shared/payments/local-protocol";
import { call } from "../../test/call";
import { testDb } from "../../test/harness";
import { TEST_GATEWAY } from "../../test/orders";
import { callerFor } from "../../test/procedures";
import { makeShop, Shopper, type ShopStore } from "../../test/storefront";
import { edgeCacheKey } from "./edge-cache";
import worker from "./index";

/**
 * The buyer's own order link `/orders/<id>?k=<key>` (docs/decisions/0009-order-access-key.md) through the
 * real storefront Worker against real Postgres: in a fresh browser, after a new cart, on a replay, and
 * every wrong or malformed key answered exactly like an unknown order.
 */
const db = testDb();

const ORDER = { email: "asha@example.test", paymentMethod: "gateway", shippingAddress: { name: "Asha Rao", line1: "12 MG Road", city: "Pune", state: "IN-MH", postalCode: "411001", country: "IN" } };
const sql = (s: ShopStore, text: string, values: unknown[] = []) => withStore(db, s.id, (tx) => tx.$client.query(text, values)).then((r) => r.rows);

/** A page as a browser with no cookies at all gets it (or with the given cart cookie). */
async function open(host: string, path: string, cookie?: string) {
  const res = await call(worker, `http://storefront.test${path}`, { headers: { host, ...(cookie ? { cookie: `wc_cart=${cookie}` } : {}) }, redirect: "manual" });
  return { status: res.status, headers: res.headers, html: await res.text() };
}

interface Placed {
  buyer: Shopper;
  id: string;
  orderUrl: string;
  key: string;
  redirectUrl: string;
}

/** A shopper who adds the fixture product and checks out through `POST /api/checkout`. */
async function placeOrder(s: ShopStore, overrides: Record<string, unknown> = {}): Promise<Placed> {
  const buyer = new Shopper(s.hostname);
  await buyer.add(s.variantId, 1);
  const res = await buyer.send("POST", "/api/checkout", { ...ORDER, ...overrides });
  expect(res.status).toBe(201);
  const body = res.body as { order: { id: string }; orderUrl: string; payment: { redirectUrl?: string } };
  const key = new URL(body.orderUrl, "http://x").searchParams.get("k")!;
  return { buyer, id: body.order.id, orderUrl: body.orderUrl, key, redirectUrl: body.payment.redirectUrl ?? "" };
}

async function shop(): Promise<ShopStore> {
  const s = await makeShop(db);
  await sql(s, "update location set state = 'IN-MH'");
  return s;
}

const expectPrivate = (headers: Headers) => {
  expect(headers.get("cache-control")).toBe("private, no-store");
  expect(headers.get("referrer-policy")).toBe("no-referrer");
};

describe("the order's link", () => {
  it("the checkout answers it; it opens the order in a fresh browser and after the shopper starts a new cart", async () => {
    const s = await shop();
    const { buyer, id, orderUrl, key, redirectUrl } = await placeOrder(s);
    expect(orderUrl).toMatch(new RegExp(`^/orders/${id}\\?k=[A-Za-z0-9_-]{43}$`));
    // Only the key's SHA-256 is stored, on the order; the plain key nowhere in its row.
    const [row] = await sql(s, "select access_key_hash, row_to_json(o)::text as all from shop_order o where id = $1", [id]);
    expect(row.access_key_hash).toBe(await sha256Hex(key));
    expect(row.all).not.toContain(key);
    // The gateway brings the shopper back to a return URL that carries the key.
    const ref = decodeURIComponent(redirectUrl.split("/-gateway/pay/")[1]!);
    const read = await readLocalRef(ref, await deriveLocalSecret(TEST_GATEWAY.rootSecret, s.id));
    expect(read!.returnUrl).toBe(`http://${s.hostname}/api/checkout/${id}/confirm?k=${key}`);

    const fresh = await open(s.hostname, orderUrl);
    expect(fresh.status).toBe(200);
    expect(fresh.html).toContain("Order #1002");
    expect(fresh.html).toMatch(/<dd data-status="order" data-value="open">placed<\/dd>/);
    expectPrivate(fresh.headers);
    // Never from the edge cache: the gate bypasses it for every path under /orders, with a key or without.
    expect(fresh.headers.get("server-timing")).toContain('edge;desc="bypass"');
    const facts = { id: s.id, name: "x", currency: "INR", passwordCookieHash: null, version: 1 };
    expect(edgeCacheKey(new Request(`http://${s.hostname}${orderUrl}`), facts, s.hostname)).toBeNull();

    // The shopper shops on: a new cart, a new cookie. The old cookie's page is gone, the link is not.
    const oldCookie = buyer.cookie;
    expect((await buyer.add(s.variantId, 1)).status).toBe(200);
    expect(buyer.cookie).not.toBe(oldCookie);
    expect((await open(s.hostname, `/orders/${id}`, buyer.cookie)).status).toBe(404);
    expect((await open(s.hostname, orderUrl, buyer.cookie)).status).toBe(200);
    // The converted cart's cookie still opens the bare page, as before, and hands on the link.
    const byCookie = await open(s.hostname, `/orders/${id}`, oldCookie);
    expect(byCookie.status).toBe(200);
    expect(byCookie.html).toContain(`href="${orderUrl}"`);
  });

  it("shows what happens to the order in words, fresh on every request (never a kept copy)", async () => {
    const s = await shop();
    const { id, orderUrl } = await placeOrder(s);
    const statuses = async () => [...(await open(s.hostname, orderUrl)).html.matchAll(/<dd data-status="(\w+)" data-value="\w+">([^<]+)<\/dd>/g)].map((m) => `${m[1]}: ${m[2]}`);
    expect(await statuses()).toEqual(["order: placed", "payment: waiting for payment", "fulfillment: not shipped yet"]);
    await sql(s, "update shop_order set payment_status = 'paid' where id = $1", [id]);
    expect(await statuses()).toEqual(["order: placed", "payment: paid", "fulfillment: not shipped yet"]);
    await sql(s, "update shop_order set fulfillment_status = 'fulfilled' where id = $1", [id]);
    expect((await statuses())[2]).toBe("fulfillment: shipped");
    await sql(s, "update shop_order set fulfillment_status = 'delivered', status = 'completed' where id = $1", [id]);
    expect(await statuses()).toEqual(["order: completed", "payment: paid", "fulfillment: delivered"]);
  });

  it("a replayed submit answers the same link; an order placed before keys gets its key on the replay", async () => {
    const s = await shop();
    const buyer = new Shopper(s.hostname);
    await buyer.add(s.variantId, 1);
    const answers = await Promise.all(Array.from({ length: 5 }, () => buyer.send("POST", "/api/checkout", ORDER)));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 201]);
    const urls = new Set(answers.map((a) => a.body["orderUrl"]));
    expect(urls.size).toBe(1);
    const [orderUrl] = [...urls] as string[];
    // The answer's fields: the ones it always had, and the link.
    expect(Object.keys(answers[0]!.body).sort()).toEqual(["order", "orderUrl", "payment", "replayed"]);

    await sql(s, "update shop_order set access_key_hash = null");
    expect((await open(s.hostname, orderUrl!)).status).toBe(404);
    const again = await buyer.send("POST", "/api/checkout", ORDER);
    expect([again.status, again.body["orderUrl"]]).toEqual([200, orderUrl]);
    expect((await open(s.hostname, orderUrl!)).status).toBe(200);
  });

  it("a wrong key, another order's key, another store's host: the store's 404, exactly as an unknown order", async () => {
    const s = await shop();
    const [a, b] = [await placeOrder(s), await placeOrder(s)];
    const other = await shop();
    const unknown = await open(s.hostname, `/orders/${crypto.randomUUID()}`);
    expect(unknown.status).toBe(404);
    const flipped = `${a.key.slice(0, -1)}${a.key.endsWith("A") ? "B" : "A"}`;
    const tries: [string, string][] = [
      [s.hostname, `/orders/${a.id}?k=${b.key}`],
      [s.hostname, `/orders/${a.id}?k=${flipped}`],
      [s.hostname, `/orders/${crypto.randomUUID()}?k=${a.key}`],
      [s.hostname, `/orders/${a.id}`],
      [other.hostname, a.orderUrl],
    ];
    for (const [host, path] of tries) {
      const res = await open(host, path);
      expect(res.status, path).toBe(404);
      expectPrivate(res.headers);
      if (host === s.hostname) expect(res.html, path).toBe(unknown.html);
      expect(res.html).not.toContain("data-status");
    }
  });

  it("huge or malformed keys and ids: the 404 page, never a 5xx", async () => {
    const s = await shop();
    const { buyer, id, key } = await placeOrder(s);
    const ks = ["", "%", "%ff", "%E2%80%AE", key.toLowerCase(), `${key}=`, ` ${key}`, "!".repeat(43), "é".repeat(43), "x".repeat(20_000), `${"A".repeat(42)}%`];
    const paths = [
      ...ks.map((k) => `/orders/${id}?k=${k}`),
      `/orders/${id}?k[]=${key}`,
      `/orders/${id}?k=wrong&k=${key}`,
      `/orders/------------------------------------?k=${key}`,
      `/orders/${id.toUpperCase()}x?k=${key}`,
      `/orders/${"f".repeat(5000)}?k=${key}`,
      `/orders/%00?k=${key}`,
    ];
    for (const path of paths) expect((await open(s.hostname, path)).status, path.slice(0, 80)).toBe(404);
    // An id of the old check's shape that is no UUID, with the buyer's cookie (a 500 before).
    expect((await open(s.hostname, "/orders/------------------------------------", buyer.cookie)).status).toBe(404);
    for (const k of ["%ff", "x".repeat(20_000), "", key.toLowerCase()]) {
      const res = await new Shopper(s.hostname).send("POST", `/api/checkout/${id}/pay?k=${k}`, {}, { "sec-fetch-site": "same-origin" });
      expect([res.status, res.body.json?.data?.["reason"]], k.slice(0, 20)).toEqual([404, "unknown_order"]);
    }
    // A key holding a NUL is refused at the door before anything is looked up (decision 0023): the same
    // 400 naming k for any order, so it tells nothing about this one.
    for (const k of ["%00", `${key}%00`]) {
      expect((await open(s.hostname, `/orders/${id}?k=${k}`)).status).toBe(400);
      const res = await new Shopper(s.hostname).send("POST", `/api/checkout/${id}/pay?k=${k}`, {}, { "sec-fetch-site": "same-origin" });
      expect([res.status, (res.body.json?.data?.["issues"] as { path: string }[])[0]?.path]).toEqual([400, "k"]);
    }
  });
});

describe("paying and confirming by the link", () => {
  const down = { LOCAL_GATEWAY_BEHAVIOUR: JSON.stringify({ failCreate: "unavailable", failCreateUpToAttempt: 1 }) };
  const attempts = async (s: ShopStore, id: string) => Number((await sql(s, "select count(*) as n from payment_attempt where order_id = $1", [id]))[0].n);

  it("/pay with the key works in a browser without the cookie; a wrong key or none is refused and makes no attempt", async () => {
    const s = await shop();
    const buyer = new Shopper(s.hostname);
    await buyer.add(s.variantId, 1);
    const placed = await buyer.send("POST", "/api/checkout", ORDER, {}, down);
    const { order, orderUrl } = placed.body as { order: { id: string }; orderUrl: string };
    const key = new URL(orderUrl, "http://x").searchParams.get("k")!;
    const stranger = new Shopper(s.hostname);
    for (const path of [`/api/checkout/${order.id}/pay`, `/api/checkout/${order.id}/pay?k=${key.slice(1)}x`]) {
      const refused = await stranger.send("POST", path, {}, {}, down);
      expect([refused.status, refused.body.json?.data?.["reason"]], path).toEqual([404, "unknown_order"]);
      expectPrivate(refused.headers);
    }
    expect(await attempts(s, order.id)).toBe(1);
    // The order page opened by the link offers "Pay now" with the key; the form goes on to the gateway's page.
    const page = await open(s.hostname, orderUrl);
    expect(page.html).toContain(`action="/api/checkout/${order.id}/pay?k=${key}"`);
    const paid = await stranger.form(`/api/checkout/${order.id}/pay?k=${key}`, {});
    expect(paid.status).toBe(303);
    expectPrivate(paid.headers);
    const ref = decodeURIComponent(paid.headers.get("location")!.split("/-gateway/pay/")[1]!);
    const read = await readLocalRef(ref, await deriveLocalSecret(TEST_GATEWAY.rootSecret, s.id));
    expect([read!.attempt, read!.returnUrl]).toEqual([2, `http://${s.hostname}/api/checkout/${order.id}/confirm?k=${key}`]);
    const json = await stranger.send("POST", `/api/checkout/${order.id}/pay?k=${key}`, {});
    expect(json.status).toBe(201);
    expect(json.body).toMatchObject({ orderUrl, payment: { attempt: 3, status: "pending" } });
    expect(stranger.cookie).toBeUndefined();
  });

  it("/confirm with the key lands on the link in a fresh browser; a wrong key is refused and changes nothing", async () => {
    const s = await shop();
    const { id, orderUrl, key, redirectUrl } = await placeOrder(s);
    const ref = decodeURIComponent(redirectUrl.split("/-gateway/pay/")[1]!);
    const fields = (await localConfirmationFields(ref, "captured", await deriveLocalSecret(TEST_GATEWAY.rootSecret, s.id)))!;
    const back = (query: string) => new Shopper(s.hostname).form(`/api/checkout/${id}/confirm${query}`, fields, { "sec-fetch-site": "cross-site" });
    const paymentStatus = async () => (await sql(s, "select payment_status from shop_order where id = $1", [id]))[0].payment_status;
    for (const query of [`?k=${key.slice(1)}x`, "?k=", "?k=%ff"]) {
      const refused = await back(query);
      expect([refused.status, refused.body.json?.data?.["reason"]], query).toEqual([404, "unknown_order"]);
    }
    expect(await paymentStatus()).toBe("pending");
    const confirmed = await back(`?k=${key}`);
    expect([confirmed.status, confirmed.headers.get("location")]).toEqual([303, orderUrl]);
    expectPrivate(confirmed.headers);
    expect(await paymentStatus()).toBe("paid");
    expect((await open(s.hostname, orderUrl)).html).toMatch(/<dd data-status="payment" data-value="paid">paid<\/dd>/);
    // Without a key the signature alone still confirms, as before: back to the bare page.
    const bare = await back("");
    expect([bare.status, bare.headers.get("location")]).toEqual([303, `/orders/${id}`]);
  });
});

describe("the order page after payment", () => {
  it("shows the parcel shipped with its courier, tracking number and link, and never a cancelled label", async () => {
    const s = await shop();
    const placed = await placeOrder(s);
    const call_ = callerFor(db, s.ownerUserId, s.id);
    await call_("orders.setStatus", { orderId: placed.id, action: "mark_paid" });
    const [parcel] = await sql(s, "select id from fulfillment_order where order_id = $1", [placed.id]);
    await call_("orders.fulfill", { orderId: placed.id, parcelId: parcel.id, tracking: { awb: "BD-778899", courierName: "Blue Dart", trackingUrl: "https://track.example/BD-778899" } });
    const page = await open(s.hostname, placed.orderUrl);
    expect(page.status).toBe(200);
    expect(page.html).toContain('data-value="fulfilled"');
    expect(page.html).toMatch(/Blue Dart, tracking number <strong>BD-778899<\/strong>: handed to the courier/);
    expect(page.html).toContain('href="https://track.example/BD-778899"');
  });

  it("the link in a notification email opens the order too; the same key on another order or store does not", async () => {
    const s = await shop();
    const placed = await placeOrder(s);
    const linkSecret = emailLinkSecretFromEnv(env as unknown as Record<string, unknown>);
    const [event] = (await sql(s, "select id, created_at from outbox_event where kind = 'order.placed' and payload->>'orderId' = $1", [placed.id])) as { id: string; created_at: Date }[];
    const message = { eventId: event!.id, storeId: s.id, kind: "order.placed", payload: { orderId: placed.id }, createdAt: event!.created_at.toISOString(), route: "notification:order_confirmation" };
    const deps = { db, log: createLogger({ test: true }, "error"), mail: { mailer: localMailer(db), fromDomain: "mail.test" }, linkSecret };
    expect(await sendNotification(message, deps)).toBe("sent");
    const [mail] = (await sql(s, "select text_body, html_body from mailbox_message where idempotency_key = $1", [`${event!.id}:order_confirmation`])) as { text_body: string; html_body: string }[];
    const link = new URL(/Your order: (\S+)/.exec(mail!.text_body)![1]!);
    expect(link.origin).toBe(`https://${s.hostname}`);
    expect(link.pathname).toBe(`/orders/${placed.id}`);
    expect(mail!.html_body).toContain(`<a href="https://${s.hostname}/orders/${placed.id}?k=`);
    const key = link.searchParams.get("k")!;
    expect(key).not.toBe(placed.key);
    const opened = await open(s.hostname, link.pathname + link.search);
    expect(opened.status).toBe(200);
    expect(opened.html).toContain("Thank you for your order");
    expectPrivate(opened.headers);

    const other = await placeOrder(s, { email: "someone@example.test" });
    expect((await open(s.hostname, `/orders/${other.id}?k=${key}`)).status).toBe(404);
    const elsewhere = await shop();
    expect((await open(elsewhere.hostname, link.pathname + link.search)).status).toBe(404);
    // A second message about the order carries the same link (a retry is the same email).
    await sendNotification({ ...message, eventId: crypto.randomUUID(), route: "notification:payment_received" }, deps);
    expect((await sql(s, "select text_body from mailbox_message where text_body like $1", [`%${key}%`])).length).toBe(2);
  });
});
