import { env } from "cloudflare:workers";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { describe, expect, it } from "vitest";
import { hashPassword } from "#shared/auth/password";
import { withStore } from "#shared/db/with-store";
import { clientOf } from "#shared/limits/address";
import { hit } from "#shared/limits/limit";
import type { RateLimiter } from "#shared/limits/rate-limiter";
import { SHOPPER_LIMITS, shopperKeys, WRONG_CODE_LIMITS, wrongCodeKeys } from "#shared/limits/shopper";
import { peek } from "#shared/limits/limit";
import { call } from "../../test/call";
import { testDb, type TestStore } from "../../test/harness";
import { callOf, mcpAgent, rpcPost } from "../../test/mcp-agent";
import { newTrace, tripsOf } from "../../test/proxy";
import { makeShop } from "../../test/storefront";
import worker from "./index";

/**
 * The Storefront MCP (issue 26 item 1; docs/storefront-mcp.md) through the real Worker and Postgres, with the
 * SDK's own client: search, a product, the store's pages, a cart made and changed, its checkout link opened
 * in a browser; another store's cart, the password, the limit, hostile bodies, a crowd.
 */
const db = testDb();
const proxy = (env as unknown as { DB_WS_PROXY: string }).DB_WS_PROXY;
const limiter = (env as unknown as { RATE_LIMITER: DurableObjectNamespace<RateLimiter> }).RATE_LIMITER;
const sql = (s: TestStore, text: string, values: unknown[] = []) => withStore(db, s.id, (tx) => tx.$client.query(text, values)).then((r) => r.rows);
const ip = () => `198.19.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250) + 1}`;

const agent = (host: string, from = ip()) => mcpAgent(host, from);

// The answers are read as loose JSON: the schemas they meet are the server's (the SDK's client checks them).
type Json = Record<string, any>;
const tool = async (client: Client, name: string, args: Record<string, unknown>) => {
  const r = await client.callTool({ name, arguments: args });
  const raw = (r.content as { text: string }[])[0]!.text;
  if (!raw.startsWith("{")) throw new Error(`${name}: ${raw}`);
  const text = JSON.parse(raw) as Json;
  return { isError: r.isError === true, body: text, structured: r.structuredContent as Json | undefined };
};

const rpc = (host: string, from: string, body: unknown, headers: Record<string, string> = {}) => rpcPost(host, from, body, headers);

type Variant = { title: string; sku: string; price: number; stock: number; preorder?: boolean };
async function product(s: TestStore, title: string, variants: Variant[], status = "active") {
  return withStore(db, s.id, async (tx) => {
    const q = (text: string, values: unknown[]) => tx.$client.query(text, values);
    const location = (await q("select id from location where store_id = $1 order by created_at limit 1", [s.id])).rows[0].id as string;
    const handle = `${title.toLowerCase().replace(/[^a-z0-9]+/g, "-")}-${crypto.randomUUID().slice(0, 6)}`;
    const id = (await q("insert into product (store_id, title, handle, status) values ($1, $2, $3, $4) returning id", [s.id, title, handle, status])).rows[0].id as string;
    const ids: string[] = [];
    for (const [i, v] of variants.entries()) {
      const vid = (await q("insert into product_variant (store_id, product_id, title, sku, price_minor, position, preorder) values ($1, $2, $3, $4, $5, $6, $7) returning id", [s.id, id, v.title, v.sku, v.price, i, v.preorder ?? false])).rows[0].id as string;
      await q("insert into inventory_level (store_id, variant_id, location_id, on_hand) values ($1, $2, $3, $4)", [s.id, vid, location, v.stock]);
      ids.push(vid);
    }
    return { id, handle, variants: ids };
  });
}

/** A store of the test's own: a kurta in two sizes (one sold out), two sarees, a draft dupatta, a refund policy. */
async function catalogue() {
  const s = await makeShop(db);
  await sql(s, "update location set state = 'IN-MH'");
  const tag = s.slug.toUpperCase();
  const kurta = await product(s, "Cotton Kurta", [
    { title: "S", sku: `KURTA-S-${tag}`, price: 129900, stock: 3 },
    { title: "M", sku: `KURTA-M-${tag}`, price: 129900, stock: 0 },
  ]);
  const silk = await product(s, "Banarasi Silk Saree", [{ title: "Emerald", sku: `SAREE-SILK-${tag}`, price: 1250000, stock: 2 }]);
  const cotton = await product(s, "Cotton Saree", [{ title: "Default", sku: `SAREE-COT-${tag}`, price: 249900, stock: 0 }]);
  const draft = await product(s, "Silk Dupatta", [{ title: "Default", sku: `DUP-${tag}`, price: 199900, stock: 5 }], "draft");
  await sql(s, "insert into page (store_id, title, handle, body, status, published_at) values ($1, 'Refund policy', 'refund-policy', $2, 'published', now()), ($1, 'Shipping', 'shipping', 'We ship across India in 3 to 7 days.', 'published', now()), ($1, 'Secret plans', 'secret', 'Not yet.', 'draft', null)", [
    s.id,
    "Returns within 7 days of delivery.\r\n\r\nRefunds go back to the original payment method.",
  ]);
  return { s, kurta, silk, cotton, draft };
}

describe("the Storefront MCP, through the SDK's client", () => {
  it("lists its five tools and UCP's five checkout tools, each with a description and input and output schemas", async () => {
    const { s } = await catalogue();
    const client = await agent(s.hostname);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      "cancel_checkout",
      "complete_checkout",
      "create_checkout",
      "get_cart",
      "get_checkout",
      "get_product",
      "get_store_policies",
      "search_catalog",
      "update_cart",
      "update_checkout",
    ]);
    for (const t of tools) {
      expect(t.description!.length, t.name).toBeGreaterThan(60);
      expect(t.inputSchema.type, t.name).toBe("object");
      expect(t.outputSchema?.type, t.name).toBe("object");
    }
    await client.close();
  });

  it("searches: finds by words, with price bounds in rupees and availability, pages on, never a draft", async () => {
    const { s, kurta } = await catalogue();
    const client = await agent(s.hostname);
    const found = await tool(client, "search_catalog", { query: "kurtha" });
    expect(found.isError).toBe(false);
    expect(found.structured).toEqual(found.body);
    expect(found.body["products"]).toHaveLength(1);
    expect(found.body["products"][0]).toMatchObject({
      product_id: kurta.id,
      title: "Cotton Kurta",
      url: `http://${s.hostname}/products/${kurta.handle}`,
      price_range: { min: { amount: "1299.00", currency: "INR", formatted: "₹1,299.00" } },
      available: true,
      availability: "in_stock",
    });
    const titles = async (args: Record<string, unknown>) => (await tool(client, "search_catalog", args)).body["products"].map((p: Json) => p["title"]);
    expect((await titles({ query: "saree" })).sort()).toEqual(["Banarasi Silk Saree", "Cotton Saree"]);
    expect(await titles({ query: "saree", filters: [{ price: { max: 5000 } }] })).toEqual(["Cotton Saree"]);
    expect(await titles({ query: "saree", filters: [{ price: { min: 5000 } }] })).toEqual(["Banarasi Silk Saree"]);
    expect(await titles({ query: "saree", filters: [{ available: true }] })).toEqual(["Banarasi Silk Saree"]);
    expect(await titles({ query: "dupatta" })).toEqual([]);
    const first = await tool(client, "search_catalog", { query: "cotton", limit: 1 });
    expect(first.body["pagination"]).toEqual({ has_next_page: true, end_cursor: "2" });
    const second = await tool(client, "search_catalog", { query: "cotton", limit: 1, after: "2" });
    expect(second.body["pagination"]).toEqual({ has_next_page: false, end_cursor: null });
    expect([first.body["products"][0]["title"], second.body["products"][0]["title"]].sort()).toEqual(["Cotton Kurta", "Cotton Saree"]);
    // A cursor past the 1,000 a search counts is refused before any database work.
    const far = await tool(client, "search_catalog", { query: "cotton", limit: 50, after: "21" });
    expect(far.body["error"]).toMatchObject({ code: "BAD_REQUEST", data: { issues: [{ path: "after" }] } });
    // Arguments the schema refuses: the tool says why.
    const bad = await client.callTool({ name: "search_catalog", arguments: { query: "", limit: 500 } });
    expect(bad.isError).toBe(true);
    await client.close();
  });

  it("gets a product by id or handle: each variant's price (GST included), stock state and quantity; a draft or another store's is not found", async () => {
    const { s, kurta, draft } = await catalogue();
    const other = await catalogue();
    const client = await agent(s.hostname);
    const byId = await tool(client, "get_product", { product_id: kurta.id });
    expect(byId.isError).toBe(false);
    expect(byId.body["product"]).toMatchObject({ title: "Cotton Kurta", handle: kurta.handle, preorder: null });
    expect(byId.body["product"]["variants"]).toEqual([
      expect.objectContaining({ product_variant_id: kurta.variants[0], title: "S", price: expect.objectContaining({ amount: "1299.00" }), stock_state: "in_stock", available_quantity: 3 }),
      expect.objectContaining({ product_variant_id: kurta.variants[1], title: "M", stock_state: "out_of_stock", available_quantity: 0 }),
    ]);
    expect((await tool(client, "get_product", { product_id: kurta.handle })).body["product"]["product_id"]).toBe(kurta.id);
    // The store's fixture product has a photo: its URL on this domain, in search and on the product.
    const photo = `http://${s.hostname}/media/${"0".repeat(64)}/1.jpg`;
    expect((await tool(client, "get_product", { product_id: "fixture" })).body["product"]).toMatchObject({ images: [{ url: photo, alt: "Fixture" }], variants: [{ image_url: null }] });
    expect((await tool(client, "search_catalog", { query: "fixture" })).body["products"][0]).toMatchObject({ handle: "fixture", image_url: photo });
    for (const missing of [draft.id, draft.handle, other.kurta.id, other.kurta.handle, "no such thing!"]) {
      const r = await tool(client, "get_product", { product_id: missing });
      expect([r.isError, r.body["error"]?.["code"]], missing).toEqual([true, "NOT_FOUND"]);
    }
    await client.close();
  });

  it("reads the store's published pages, the ones about the query first; never a draft", async () => {
    const { s } = await catalogue();
    const client = await agent(s.hostname);
    const all = await tool(client, "get_store_policies", {});
    expect(all.body["pages"].map((p: Json) => p["handle"]).sort()).toEqual(["refund-policy", "shipping"]);
    const refunds = await tool(client, "get_store_policies", { query: "refunds and returns" });
    expect(refunds.body["pages"][0]).toMatchObject({
      handle: "refund-policy",
      url: `http://${s.hostname}/pages/refund-policy`,
      text: "Returns within 7 days of delivery.\n\nRefunds go back to the original payment method.",
    });
    expect(refunds.body["matched"]).toBe(true);
    await client.close();
  });

  it("makes a cart, changes it all or nothing, reads it with its checkout link; the shopper opens the link and checks out that cart", async () => {
    const { s, kurta, silk, cotton } = await catalogue();
    const client = await agent(s.hostname);
    const made = await tool(client, "update_cart", { add_items: [{ product_variant_id: kurta.variants[0], quantity: 2 }] });
    expect(made.isError).toBe(false);
    const cart = made.body["cart"];
    expect(cart["cart_id"]).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(cart["checkout_url"]).toBe(`http://${s.hostname}/cart/open/${cart["cart_id"]}`);
    expect(cart["lines"]).toEqual([expect.objectContaining({ product_variant_id: kurta.variants[0], quantity: 2, unit_price: expect.objectContaining({ amount: "1299.00" }), line_total: expect.objectContaining({ amount: "2598.00" }) })]);
    expect(cart["cost"]["total"]["amount"]).toBe("2598.00");
    const lineId = cart["lines"][0]["id"];
    const id = cart["cart_id"];

    // More than the stock, beside a change that would fit: neither applies.
    const refused = await tool(client, "update_cart", { cart_id: id, update_items: [{ id: lineId, quantity: 1 }], add_items: [{ product_variant_id: cotton.variants[0], quantity: 1 }] });
    expect(refused.isError).toBe(true);
    expect(refused.body["error"]).toMatchObject({ code: "CONFLICT", data: { reason: "insufficient_stock" } });
    expect((await tool(client, "get_cart", { cart_id: id })).body["cart"]["lines"]).toEqual([expect.objectContaining({ quantity: 2 })]);

    const changed = await tool(client, "update_cart", { cart_id: id, update_items: [{ id: lineId, quantity: 1 }], add_items: [{ product_variant_id: silk.variants[0], quantity: 1 }] });
    expect(changed.isError).toBe(false);
    expect(changed.body["cart"]["lines"].map((l: Json) => [l["product_title"], l["quantity"]])).toEqual([
      ["Cotton Kurta", 1],
      ["Banarasi Silk Saree", 1],
    ]);
    expect(changed.body["cart"]["cost"]["total"]["amount"]).toBe("13799.00");
    const wrongCode = await tool(client, "update_cart", { cart_id: id, discount_codes: ["NOPE-NOT-A-CODE"] });
    expect(wrongCode.body["error"]).toMatchObject({ code: "NOT_FOUND", data: { reason: "unknown_code" } });
    const coded = await tool(client, "update_cart", { cart_id: id, discount_codes: [s.discountCode], remove_line_ids: [lineId] });
    expect(coded.body["cart"]["discount_codes"]).toEqual([{ code: s.discountCode, applicable: true }]);
    expect(coded.body["cart"]["cost"]).toMatchObject({ subtotal: { amount: "12500.00" }, discount: { amount: "1250.00" }, total: { amount: "11250.00" } });

    const read = await tool(client, "get_cart", { cart_id: id });
    expect(read.structured).toEqual(read.body);
    expect(read.body["cart"]).toEqual(coded.body["cart"]);

    // The shopper's browser opens the link: the cart is shown, nothing changes on a GET.
    const link = new URL(read.body["cart"]["checkout_url"]);
    const browser = { host: s.hostname, "cf-connecting-ip": ip() };
    const page = await call(worker, `http://storefront.test${link.pathname}`, { headers: browser });
    expect(page.status).toBe(200);
    expect(page.headers.get("cache-control")).toBe("no-store");
    expect(page.headers.get("referrer-policy")).toBe("no-referrer");
    const html = await page.text();
    expect(html).toContain("Banarasi Silk Saree");
    expect(html).toContain("₹11,250.00");
    expect((await tool(client, "get_cart", { cart_id: id })).isError).toBe(false);
    // A cross-site page cannot hand the cart over; the shopper's own button does, to /checkout.
    const foreign = await call(worker, `http://storefront.test/api${link.pathname}`, { method: "POST", headers: { ...browser, "sec-fetch-site": "cross-site" }, redirect: "manual" });
    expect(foreign.status).toBe(403);
    const handed = await call(worker, `http://storefront.test/api${link.pathname}`, { method: "POST", headers: { ...browser, "sec-fetch-site": "same-origin" }, redirect: "manual" });
    expect(handed.status).toBe(303);
    expect(handed.headers.get("location")).toBe("/checkout");
    const cookie = /wc_cart=([^;]+)/.exec(handed.headers.get("set-cookie") ?? "")![1]!;
    expect(cookie).not.toBe(id);
    const checkout = await call(worker, "http://storefront.test/checkout", { headers: { ...browser, cookie: `wc_cart=${cookie}` } });
    expect(checkout.status).toBe(200);
    const checkoutHtml = await checkout.text();
    expect(checkoutHtml).toContain("1 × Banarasi Silk Saree · Emerald");
    expect(checkoutHtml).toContain("₹11,250.00");
    // The cart is the browser's now: the agent's id (and the link) no longer name it.
    expect((await tool(client, "get_cart", { cart_id: id })).body["error"]).toMatchObject({ code: "NOT_FOUND", data: { reason: "unknown_cart" } });
    expect((await call(worker, `http://storefront.test${link.pathname}`, { headers: browser })).status).toBe(404);
    const again = await call(worker, `http://storefront.test/api${link.pathname}`, { method: "POST", headers: { ...browser, "sec-fetch-site": "same-origin" }, redirect: "manual" });
    expect([again.status, again.headers.get("set-cookie")]).toEqual([303, null]);
    await client.close();
  });

  it("another store's cart id, or a made-up one, is not found there; its variants cannot be added", async () => {
    const a = await catalogue();
    const b = await catalogue();
    const atA = await agent(a.s.hostname);
    const atB = await agent(b.s.hostname);
    const id = (await tool(atA, "update_cart", { add_items: [{ product_variant_id: a.kurta.variants[0], quantity: 1 }] })).body["cart"]["cart_id"];
    for (const cartId of [id, "x".repeat(43), "short", "😀".repeat(30)]) {
      expect((await tool(atB, "get_cart", { cart_id: cartId })).body["error"], cartId).toMatchObject({ code: "NOT_FOUND", data: { reason: "unknown_cart" } });
      const change = await tool(atB, "update_cart", { cart_id: cartId, add_items: [{ product_variant_id: b.kurta.variants[0], quantity: 1 }] });
      expect(change.body["error"], cartId).toMatchObject({ code: "NOT_FOUND", data: { reason: "unknown_cart" } });
    }
    const draftVariant = await tool(atB, "update_cart", { add_items: [{ product_variant_id: b.draft.variants[0], quantity: 1 }] });
    expect(draftVariant.body["error"]).toMatchObject({ code: "NOT_FOUND", data: { reason: "not_for_sale" } });
    const foreignVariant = await tool(atB, "update_cart", { add_items: [{ product_variant_id: a.kurta.variants[0], quantity: 1 }] });
    expect(foreignVariant.body["error"]).toMatchObject({ code: "NOT_FOUND", data: { reason: "unknown_variant" } });
    // B's handoff link with A's cart id finds nothing either.
    expect((await call(worker, `http://storefront.test/cart/open/${id}`, { headers: { host: b.s.hostname } })).status).toBe(404);
    expect((await tool(atA, "get_cart", { cart_id: id })).body["cart"]["lines"]).toHaveLength(1);
    await atA.close();
    await atB.close();
  });
});

describe("the Storefront MCP's door", () => {
  it("a store behind its password is closed to agents (403, a JSON-RPC error), cookie or not", async () => {
    const s = await makeShop(db);
    await sql(s, "update store set storefront_password_hash = $2 where id = $1", [s.id, await hashPassword("open sesame 42")]);
    const res = await rpc(s.hostname, ip(), callOf("search_catalog", { query: "fixture" }));
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32001, data: { code: "FORBIDDEN", reason: "password_protected" } } });
    await expect(agent(s.hostname)).rejects.toThrow(/403|password/);
  });

  it("an unknown hostname is a 404 JSON-RPC error; GET and DELETE are 405", async () => {
    const res = await rpc(`nowhere-${crypto.randomUUID().slice(0, 8)}.shop.test`, ip(), callOf("search_catalog", { query: "x" }));
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: -32004, data: { reason: "unknown_host" } } });
    const s = await makeShop(db);
    for (const method of ["GET", "DELETE"]) {
      const r = await call(worker, "http://storefront.test/api/mcp", { method, headers: { host: s.hostname, accept: "text/event-stream" } });
      expect(r.status, method).toBe(405);
    }
  });

  it(`past ${SHOPPER_LIMITS.mcp.address.limit} calls a minute from one address: 429 before any database work, even for a hostname never looked up`, async () => {
    const host = `cold-mcp-${crypto.randomUUID().slice(0, 8)}.shop.test`;
    const from = ip();
    const { key, policy } = shopperKeys("mcp", host, clientOf(from)).address[0]!;
    await hit(limiter, key, policy, policy.limit);
    const trace = newTrace();
    const res = await rpc(host, from, callOf("search_catalog", { query: "kurta" }), { "x-commerce-trace": trace });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(await res.json()).toMatchObject({ jsonrpc: "2.0", error: { code: -32029, data: { reason: "rate_limited", retry_after: Number(res.headers.get("retry-after")) } } });
    const trips = await tripsOf(proxy, trace);
    expect({ turns: trips.turns, queries: trips.httpQueries, connections: trips.connections }).toEqual({ turns: 0, queries: 0, connections: 0 });
  });

  it(`discount codes through update_cart count as the cart page's: past ${WRONG_CODE_LIMITS.address.limit} wrong ones from an address, no code is looked up (429); a right one is given back`, async () => {
    const { s, kurta } = await catalogue();
    const from = ip();
    const wrong = wrongCodeKeys(s.hostname, clientOf(from)).address[0]!;
    const held = async () => wrong.policy.limit - (await peek(limiter, wrong.key, wrong.policy)).remaining - 1;
    const made = (await (await rpc(s.hostname, from, callOf("update_cart", { add_items: [{ product_variant_id: kurta.variants[0], quantity: 1 }] }))).json()) as Json;
    const id = made["result"]["structuredContent"]["cart"]["cart_id"];
    const right = (await (await rpc(s.hostname, from, callOf("update_cart", { cart_id: id, discount_codes: [s.discountCode] }))).json()) as Json;
    expect(right["result"]["structuredContent"]["cart"]["discount_codes"]).toEqual([{ code: s.discountCode, applicable: true }]);
    expect(await held()).toBe(0);
    await rpc(s.hostname, from, callOf("update_cart", { cart_id: id, discount_codes: ["WRONG-ONE"] }));
    expect(await held()).toBe(1);
    await hit(limiter, wrong.key, wrong.policy, wrong.policy.limit - 1);
    const trace = newTrace();
    const refused = await rpc(s.hostname, from, callOf("update_cart", { cart_id: id, discount_codes: [s.discountCode] }), { "x-commerce-trace": trace });
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ error: { code: -32029, data: { reason: "rate_limited" } } });
    expect((await tripsOf(proxy, trace)).turns).toBe(0);
    // The rest of the cart is the agent's to change as before.
    const other = (await (await rpc(s.hostname, from, callOf("get_cart", { cart_id: id }))).json()) as Json;
    expect(other["result"]["structuredContent"]["cart"]["lines"]).toHaveLength(1);
  });

  it("hostile bodies get a 4xx JSON-RPC error, never a 5xx: 2 MB, deep, a batch of 100, NUL bytes, not JSON, unknown tools and methods", async () => {
    const { s } = await catalogue();
    let deep: unknown = "x";
    for (let i = 0; i < 40; i++) deep = { a: deep };
    const cases: [string, unknown, number][] = [
      ["2 MB", callOf("search_catalog", { query: "k".repeat(2 * 1024 * 1024) }), 413],
      ["deep", callOf("search_catalog", { query: "kurta", context: deep }), 400],
      ["batch", Array.from({ length: 100 }, (_, i) => callOf("search_catalog", { query: "kurta" }, i)), 400],
      ["NUL", callOf("search_catalog", { query: "kur\u0000ta" }), 400],
      ["not JSON", "{ this is not json", 400],
      ["not a message", "42", 400],
    ];
    for (const [name, body, status] of cases) {
      const res = await rpc(s.hostname, ip(), body);
      expect(res.status, name).toBe(status);
      const answer = (await res.json()) as Json;
      expect(answer["jsonrpc"], name).toBe("2.0");
      expect(answer["error"]["code"], name).toBeLessThan(-32000 + 1);
      expect(answer["error"]["message"], name).toBeTruthy();
    }
    const unknownTool = await rpc(s.hostname, ip(), callOf("delete_store", {}));
    expect(unknownTool.status).toBeLessThan(500);
    const unknownAnswer = (await unknownTool.json()) as Json;
    expect(unknownAnswer["result"]).toMatchObject({ isError: true, content: [{ text: expect.stringContaining("Tool delete_store not found") }] });
    const unknownMethod = await rpc(s.hostname, ip(), { jsonrpc: "2.0", id: 7, method: "resources/list" });
    expect(unknownMethod.status).toBeLessThan(500);
    expect(((await unknownMethod.json()) as Json)["error"]["code"]).toBe(-32601);
    const text = await rpc(s.hostname, ip(), callOf("search_catalog", { query: "kurta" }), { "content-type": "text/plain" });
    expect(text.status).toBe(415);
  });

  it("round trips: a search, a product, the policies, a cart read and a cart change are one each, as the pages' (the host held)", async () => {
    const { s, kurta } = await catalogue();
    const from = ip();
    await rpc(s.hostname, from, callOf("search_catalog", { query: "warm" }));
    const traced = async (body: unknown) => {
      const trace = newTrace();
      const res = await rpc(s.hostname, from, body, { "x-commerce-trace": trace });
      const answer = (await res.json()) as Json;
      return { answer, turns: (await tripsOf(proxy, trace)).turns };
    };
    const search = await traced(callOf("search_catalog", { query: "kurta", filters: [{ available: true }, { price: { max: 2000 } }] }));
    expect(search.answer["result"]["isError"]).toBeUndefined();
    expect(search.answer["result"]["structuredContent"]["products"]).toHaveLength(1);
    expect(search.turns).toBe(1);
    const made = await traced(callOf("update_cart", { add_items: [{ product_variant_id: kurta.variants[0], quantity: 1 }] }));
    expect(made.turns).toBe(1);
    const id = made.answer["result"]["structuredContent"]["cart"]["cart_id"];
    const changed = await traced(callOf("update_cart", { cart_id: id, add_items: [{ product_variant_id: kurta.variants[0], quantity: 1 }], update_items: [] }));
    expect(changed.answer["result"]["structuredContent"]["cart"]["lines"][0]["quantity"]).toBe(2);
    expect(changed.turns).toBe(1);
    expect((await traced(callOf("get_cart", { cart_id: id }))).turns).toBe(1);
    expect((await traced(callOf("get_product", { product_id: kurta.id }))).turns).toBe(1);
    expect((await traced(callOf("get_store_policies", { query: "refunds" }))).turns).toBe(1);
  });
});

