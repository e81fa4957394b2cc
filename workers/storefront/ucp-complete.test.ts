import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { newTrace, tripsOf } from "../../test/proxy";
import { deriveLocalSecret, localConfirmationFields } from "#shared/payments/local-protocol";
import { call as raw } from "../../test/call";
import { Shopper } from "../../test/storefront";
import worker from "./index";
import { BASE, ip, ready, send, shop, sql, total, type Json } from "../../test/ucp";

/**
 * Completing UCP checkout sessions over REST (issue 26 item 3; docs/ucp.md "Completing") through the real
 * Worker and Postgres: the order placed through the storefront's checkout, the buyer paying on the store's
 * page through the local gateway, the session completed with its order; replays; stock races between agents'
 * sessions; what cannot be completed.
 */
const LOCAL_SECRET = "local-gateway-test-secret";
const proxy = (env as unknown as { DB_WS_PROXY: string }).DB_WS_PROXY;

async function readySession(hostname: string, variantId: string, quantity = 1, email = "asha@example.com", from = ip()) {
  const body = { ...ready(variantId, quantity), buyer: { email, first_name: "Asha" } };
  const created = await send(hostname, "POST", BASE, body, { "cf-connecting-ip": from });
  expect(created.body["status"]).toBe("ready_for_complete");
  return created.body["id"] as string;
}

const complete = (hostname: string, id: string, headers: Record<string, string> = {}) => send(hostname, "POST", `${BASE}/${id}/complete`, { payment: {} }, headers);

describe("completing a UCP checkout session", () => {
  it("from the store's profile to a paid order: discovered, placed through checkout, paid by the buyer on the order's page at the local gateway, completed", async () => {
    const s = await shop();
    // Discovery: the store's profile names the shopping service over REST; its endpoint is where sessions live.
    const profile = await call(new Shopper(s.hostname), "GET", "/.well-known/ucp");
    expect(profile.status).toBe(200);
    const services = (JSON.parse(profile.text) as Json)["ucp"]["services"]["dev.ucp.shopping"] as Json[];
    const rest = services.find((svc) => svc["transport"] === "rest")!;
    expect(`${new URL(rest["endpoint"]).pathname}/checkout-sessions`).toBe(BASE);
    expect(new URL(rest["endpoint"]).host).toBe(s.hostname);
    const id = await readySession(s.hostname, s.variantId, 2);
    const before = await send(s.hostname, "GET", `${BASE}/${id}`);

    const key = crypto.randomUUID();
    const done = await complete(s.hostname, id, { "idempotency-key": key });
    expect(done.status).toBe(200);
    const b = done.body;
    expect(b["status"]).toBe("requires_escalation");
    expect(b["messages"]).toContainEqual({ type: "error", code: "payment_required", severity: "requires_buyer_input", content: expect.stringContaining("continue_url") });
    expect(b["order"]).toBeUndefined();
    const [order] = await sql(s, "select id, channel, status, payment_status, total, tax, email from shop_order where cart_id in (select id from cart where converted_order_id is not null) and channel = 'ucp'");
    expect(order).toMatchObject({ channel: "ucp", status: "open", payment_status: "unpaid", email: "asha@example.com" });
    // The buyer's page of the order, with its key: where they pay.
    expect(b["continue_url"]).toMatch(new RegExp(`^https://${s.hostname.replace(/\./g, "\\.")}/orders/${order.id}\\?k=[A-Za-z0-9_-]{43}$`));
    // The order's money is the session's, to the paisa: the checkout code priced both.
    expect(Number(order.total)).toBe(total(before.body, "total"));
    expect(total(b, "total")).toBe(Number(order.total));
    expect((b["totals"] as Json[]).find((t) => t["type"] === "total")!["lines"]).toEqual([{ display_text: "Excl. GST", amount: Number(order.total) - Number(order.tax) }, { display_text: "GST", amount: Number(order.tax) }]);
    // Reserved, in parcels, with its first attempt, as every order.
    const [{ reserved }] = await sql(s, "select sum(reserved)::int as reserved from inventory_level where variant_id = $1", [s.variantId]);
    expect(reserved).toBe(2);
    expect(await sql(s, "select attempt, status from payment_attempt where order_id = $1", [order.id])).toEqual([{ attempt: 1, status: "created" }]);
    expect((await sql(s, "select order_id, status from ucp_checkout_session where id = $1", [id]))[0]).toEqual({ order_id: order.id, status: "requires_escalation" });

    // The same key again: the first answer, marked; completing again without a key: the same order, no second.
    const replay = await complete(s.hostname, id, { "idempotency-key": key });
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body).toEqual(b);
    const again = await complete(s.hostname, id);
    expect(again.body["status"]).toBe("requires_escalation");
    expect(again.body["continue_url"]).toBe(b["continue_url"]);
    expect(await sql(s, "select count(*)::int as n from shop_order where channel = 'ucp'")).toEqual([{ n: 1 }]);
    // A session that placed its order cannot change.
    expect((await send(s.hostname, "PUT", `${BASE}/${id}`, ready(s.variantId, 1))).body["code"]).toBe("invalid_state");

    // The buyer follows continue_url: the order's page offers "Pay now", which goes to the store's gateway.
    const buyer = new Shopper(s.hostname);
    const path = new URL(b["continue_url"]).pathname + new URL(b["continue_url"]).search;
    const page = await call(buyer, "GET", path);
    expect(page.status).toBe(200);
    expect(page.text).toContain("Pay now");
    const paying = await buyer.send("POST", `/api/checkout/${order.id}/pay${new URL(b["continue_url"]).search}`, {}, { "sec-fetch-site": "same-origin" });
    expect(paying.status).toBe(201);
    const redirectUrl = String((paying.body["payment"] as Json)["redirectUrl"]);
    const ref = decodeURIComponent(redirectUrl.split("/-gateway/pay/")[1]!);
    const fields = (await localConfirmationFields(ref, "captured", await deriveLocalSecret(LOCAL_SECRET, s.id)))!;
    const confirmed = await buyer.send("POST", `/api/checkout/${order.id}/confirm${new URL(b["continue_url"]).search}`, fields);
    expect(confirmed.body["order"]).toMatchObject({ paymentStatus: "paid" });

    // Paid: the session is completed, names its order with the buyer's link, and offers no continue_url.
    const after = await send(s.hostname, "GET", `${BASE}/${id}`);
    expect(after.body["status"]).toBe("completed");
    expect(after.body["order"]).toEqual({ id: order.id, label: expect.stringMatching(/^#\d+$/), permalink_url: b["continue_url"] });
    expect(after.body["continue_url"]).toBeUndefined();
    expect(after.body["messages"]).toEqual([{ type: "info", content: "Prices include GST." }]);
    // Completing a completed session changes nothing and answers it as it is; it cannot be cancelled (money came in).
    expect((await complete(s.hostname, id)).body).toEqual(after.body);
    const late = await send(s.hostname, "POST", `${BASE}/${id}/cancel`);
    expect([late.status, late.body["code"]]).toEqual([409, "invalid_state"]);
    expect((await sql(s, "select status, payment_status from shop_order where id = $1", [order.id]))[0]).toEqual({ status: "open", payment_status: "paid" });
  });

  it("stock races between agents' sessions keep no-oversell: 8 sessions for the last 3 units, 3 orders, the rest told out_of_stock", async () => {
    const s = await shop();
    await sql(s, "update inventory_level set on_hand = 3, reserved = 0 where variant_id = $1", [s.variantId]);
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push(await readySession(s.hostname, s.variantId, 1, `buyer${i}@example.com`, `198.18.40.${i + 1}`));
    const answers = await Promise.all(ids.map((id, i) => complete(s.hostname, id, { "cf-connecting-ip": `198.18.40.${i + 1}`, "idempotency-key": crypto.randomUUID() })));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    const statuses = answers.map((a) => a.body["status"]).sort();
    expect(statuses).toEqual([...Array(5).fill("incomplete"), ...Array(3).fill("requires_escalation")]);
    for (const lost of answers.filter((a) => a.body["status"] === "incomplete")) {
      expect((lost.body["messages"] as Json[]).some((m) => m["type"] === "error" && m["code"] === "out_of_stock")).toBe(true);
    }
    const [level] = await sql(s, "select on_hand, reserved from inventory_level where variant_id = $1", [s.variantId]);
    expect(level).toEqual({ on_hand: 3, reserved: 3 });
    expect(await sql(s, "select count(*)::int as n from shop_order where channel = 'ucp'")).toEqual([{ n: 3 }]);
    expect(await sql(s, "select count(*)::int as n from ucp_checkout_session where order_id is not null")).toEqual([{ n: 3 }]);
  });

  it("a session that is not ready answers its messages and places nothing; another store's or agent's session is 404; off, 404", async () => {
    const s = await shop();
    const other = await shop();
    const open = await send(s.hostname, "POST", BASE, { line_items: [{ item: { id: s.variantId }, quantity: 1 }] });
    const notReady = await complete(s.hostname, open.body["id"]);
    expect(notReady.status).toBe(200);
    expect(notReady.body["status"]).toBe("incomplete");
    expect((notReady.body["messages"] as Json[]).map((m) => m["path"])).toContain("$.buyer.email");
    const id = await readySession(s.hostname, s.variantId);
    expect((await complete(other.hostname, id)).status).toBe(404);
    expect((await complete(s.hostname, id, { "ucp-agent": 'profile="https://another-agent.example.com/.well-known/ucp"' })).status).toBe(404);
    await sql(s, "update store set agentic_checkout = false where id = $1", [s.id]);
    expect((await complete(s.hostname, id)).status).toBe(404);
    expect(await sql(s, "select count(*)::int as n from shop_order where channel = 'ucp'")).toEqual([{ n: 0 }]);
  });

  it("an order that lapses unpaid ends its session canceled; a sold-out item after the session was ready is refused with its path", async () => {
    const s = await shop();
    const id = await readySession(s.hostname, s.variantId);
    await complete(s.hostname, id);
    await sql(s, "update shop_order set status = 'expired', expired_at = now() where channel = 'ucp'");
    const lapsed = await send(s.hostname, "GET", `${BASE}/${id}`);
    expect(lapsed.body["status"]).toBe("canceled");
    expect(lapsed.body["continue_url"]).toBeUndefined();
    expect(lapsed.body["messages"]).toContainEqual(expect.objectContaining({ type: "info", code: "order_not_paid" }));

    const second = await readySession(s.hostname, s.variantId);
    await sql(s, "update inventory_level set on_hand = reserved where variant_id = $1", [s.variantId]);
    const refused = await complete(s.hostname, second);
    expect(refused.body["status"]).toBe("incomplete");
    expect(refused.body["messages"]).toContainEqual(expect.objectContaining({ type: "error", code: "out_of_stock", path: "$.line_items[0].quantity" }));
  });
  it("the agent platform's order webhook URL is kept with the order; a local platform's profile is taken only in development", async () => {
    const s = await shop();
    const hooked = { "ucp-agent": 'profile="https://hooks.agent.example.com/.well-known/ucp"' };
    const created = await send(s.hostname, "POST", BASE, ready(s.variantId, 1), hooked);
    await send(s.hostname, "POST", `${BASE}/${created.body["id"]}/complete`, {}, hooked);
    expect(await sql(s, "select webhook_url from ucp_checkout_session where id = $1", [created.body["id"]])).toEqual([{ webhook_url: "https://hooks.agent.example.com/orders" }]);

    const local = { "ucp-agent": 'profile="http://127.0.0.1:8789/-agent/profile.json"' };
    expect((await send(s.hostname, "POST", BASE, ready(s.variantId, 1), local)).body["code"]).toBe("invalid_profile_url");
    const dev = await send(s.hostname, "POST", BASE, ready(s.variantId, 1), local, { APP_ENV: "development" });
    expect(dev.status).toBe(201);
    await send(s.hostname, "POST", `${BASE}/${dev.body["id"]}/complete`, {}, local, { APP_ENV: "development" });
    expect(await sql(s, "select webhook_url from ucp_checkout_session where id = $1", [dev.body["id"]])).toEqual([{ webhook_url: "http://127.0.0.1:8789/orders" }]);
  });

  it("cancelling a session whose order waits for payment cancels that order: its stock released, the session canceled", async () => {
    const s = await shop();
    const id = await readySession(s.hostname, s.variantId, 2);
    const placed = await complete(s.hostname, id);
    expect(placed.body["status"]).toBe("requires_escalation");
    const [{ reserved: before }] = await sql(s, "select sum(reserved)::int as reserved from inventory_level where variant_id = $1", [s.variantId]);
    expect(before).toBe(2);
    const key = crypto.randomUUID();
    const cancelled = await send(s.hostname, "POST", `${BASE}/${id}/cancel`, undefined, { "idempotency-key": key });
    expect([cancelled.status, cancelled.body["status"], cancelled.body["continue_url"]]).toEqual([200, "canceled", undefined]);
    const [order] = await sql(s, "select id, status from shop_order where channel = 'ucp'");
    expect(order.status).toBe("cancelled");
    const [{ reserved: after }] = await sql(s, "select sum(reserved)::int as reserved from inventory_level where variant_id = $1", [s.variantId]);
    expect(after).toBe(0);
    expect(await sql(s, "select count(*)::int as n from outbox_event where kind = 'order.cancelled' and payload->>'orderId' = $1", [order.id])).toEqual([{ n: 1 }]);
    // The same key answers the same; a new one hears the session is over; the buyer's page shows the order cancelled.
    expect((await send(s.hostname, "POST", `${BASE}/${id}/cancel`, undefined, { "idempotency-key": key })).body).toEqual(cancelled.body);
    expect((await send(s.hostname, "POST", `${BASE}/${id}/cancel`)).status).toBe(409);
    expect((await complete(s.hostname, id)).status).toBe(409);
  });

  it("round trips of a completion: six units (read, catalogue, the cart, checkout's two, the answer); completing a placed session is one", async () => {
    const s = await shop();
    const id = await readySession(s.hostname, s.variantId);
    const trace = newTrace();
    const done = await complete(s.hostname, id, { "x-commerce-trace": trace });
    expect(done.body["status"]).toBe("requires_escalation");
    expect((await tripsOf(proxy, trace)).turns).toBe(6);
    const again = newTrace();
    await complete(s.hostname, id, { "x-commerce-trace": again });
    expect((await tripsOf(proxy, again)).turns).toBe(1);
  });

  it("Idempotency-Key on cancel: the same key answers the first cancel again; a new key hears the session is canceled", async () => {
    const s = await shop();
    const id = await readySession(s.hostname, s.variantId);
    const key = crypto.randomUUID();
    const first = await send(s.hostname, "POST", `${BASE}/${id}/cancel`, undefined, { "idempotency-key": key });
    expect([first.status, first.body["status"]]).toEqual([200, "canceled"]);
    const replay = await send(s.hostname, "POST", `${BASE}/${id}/cancel`, undefined, { "idempotency-key": key });
    expect([replay.status, replay.headers.get("idempotent-replayed")]).toEqual([200, "true"]);
    expect(replay.body).toEqual(first.body);
    const fresh = await send(s.hostname, "POST", `${BASE}/${id}/cancel`, undefined, { "idempotency-key": crypto.randomUUID() });
    expect([fresh.status, fresh.body["code"]]).toEqual([409, "invalid_state"]);
    // The same key on another operation is the protocol's conflict, and runs nothing.
    const reused = await complete(s.hostname, id, { "idempotency-key": key });
    expect([reused.status, reused.body["code"]]).toEqual([409, "idempotency_conflict"]);
  });
});

/** A page as the buyer's browser gets it. */
async function call(buyer: Shopper, method: string, path: string) {
  const res = await raw(worker, `http://storefront.test${path}`, { method, headers: { host: buyer.host } });
  return { status: res.status, text: await res.text() };
}
