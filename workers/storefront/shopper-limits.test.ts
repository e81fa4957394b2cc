import { env } from "cloudflare:workers";
import { describe, expect, inject, it, vi } from "vitest";
import { DUMMY_TOKEN } from "#shared/challenge/local";
import { withStore } from "#shared/db/with-store";
import { clientOf } from "#shared/limits/address";
import { hit, peek } from "#shared/limits/limit";
import type { RateLimiter } from "#shared/limits/rate-limiter";
import { SHOPPER_LIMITS, shopperKeys, WRONG_CODE_LIMITS, wrongCodeKeys, type ShopperDoor } from "#shared/limits/shopper";
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

/** A door's key for a client: its address's, its IPv6 /48's, or the store's. */
const keyOf = (door: ShopperDoor, hostname: string, from: string, which: "address" | "network" | "store") => {
  const keys = shopperKeys(door, hostname, clientOf(from));
  return which === "store" ? keys.store! : keys.address[which === "address" ? 0 : 1]!;
};
/** Fills a key's window up to `count` (its whole window by default), as that many requests would. */
const fill = (door: ShopperDoor, hostname: string, from: string, which: "address" | "network" | "store", count?: number) => {
  const { key, policy } = keyOf(door, hostname, from, which);
  return hit(limiter, key, policy, count ?? policy.limit);
};
/** How many requests a key holds now (a peek answers what would remain after one more). */
const holds = async ({ key, policy }: { key: string; policy: { limit: number; windowMs: number } }) => policy.limit - (await peek(limiter, key, policy)).remaining - 1;

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
  // Not a write: a tax document's PDF, made on each request.
  ["document", "GET", `/orders/${crypto.randomUUID()}/invoices/${crypto.randomUUID()}.pdf?k=${"c".repeat(64)}`, undefined],
  ["document", "GET", `/orders/${crypto.randomUUID()}/credit-notes/${crypto.randomUUID()}.pdf`, undefined],
  ["suggest", "GET", "/api/search/suggest?q=kur", undefined],
  ["mcp", "POST", "/api/mcp", { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "search_catalog", arguments: { query: "kurta" } } }],
  ["cart", "POST", `/api/cart/open/${"c".repeat(43)}`, undefined],
];

describe("every shopper write is counted per address and per store before any database work", () => {
  it("an address at a door's limit gets 429 with Retry-After and opens no connection, even for a hostname never looked up", async () => {
    for (const [door, method, path, body] of WRITES) {
      const host = `cold-${uniqueSuffix()}.shop.test`;
      const from = ip();
      await fill(door, host, from, "address");
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
    await fill("cart", s.hostname, from, "address");
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

  it("the cart has no store ceiling to close it for everyone; an IPv6 /48 is one network with 4 times an address's numbers", async () => {
    const s = await shop();
    expect(SHOPPER_LIMITS.cart.store).toBeNull();
    // A /48 whose /64s made their 1200 cart changes in the minute: a fifth /64 of it is refused as that network.
    await fill("cart", s.hostname, "2001:db8:cafe:1::1", "network");
    const neighbour = await new Shopper(s.hostname).send("POST", "/api/cart/lines", { variantId: s.variantId }, { "cf-connecting-ip": "2001:db8:cafe:5::9" });
    expect(neighbour.status).toBe(429);
    expect(neighbour.headers.get("ratelimit-policy")).toBe('"network";q=1200;w=60');
    expect(neighbour.body.json!.message).toMatch(/^At most 1200 cart changes per minute from one IPv6 \/48 network\./);
    // Another network, and an IPv4 shopper, add as before.
    expect((await new Shopper(s.hostname).send("POST", "/api/cart/lines", { variantId: s.variantId }, { "cf-connecting-ip": "2001:db8:cafd:5::9" })).status).toBe(200);
    expect((await new Shopper(s.hostname).send("POST", "/api/cart/lines", { variantId: s.variantId }, { "cf-connecting-ip": ip() })).status).toBe(200);
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

describe("discount codes: counted before the lookup, given back when right", () => {
  it("30 guesses racing from one address: exactly 10 are looked up, the other 20 are 429 and reach no database", async () => {
    const s = await shop();
    const guesser = new Shopper(s.hostname);
    const from = { "cf-connecting-ip": ip() };
    await guesser.send("POST", "/api/cart/lines", { variantId: s.variantId }, from);
    const { trips, body } = await traced(async (headers) => {
      const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => guesser.send("POST", "/api/cart/discount", { code: `RACE${i}` }, { ...from, ...headers })));
      return Response.json(answers.map((a) => a.status).sort());
    });
    expect(JSON.parse(body)).toEqual([...Array(10).fill(404), ...Array(20).fill(429)]);
    // One round trip for each looked-up code; none for the refused.
    expect(trips.connections).toBe(0);
    expect(trips.httpQueries).toBe(10);
  });

  it(`past the store's ${WRONG_CODE_LIMITS.store!.challengeAfter} wrong codes an hour, every code attempt asks for the check instead of closing codes for everyone`, async () => {
    const s = await shop();
    const store = wrongCodeKeys(s.hostname, clientOf(ip())).store!;
    const threshold = store.policy.challengeAfter!;
    await hit(limiter, store.key, store.policy, threshold);
    const shopper = new Shopper(s.hostname);
    const mine = { "cf-connecting-ip": ip() };
    await shopper.send("POST", "/api/cart/lines", { variantId: s.variantId }, mine);
    const asked = await shopper.send("POST", "/api/cart/discount", { code: s.discountCode }, { ...mine, ...NO_TOKEN });
    expect(asked.status).toBe(403);
    expect(asked.body.json).toMatchObject({ data: { reason: "challenge_required", challenge: { siteKey: "1x00000000000000000000AA" } } });
    expect(asked.body.json!.message).toMatch(/to use a discount code/);
    // With the check the code applies, and a right code is given back: the store's count has not moved.
    expect((await shopper.send("POST", "/api/cart/discount", { code: s.discountCode }, mine)).status).toBe(200);
    expect(cartOf(await shopper.get()).discountCode).toBe(s.discountCode);
    expect(await holds(store)).toBe(threshold);
    // The cart page's form, refused without the check, comes back with the widget and the code typed.
    const form = await shopper.send("POST", "/api/cart/discount", new URLSearchParams({ code: s.discountCode, return: "/cart" }), { ...mine, ...NO_TOKEN, "sec-fetch-site": "same-origin" });
    expect(form.status).toBe(403);
    // A wrong code with the check is counted; the store's limit counts only those.
    expect((await shopper.send("POST", "/api/cart/discount", { code: "NOPE" }, mine)).status).toBe(404);
    expect(await holds(store)).toBe(threshold + 1);
  });
});

describe("back-in-stock sign-ups past the store's threshold", () => {
  it(`past ${SHOPPER_LIMITS.notify.store!.challengeAfter} sign-ups in 10 minutes, the form carries the check instead of closing; through it the sign-up is made`, async () => {
    const s = await shop(0);
    await fill("notify", s.hostname, ip(), "store", SHOPPER_LIMITS.notify.store!.challengeAfter);
    const post = (fields: Record<string, string>) =>
      call(worker, "http://storefront.test/products/fixture/notify", {
        method: "POST",
        headers: { host: s.hostname, "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin", "cf-connecting-ip": ip() },
        body: new URLSearchParams(fields).toString(),
      });
    const asked = await post({ variantId: s.variantId, email: "wait@example.test" });
    expect(asked.status).toBe(403);
    const html = await asked.text();
    expect(html).toContain('<form method="post" action="/products/fixture/notify">');
    expect(html).toContain('<input type="hidden" name="email" value="wait@example.test"/>');
    expect(html).toContain("to sign up for this email");
    expect((await post({ variantId: s.variantId, email: "wait@example.test", "cf-turnstile-response": DUMMY_TOKEN })).status).toBe(200);
    expect(await sql(s, "select email from restock_subscription where email = 'wait@example.test'")).toEqual([{ email: "wait@example.test" }]);
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
    await fill("checkout", s.hostname, ip(), "store", SHOPPER_LIMITS.checkout.store!.challengeAfter);
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
    await fill("checkout", s.hostname, ip(), "store", SHOPPER_LIMITS.checkout.store!.challengeAfter);
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

  // 180 requests through the limiter on a 2-core machine: counts are asserted, never time; the timeout only catches a hang.
  it("60 /64s of one /48 sending checkouts without the check cannot close checkout for a person elsewhere who passes it: their 403s use no store slot", { timeout: 90_000 }, async () => {
    const s = await shop();
    const store = keyOf("checkout", s.hostname, ip(), "store");
    // The store is 40 short of its limit (a real crowd, each through the check).
    const before = store.policy.limit - 40;
    await fill("checkout", s.hostname, ip(), "store", before);
    const attack = (n: number) => new Shopper(s.hostname).send("POST", "/api/checkout", order(), { "cf-connecting-ip": `2001:db8:bad:${n.toString(16)}::1`, ...NO_TOKEN });
    const statuses = (await Promise.all(Array.from({ length: 60 }, async (_, n) => [await attack(n), await attack(n), await attack(n)]))).flat().map((a) => a.status);
    // The /48 is one network: 120 checkouts in 10 minutes, each refused by the check; then 429 for that network alone.
    expect(statuses.filter((st) => st === 403)).toHaveLength(SHOPPER_LIMITS.checkout.network.limit);
    expect(statuses.filter((st) => st === 429)).toHaveLength(180 - SHOPPER_LIMITS.checkout.network.limit);
    expect(await holds(store)).toBe(before);
    // A person from another network: asked for the check (not refused), and through with it.
    expect((await checkoutFrom(s, ip(), NO_TOKEN)).status).toBe(403);
    expect((await checkoutFrom(s, "2001:db8:900d:1::1", { "cf-turnstile-response": DUMMY_TOKEN })).status).toBe(201);
    expect((await checkoutFrom(s, ip(), { "cf-turnstile-response": DUMMY_TOKEN })).status).toBe(201);
    expect(await holds(store)).toBe(before + 2);
  });

  it("the store's limit is for a real overload: it counts people through the check, and past it refuses them too", async () => {
    const s = await shop();
    await fill("checkout", s.hostname, ip(), "store");
    const full = await checkoutFrom(s, ip(), { "cf-turnstile-response": DUMMY_TOKEN });
    expect(full.status).toBe(429);
    expect(full.body.json!.message).toMatch(/^At most 1800 checkouts per 10 minutes at this store\./);
  });
});
