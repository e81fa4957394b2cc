import { env } from "cloudflare:workers";
import { describe, expect, inject, it, vi } from "vitest";
import { DUMMY_TOKEN } from "#shared/challenge/local";
import { withStore } from "#shared/db/with-store";
import { hit } from "#shared/limits/limit";
import type { RateLimiter } from "#shared/limits/rate-limiter";
import { SHOPPER_LIMITS, shopperKeys, type ShopperDoor } from "#shared/limits/shopper";
import { testDb, uniqueSuffix } from "../../test/harness";
import { traced } from "../../test/proxy";
import { call } from "../../test/call";
import { cartOf, makeShop, Shopper, type ShopStore } from "../../test/storefront";
import worker from "./index";

/** The shopper's writes counted at the door (issue 20 item 1) and the checkout's person check (item 9). */
const db = testDb();
const limiter = (env as unknown as { RATE_LIMITER: DurableObjectNamespace<RateLimiter> }).RATE_LIMITER;
const sql = (s: ShopStore, text: string, values: unknown[] = []) => withStore(db, s.id, (tx) => tx.$client.query(text, values)).then((r) => r.rows);
const address = () => ({ name: "Asha Rao", line1: "12 MG Road", city: "Pune", state: "IN-MH", postalCode: "411001", country: "IN" });
const order = (email = "asha@example.test") => ({ email, shippingAddress: address(), paymentMethod: "gateway" });
const ip = () => `198.18.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;
const NO_TOKEN = { "cf-turnstile-response": "" };

async function shop(stock = 50): Promise<ShopStore> {
  const s = await makeShop(db);
  await sql(s, "update location set state = 'IN-MH'");
  await sql(s, "update inventory_level set on_hand = $1", [stock]);
  return s;
}

/** Fills a key's whole window, as that many requests would. */
const fill = (door: ShopperDoor, hostname: string, from: string, which: 0 | 1) => {
  const { key, policy } = shopperKeys(door, hostname, from)[which]!;
  return hit(limiter, key, policy, policy.limit);
};

/** One write of each door, as a shopper sends it (any store: it is refused before the store is looked up). */
const WRITES: [ShopperDoor, string, string, unknown][] = [
  ["cart", "POST", "/api/cart/lines", { variantId: crypto.randomUUID(), quantity: 1 }],
  ["cart", "PATCH", `/api/cart/lines/${crypto.randomUUID()}`, { quantity: 2 }],
  ["cart", "DELETE", `/api/cart/lines/${crypto.randomUUID()}`, undefined],
  ["cart", "DELETE", "/api/cart/discount", undefined],
  ["discount", "POST", "/api/cart/discount", { code: "SAVE10" }],
  ["checkout", "POST", "/api/checkout", order()],
  ["checkout", "POST", "/checkout", new URLSearchParams({ email: "a@example.test" })],
  ["payment", "POST", `/api/checkout/${crypto.randomUUID()}/pay`, undefined],
  ["payment", "POST", `/api/checkout/${crypto.randomUUID()}/confirm?k=${"a".repeat(64)}`, undefined],
  ["notify", "POST", "/products/fixture/notify", new URLSearchParams({ email: "a@example.test" })],
  ["emailLink", "POST", `/unsubscribe/${crypto.randomUUID()}?k=${"b".repeat(64)}`, new URLSearchParams({})],
];

describe("every shopper write is counted per address and per store before any database work", () => {
  it("an address at a door's limit gets 429 with Retry-After and opens no connection, even for a hostname never looked up", async () => {
    for (const [door, method, path, body] of WRITES) {
      const host = `cold-${uniqueSuffix()}.shop.test`;
      const from = ip();
      await fill(door, host, from, 0);
      const { status, trips, res } = await traced((headers) =>
        call(worker, `http://storefront.test${path}`, {
          method,
          headers: { host, "cf-connecting-ip": from, "sec-fetch-site": "same-origin", ...headers, ...(body instanceof URLSearchParams ? { "content-type": "application/x-www-form-urlencoded" } : body ? { "content-type": "application/json" } : {}) },
          body: body instanceof URLSearchParams ? body.toString() : body ? JSON.stringify(body) : undefined,
        }),
      );
      expect(status, `${method} ${path}`).toBe(429);
      expect(Number(res.headers.get("retry-after")), path).toBeGreaterThanOrEqual(1);
      expect(res.headers.get("ratelimit-policy"), path).toBe(`"address";q=${SHOPPER_LIMITS[door].address.limit};w=${SHOPPER_LIMITS[door].address.windowMs / 1000}`);
      expect({ turns: trips.turns, queries: trips.httpQueries, connections: trips.connections }, path).toEqual({ turns: 0, queries: 0, connections: 0 });
    }
  });

  it("with no database to reach at all, a refused write is still a 429 (JSON under /api/, the error page for a form)", async () => {
    const s = await shop();
    const from = ip();
    await fill("cart", s.hostname, from, 0);
    const noDb = { DATABASE_URL: inject("noSlotsDatabaseUrl") };
    const buyer = new Shopper(s.hostname);
    const json = await buyer.send("POST", "/api/cart/lines", { variantId: s.variantId }, { "cf-connecting-ip": from }, noDb);
    expect(json.status).toBe(429);
    expect(json.body.json).toMatchObject({ code: "TOO_MANY_REQUESTS", data: { reason: "rate_limited" } });
    expect(json.body.json!.message).toMatch(/^At most 300 cart changes per minute from one address\. Retry after \d+ s\.$/);
    const form = await call(
      worker,
      "http://storefront.test/api/cart/lines",
      {
        method: "POST",
        headers: { host: s.hostname, "cf-connecting-ip": from, "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
        body: new URLSearchParams({ variantId: s.variantId, return: "/products/fixture" }).toString(),
      },
      noDb,
    );
    expect(form.status).toBe(429);
    expect(form.headers.get("content-type")).toMatch(/^text\/html/);
    expect(await form.text()).toContain("At most 300 cart changes per minute from one address");
    // Another address is not limited, and its answer says what it has left.
    const other = await buyer.send("POST", "/api/cart/lines", { variantId: s.variantId }, { "cf-connecting-ip": ip() });
    expect(other.status).toBe(200);
    expect(other.headers.get("ratelimit")).toMatch(/^"address";r=299;t=\d+$/);
  });

  it("a store at its ceiling refuses every address, and only that store", async () => {
    const s = await shop();
    const other = await shop();
    await fill("cart", s.hostname, "any", 1);
    const res = await new Shopper(s.hostname).send("POST", "/api/cart/lines", { variantId: s.variantId }, { "cf-connecting-ip": ip() });
    expect(res.status).toBe(429);
    expect(res.body.json!.message).toMatch(/^At most 1000 cart changes per 10 seconds at this store\./);
    expect(res.headers.get("ratelimit-policy")).toBe('"store";q=1000;w=10');
    expect((await new Shopper(other.hostname).add(other.variantId)).status).toBe(200);
  });
});

describe("discount codes: wrong ones are counted on their own", () => {
  it("10 wrong codes from an address, then no code is looked up from it (429); a right code does not count, another address goes on", async () => {
    const s = await shop();
    const guesser = new Shopper(s.hostname);
    const from = { "cf-connecting-ip": ip() };
    await guesser.send("POST", "/api/cart/lines", { variantId: s.variantId }, from);
    for (let i = 0; i < 10; i++) expect((await guesser.send("POST", "/api/cart/discount", { code: `GUESS${i}` }, from)).status).toBe(404);
    const { status, trips } = await traced((headers) => guesser.send("POST", "/api/cart/discount", { code: s.discountCode }, { ...from, ...headers }).then((a) => new Response(null, { status: a.status })));
    expect(status).toBe(429);
    expect(trips.httpQueries + trips.connections).toBe(0);
    const refused = await guesser.send("POST", "/api/cart/discount", { code: s.discountCode }, from);
    expect(refused.body.json!.message).toMatch(/^At most 10 wrong discount codes per 10 minutes from one address\./);
    // A shopper with the right code, again and again, never reaches the wrong-code limit.
    const shopper = new Shopper(s.hostname);
    const mine = { "cf-connecting-ip": ip() };
    await shopper.send("POST", "/api/cart/lines", { variantId: s.variantId }, mine);
    for (let i = 0; i < 12; i++) expect((await shopper.send("POST", "/api/cart/discount", { code: s.discountCode }, mine)).status).toBe(200);
    expect(cartOf(await shopper.get()).discountCode).toBe(s.discountCode);
  });
});

describe("the checkout's person check past a threshold", () => {
  const checkoutFrom = async (s: ShopStore, from: string, headers: Record<string, string>, env: Record<string, unknown> = {}) => {
    const buyer = new Shopper(s.hostname);
    expect((await buyer.send("POST", "/api/cart/lines", { variantId: s.variantId, quantity: 1 }, { "cf-connecting-ip": from })).status).toBe(200);
    return buyer.send("POST", "/api/checkout", order(`b-${uniqueSuffix()}@example.test`), { "cf-connecting-ip": from, ...headers }, env);
  };
  const orders = async (s: ShopStore) => Number((await sql(s, "select count(*) as n from shop_order where cart_id is not null"))[0].n);

  it("3 checkouts from an address need none; the 4th is 403 without a passed check, and goes through with one", async () => {
    const s = await shop();
    const from = ip();
    for (let i = 0; i < 3; i++) expect((await checkoutFrom(s, from, NO_TOKEN)).status).toBe(201);
    const missing = await checkoutFrom(s, from, NO_TOKEN);
    expect(missing.status).toBe(403);
    expect(missing.body.json).toMatchObject({
      code: "FORBIDDEN",
      data: { reason: "challenge_required", challenge: { provider: "local", siteKey: "1x00000000000000000000AA", field: "cf-turnstile-response", header: "cf-turnstile-response" } },
    });
    const wrong = await checkoutFrom(s, from, { "cf-turnstile-response": "0.made-up" });
    expect(wrong.status).toBe(403);
    expect(wrong.body.json).toMatchObject({ data: { reason: "challenge_failed", challenge: { codes: ["invalid-input-response"] } } });
    expect(await orders(s)).toBe(3);
    // With a passed check the order is the checkout's to answer (here: the network already holds 3 unpaid
    // orders, the holds' own limit), no longer the check's.
    const through = await checkoutFrom(s, from, { "cf-turnstile-response": DUMMY_TOKEN });
    expect(through.status).not.toBe(403);
    expect(String(through.body.json?.data?.["reason"] ?? "")).not.toMatch(/^challenge/);
    // Another address is under its own threshold.
    expect((await checkoutFrom(s, ip(), NO_TOKEN)).status).toBe(201);
    // A check that always fails (Turnstile's failing test secret) lets no one through.
    const failing = await checkoutFrom(s, from, { "cf-turnstile-response": DUMMY_TOKEN }, { TURNSTILE_SECRET_KEY: "2x0000000000000000000000000000000AA" });
    expect(failing.status).toBe(403);
    expect(failing.body.json).toMatchObject({ data: { reason: "challenge_failed" } });
  });

  it("a deployment without the challenge's configuration fails its first checkout, not the first one under attack", async () => {
    const s = await shop();
    const quiet = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const first = await checkoutFrom(s, ip(), NO_TOKEN, { CHALLENGE: "turnstile", TURNSTILE_SITE_KEY: "", TURNSTILE_SECRET_KEY: "" });
    quiet.mockRestore();
    expect(first.status).toBe(500);
    expect(await orders(s)).toBe(0);
  });

  it("past the store's threshold every address needs the check, its first checkout too", async () => {
    const s = await shop();
    const { key, policy } = shopperKeys("checkout", s.hostname, "any")[1]!;
    await hit(limiter, key, policy, policy.challengeAfter!);
    expect((await checkoutFrom(s, ip(), NO_TOKEN)).status).toBe(403);
    expect((await checkoutFrom(s, ip(), { "cf-turnstile-response": DUMMY_TOKEN })).status).toBe(201);
  });

  it("the checkout page shows the check ahead once it is due; the form refused without it comes back with it and what was typed", async () => {
    const s = await shop();
    const from = ip();
    const buyer = new Shopper(s.hostname);
    const headers = { "cf-connecting-ip": from, ...NO_TOKEN };
    await buyer.send("POST", "/api/cart/lines", { variantId: s.variantId }, headers);
    const page = async () => {
      const res = await call(worker, "http://storefront.test/checkout", { headers: { host: s.hostname, cookie: `wc_cart=${buyer.cookie}`, ...headers } });
      return res.text();
    };
    expect(await page()).not.toContain("data-challenge");
    // The store has had its threshold of checkouts in the window.
    const { key, policy } = shopperKeys("checkout", s.hostname, "any")[1]!;
    await hit(limiter, key, policy, policy.challengeAfter!);
    expect(await page()).toMatch(/<input type="hidden" name="cf-turnstile-response" value="XXXX\.DUMMY\.TOKEN\.XXXX" \/> Local person check/);
    const fields = { email: "form@example.test", "shippingAddress.name": "Asha Rao", "shippingAddress.line1": "12 MG Road", "shippingAddress.city": "Pune", "shippingAddress.postalCode": "411001", "shippingAddress.state": "IN-MH", "shippingAddress.country": "IN", paymentMethod: "gateway" };
    const post = (body: Record<string, string>, extra: Record<string, string>) =>
      call(worker, "http://storefront.test/checkout", {
        method: "POST",
        headers: { host: s.hostname, cookie: `wc_cart=${buyer.cookie}`, "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin", "cf-connecting-ip": from, ...extra },
        body: new URLSearchParams(body).toString(),
        redirect: "manual",
      });
    const refused = await post(fields, NO_TOKEN);
    expect(refused.status).toBe(403);
    const html = await refused.text();
    expect(html).toContain('<form method="post" action="/checkout">');
    expect(html).toContain('<input type="hidden" name="email" value="form@example.test"/>');
    expect(html).toContain('name="cf-turnstile-response" value="XXXX.DUMMY.TOKEN.XXXX"');
    expect(await orders(s)).toBe(0);
    // The page's form, sent on with the widget's token, places the order.
    const placed = await post({ ...fields, "cf-turnstile-response": DUMMY_TOKEN }, {});
    expect(placed.status, await placed.clone().text()).toBe(303);
    expect(placed.headers.get("location")).toMatch(/\/-gateway\/pay\//);
    expect(await orders(s)).toBe(1);
  });
});
