import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { hashPassword } from "#shared/auth/password";
import { SHOPPER_LIMITS } from "#shared/limits/shopper";
import { generateSigningKey } from "#shared/ucp/keys";
import { UCP_VERSION } from "#shared/ucp/profile";
import { signMessage } from "#shared/ucp/signatures";
import { newTrace, tripsOf } from "../../test/proxy";
import { cartOf, Shopper } from "../../test/storefront";
import { ADDRESS, BASE, fetched, ip, paths, published, ready, send, shop, sql, total, type Json } from "../../test/ucp";

/**
 * UCP checkout sessions over REST (issue 26 item 3; docs/ucp.md) through the real Worker and Postgres: the
 * messages and their paths, the status machine, totals equal to the storefront cart's for the same lines,
 * another store's domain, the switch, cancel, the limit, hostile bodies.
 */
const proxy = (env as unknown as { DB_WS_PROXY: string }).DB_WS_PROXY;

describe("UCP checkout sessions over REST", () => {
  it("creates a session that says, by path, what is missing; completing the request makes it ready with the cart's totals", async () => {
    const s = await shop();
    const requestId = crypto.randomUUID();
    const created = await send(s.hostname, "POST", BASE, { line_items: [{ item: { id: s.variantId }, quantity: 2 }] }, { "request-id": requestId });
    expect(created.status).toBe(201);
    expect(created.headers.get("request-id")).toBe(requestId);
    const b = created.body;
    expect(b["ucp"]).toEqual({ version: UCP_VERSION, capabilities: expect.objectContaining({ "dev.ucp.shopping.checkout": [{ version: UCP_VERSION }] }), payment_handlers: {} });
    expect(b["status"]).toBe("incomplete");
    expect(b["currency"]).toBe("INR");
    expect(b["line_items"]).toEqual([{ id: "li_1", item: { id: s.variantId, title: expect.any(String), price: 1000 }, quantity: 2, totals: [{ type: "subtotal", amount: 2000 }, { type: "total", amount: 2000 }] }]);
    expect(paths(b)).toEqual(["$.buyer.email missing", "$.fulfillment.methods[0].destinations missing"]);
    expect(b["messages"]).toContainEqual({ type: "info", content: "Prices include GST." });
    expect(b["totals"]).toEqual([{ type: "subtotal", amount: 2000, display_text: "Subtotal (GST included)" }, {
      type: "total",
      amount: 2000,
      display_text: "Total",
      // ₹20.00 inclusive of 18 % GST holds 305 paise, as checkout computes it (checkout.test.ts).
      lines: [{ display_text: "Excl. GST", amount: 1695 }, { display_text: "GST", amount: 305 }],
    }]);
    expect(Date.parse(b["expires_at"]) - Date.now()).toBeGreaterThan(5.9 * 3600_000);
    expect(b["continue_url"]).toBe(`https://${s.hostname}/cart/session/${b["id"]}`);
    expect(b["links"]).toEqual([]);

    const updated = await send(s.hostname, "PUT", `${BASE}/${b["id"]}`, ready(s.variantId, 2, [s.discountCode]));
    expect(updated.status).toBe(200);
    expect(updated.body["status"]).toBe("ready_for_complete");
    expect(paths(updated.body)).toEqual([]);

    // The storefront cart with the same lines and code: the same subtotal, discount and total before shipping.
    const shopper = new Shopper(s.hostname);
    await shopper.add(s.variantId, 2);
    const cart = cartOf(await shopper.applyCode(s.discountCode));
    expect(cart.discount).toBeGreaterThan(0);
    expect(total(updated.body, "subtotal")).toBe(cart.subtotal);
    expect(total(updated.body, "discount")).toBe(-cart.discount);
    expect(total(updated.body, "fulfillment")).toBe(5000);
    expect(total(updated.body, "total")).toBe(cart.total + 5000);
    expect(updated.body["discounts"]["applied"]).toEqual([{ code: s.discountCode, title: expect.any(String), amount: cart.discount, method: "across" }]);
    const sum = (updated.body["totals"] as Json[]).filter((t) => t["type"] !== "total").reduce((a, t) => a + t["amount"], 0);
    expect(sum).toBe(total(updated.body, "total"));

    // Read again: the same answer; a full replacement that leaves the buyer out clears it.
    const read = await send(s.hostname, "GET", `${BASE}/${b["id"]}`);
    expect(read.body).toEqual(updated.body);
    // The store's published policy pages are the checkout's links; a draft is not.
    await sql(s, "insert into page (store_id, title, handle, body, status, published_at) values ($1, 'Refund policy', 'refund-policy', 'Returns within 7 days.', 'published', now()), ($1, 'Privacy', 'privacy', 'We keep little.', 'draft', null)", [s.id]);
    expect((await send(s.hostname, "GET", `${BASE}/${b["id"]}`)).body["links"]).toEqual([{ type: "refund_policy", url: `https://${s.hostname}/pages/refund-policy`, title: "Refund policy" }]);
    const cleared = await send(s.hostname, "PUT", `${BASE}/${b["id"]}`, { ...ready(s.variantId, 2), buyer: undefined });
    expect(cleared.body["status"]).toBe("incomplete");
    expect(paths(cleared.body)).toEqual(["$.buyer.email missing"]);
  });

  it("names an unknown, unpublished or sold-out item, a bad address field and a dead code at their paths", async () => {
    const s = await shop();
    await sql(s, "update inventory_level set on_hand = 1 where variant_id = $1", [s.variantId]);
    const body = {
      line_items: [
        { item: { id: crypto.randomUUID() }, quantity: 1 },
        { item: { id: "not-a-uuid" }, quantity: 1 },
        { item: { id: s.variantId }, quantity: 3 },
      ],
      buyer: { email: "not an email" },
      fulfillment: { methods: [{ type: "shipping", destinations: [{ ...ADDRESS, postal_code: "12", address_country: "US" }] }] },
      discounts: { codes: ["NOSUCHCODE"] },
    };
    const r = await send(s.hostname, "POST", BASE, body);
    expect(r.status).toBe(201);
    expect(r.body["status"]).toBe("incomplete");
    expect(paths(r.body)).toEqual([
      "$.line_items[0].item.id item_unavailable",
      "$.line_items[1].item.id item_unavailable",
      "$.line_items[2].quantity out_of_stock",
      "$.buyer.email invalid",
      "$.fulfillment.methods[0].destinations[0].postal_code invalid",
      "$.fulfillment.methods[0].destinations[0].address_country address_undeliverable",
    ]);
    expect(r.body["messages"]).toContainEqual({ type: "warning", code: "discount_code_invalid", path: "$.discounts.codes[0]", content: expect.any(String) });
    // Only what can be priced counts: the sold-out line's price, not the unknown ones.
    expect(total(r.body, "subtotal")).toBe(3000);

    // A quantity past a cart line's limit is named and not priced, however large (never a 5xx).
    await sql(s, "update product_variant set price_minor = 100000000000 where id = $1", [s.variantId]);
    const huge = await send(s.hostname, "POST", BASE, { line_items: Array.from({ length: 100 }, () => ({ item: { id: s.variantId }, quantity: 1_000_000 })) });
    expect(huge.status).toBe(201);
    expect(paths(huge.body)[0], JSON.stringify(huge.body["messages"][0])).toBe("$.line_items[0].quantity invalid");
    expect(total(huge.body, "subtotal")).toBe(0);

    await sql(s, "update product set status = 'draft' where id = $1", [s.productId]);
    const later = await send(s.hostname, "GET", `${BASE}/${r.body["id"]}`);
    expect(paths(later.body)[2]).toBe("$.line_items[2].item.id item_unavailable");
  });

  it("is its store's and its agent's only; off, every path is 404", async () => {
    const a = await shop();
    const b = await shop();
    const created = await send(a.hostname, "POST", BASE, ready(a.variantId, 1));
    const id = created.body["id"] as string;
    expect(created.body["status"]).toBe("ready_for_complete");
    for (const [method, path, body] of [["GET", `${BASE}/${id}`], ["PUT", `${BASE}/${id}`, ready(a.variantId, 1)], ["POST", `${BASE}/${id}/cancel`]] as const) {
      const other = await send(b.hostname, method, path, body);
      expect(other.status, `${method} ${path}`).toBe(404);
      expect(other.body).toEqual({ ucp: { version: UCP_VERSION, status: "error" }, messages: [expect.objectContaining({ type: "error", code: "not_found", severity: "unrecoverable" })] });
      const otherAgent = await send(a.hostname, method, path, body, { "ucp-agent": 'profile="https://other-agent.example.com/.well-known/ucp"' });
      expect(otherAgent.status, `another agent: ${method} ${path}`).toBe(404);
    }
    // Another store's variant is unknown here.
    const foreign = await send(b.hostname, "POST", BASE, ready(a.variantId, 1));
    expect(paths(foreign.body)).toEqual(["$.line_items[0].item.id item_unavailable"]);

    await sql(a, "update store set agentic_checkout = false where id = $1", [a.id]);
    for (const [method, path, body] of [["POST", BASE, ready(a.variantId, 1)], ["GET", `${BASE}/${id}`], ["PUT", `${BASE}/${id}`, ready(a.variantId, 1)], ["POST", `${BASE}/${id}/cancel`]] as const) {
      expect((await send(a.hostname, method, path, body)).status, `${method} ${path}`).toBe(404);
    }
    // A request refused for its shape is 404 too while off.
    for (const [body, headers] of [[{ line_items: "lots" }, {}], [ready(a.variantId, 1), { "ucp-agent": "" }], ["x=1", { "content-type": "application/x-www-form-urlencoded" }], [ready(a.variantId, 1), { "idempotency-key": "bad key" }]] as const) {
      const r = await send(a.hostname, "POST", BASE, body, headers);
      expect(r.status, JSON.stringify(body)).toBe(404);
      expect(r.body["messages"][0]["code"]).toBe("not_found");
    }
    expect((await sql(a, "select status from ucp_checkout_session where id = $1", [id]))[0].status).toBe("ready_for_complete");
  });

  it("cancels once: a cancelled session cannot be cancelled or changed again", async () => {
    const s = await shop();
    const id = (await send(s.hostname, "POST", BASE, ready(s.variantId, 1))).body["id"] as string;
    const cancelled = await send(s.hostname, "POST", `${BASE}/${id}/cancel`, {});
    expect(cancelled.status).toBe(200);
    expect(cancelled.body["status"]).toBe("canceled");
    expect(cancelled.body["continue_url"]).toBeUndefined();
    for (const [method, path, body] of [["POST", `${BASE}/${id}/cancel`, {}], ["PUT", `${BASE}/${id}`, ready(s.variantId, 2)]] as const) {
      const again = await send(s.hostname, method, path, body);
      expect(again.status, `${method} ${path}`).toBe(409);
      expect(again.body).toEqual({ code: "invalid_state", content: expect.any(String) });
    }
    expect((await send(s.hostname, "GET", `${BASE}/${id}`)).body["status"]).toBe("canceled");
  });

  it("requires UCP-Agent; refuses hostile bodies with 4xx in the protocol's shape, never a 5xx", async () => {
    const s = await shop();
    const missing = await send(s.hostname, "POST", BASE, ready(s.variantId, 1), { "ucp-agent": "" });
    expect(missing.status).toBe(400);
    expect(missing.headers.get("request-id")).toMatch(/^[0-9a-f-]{36}$/);
    expect(missing.body["code"]).toBe("invalid_profile_url");
    const plainHttp = await send(s.hostname, "GET", `${BASE}/${crypto.randomUUID()}`, undefined, { "ucp-agent": 'profile="http://agent.example.com/p"' });
    expect(plainHttp.status).toBe(400);
    // The agent's profile is fetched and read: unreachable 424, not a profile or another version 422.
    const tag = crypto.randomUUID().slice(0, 8);
    for (const [agentHost, status, code] of [[`unreachable.${tag}.example.com`, 424, "profile_unreachable"], [`malformed.${tag}.example.com`, 422, "profile_malformed"], [`old.${tag}.example.com`, 422, "version_unsupported"]] as const) {
      const r = await send(s.hostname, "POST", BASE, ready(s.variantId, 1), { "ucp-agent": `profile="https://${agentHost}/.well-known/ucp"` });
      expect([r.status, r.body["code"]], agentHost).toEqual([status, code]);
    }
    // A profile read well is held: the next request of the agent fetches nothing.
    const agent = `https://fresh.${tag}.example.com/.well-known/ucp`;
    await send(s.hostname, "POST", BASE, ready(s.variantId, 1), { "ucp-agent": `profile="${agent}"` });
    await send(s.hostname, "POST", BASE, ready(s.variantId, 1), { "ucp-agent": `profile="${agent}"` });
    expect(fetched.filter((u) => u === agent)).toHaveLength(1);

    let deep: unknown = 1;
    for (let i = 0; i < 200; i++) deep = [deep];
    const hostile: [unknown, number][] = [
      ["{", 400],
      [{ line_items: "lots" }, 400],
      [{ line_items: [{ item: { id: 5 }, quantity: 1 }] }, 400],
      [{ line_items: [{ item: { id: s.variantId }, quantity: 0 }] }, 400],
      [{ line_items: [{ item: { id: s.variantId }, quantity: 1.5 }] }, 400],
      [{ line_items: [{ item: { id: s.variantId }, quantity: 1 }], buyer: { email: ["x"] } }, 400],
      [{ line_items: Array.from({ length: 101 }, () => ({ item: { id: s.variantId }, quantity: 1 })) }, 400],
      [{ line_items: [{ item: { id: "x".repeat(5000) }, quantity: 1 }] }, 400],
      [{ line_items: [], deep }, 400],
      [JSON.stringify({ line_items: [{ item: { id: "a\u0000b" }, quantity: 1 }] }), 400],
      [JSON.stringify({ line_items: [], pad: "x".repeat(70 * 1024) }), 413],
    ];
    for (const [body, status] of hostile) {
      const r = await send(s.hostname, "POST", BASE, body);
      expect(r.status, JSON.stringify(body).slice(0, 80)).toBe(status);
      expect(typeof r.body["code"]).toBe("string");
      expect(typeof r.body["content"]).toBe("string");
    }
    const wrongType = await send(s.hostname, "POST", BASE, "x=1", { "content-type": "application/x-www-form-urlencoded" });
    expect(wrongType.status).toBe(415);
    expect((await send(s.hostname, "GET", `${BASE}/not-an-id`)).status).toBe(404);
    // An empty request is the session's business: incomplete, not an error.
    const empty = await send(s.hostname, "POST", BASE, { line_items: [] });
    expect(empty.status).toBe(201);
    expect(paths(empty.body)[0]).toBe("$.line_items missing");
  });

  it("Idempotency-Key: the same key and body answer the first answer again; another body is 409 and runs nothing", async () => {
    const s = await shop();
    const key = crypto.randomUUID();
    const first = await send(s.hostname, "POST", BASE, ready(s.variantId, 1), { "idempotency-key": key });
    expect(first.status).toBe(201);
    const again = await send(s.hostname, "POST", BASE, ready(s.variantId, 1), { "idempotency-key": key });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    const other = await send(s.hostname, "POST", BASE, ready(s.variantId, 2), { "idempotency-key": key });
    expect(other.status).toBe(409);
    expect(other.body["code"]).toBe("idempotency_conflict");
    // Another agent's key of the same name is its own.
    const otherAgent = await send(s.hostname, "POST", BASE, ready(s.variantId, 2), { "idempotency-key": key, "ucp-agent": 'profile="https://other-agent.example.com/.well-known/ucp"' });
    expect(otherAgent.status).toBe(201);
    expect(await sql(s, "select count(*)::int as n from ucp_checkout_session where store_id = $1 and agent_profile like '%agent.example.com%'", [s.id])).toEqual([{ n: 2 }]);

    const id = first.body["id"] as string;
    const k2 = crypto.randomUUID();
    const put = await send(s.hostname, "PUT", `${BASE}/${id}`, ready(s.variantId, 3), { "idempotency-key": k2 });
    expect(put.status).toBe(200);
    expect((await send(s.hostname, "PUT", `${BASE}/${id}`, ready(s.variantId, 3), { "idempotency-key": k2 })).body).toEqual(put.body);
    expect((await send(s.hostname, "PUT", `${BASE}/${id}`, ready(s.variantId, 4), { "idempotency-key": k2 })).status).toBe(409);
    // The same key on create is another operation: 409.
    expect((await send(s.hostname, "POST", BASE, ready(s.variantId, 3), { "idempotency-key": k2 })).status).toBe(409);
    expect((await send(s.hostname, "GET", `${BASE}/${id}`)).body["line_items"][0]["quantity"]).toBe(3);

    // Racing requests with one key make one session.
    const k3 = crypto.randomUUID();
    const raced = await Promise.all([1, 2, 3].map(() => send(s.hostname, "POST", BASE, ready(s.variantId, 1), { "idempotency-key": k3 })));
    expect(raced.map((r) => r.status).sort()).toContain(201);
    for (const r of raced) expect([201, 409]).toContain(r.status);
    expect(await sql(s, "select count(*)::int as n from ucp_checkout_session where store_id = $1 and agent_profile like '%agent.example.com%'", [s.id])).toEqual([{ n: 3 }]);
    expect((await send(s.hostname, "POST", BASE, ready(s.variantId, 1), { "idempotency-key": "bad key" })).status).toBe(400);
  });

  it("a store behind its password does not sell to agents: 403 in the protocol's shape", async () => {
    const s = await shop();
    await sql(s, "update store set storefront_password_hash = $2 where id = $1", [s.id, await hashPassword("open sesame 42")]);
    for (const [method, path, body] of [["POST", BASE, ready(s.variantId, 1)], ["GET", `${BASE}/${crypto.randomUUID()}`]] as const) {
      const r = await send(s.hostname, method, path, body);
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.body).toEqual({ code: expect.any(String), content: expect.any(String) });
    }
    expect(await sql(s, "select count(*)::int as n from ucp_checkout_session where store_id = $1 and agent_profile like '%agent.example.com%'", [s.id])).toEqual([{ n: 0 }]);
  });

  it("round trips: two units per operation (the switch with the session or the catalogue, then the write or the catalogue)", async () => {
    const s = await shop();
    await send(s.hostname, "GET", `${BASE}/${crypto.randomUUID()}`); // the host and its facts held
    const turns = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
      const trace = newTrace();
      const r = await send(s.hostname, method, path, body, { "x-commerce-trace": trace, ...headers });
      return { status: r.status, body: r.body, turns: (await tripsOf(proxy, trace)).turns };
    };
    const created = await turns("POST", BASE, ready(s.variantId, 1, [s.discountCode]));
    const id = created.body["id"] as string;
    expect([created.status, created.turns]).toEqual([201, 2]);
    expect((await turns("GET", `${BASE}/${id}`)).turns).toBe(2);
    expect((await turns("PUT", `${BASE}/${id}`, ready(s.variantId, 2))).turns).toBe(2);
    // With an Idempotency-Key: the key read first, its answer stored after; a replay is one.
    const key = crypto.randomUUID();
    expect((await turns("PUT", `${BASE}/${id}`, ready(s.variantId, 3), { "idempotency-key": key })).turns).toBe(4);
    expect((await turns("PUT", `${BASE}/${id}`, ready(s.variantId, 3), { "idempotency-key": key })).turns).toBe(1);
    expect((await turns("POST", `${BASE}/${id}/cancel`, {})).turns).toBe(2);
  });

  it("a signed request is verified with the agent's published key: a good one served, a bad one refused with its code", async () => {
    const s = await shop();
    const { publicJwk, privateJwk } = await generateSigningKey();
    published.push(publicJwk as unknown as Record<string, unknown>);
    const key = { kid: publicJwk.kid, privateKey: await crypto.subtle.importKey("jwk", privateJwk, { name: "ECDSA", namedCurve: "P-256" }, false, ["sign"]) };
    const agent = `profile="https://signed.${crypto.randomUUID().slice(0, 8)}.example.com/.well-known/ucp"`;
    const body = JSON.stringify(ready(s.variantId, 1));
    const headers = { "content-type": "application/json", "ucp-agent": agent, "idempotency-key": crypto.randomUUID() };
    const signature = await signMessage({ method: "POST", url: `https://${s.hostname}${BASE}`, headers: new Headers(headers), body: new TextEncoder().encode(body) }, key);
    const good = await send(s.hostname, "POST", BASE, body, { ...headers, ...signature });
    expect(good.status).toBe(201);
    const tampered = await send(s.hostname, "POST", BASE, body.replace('"quantity":1', '"quantity":2'), { ...headers, ...signature, "idempotency-key": headers["idempotency-key"] });
    expect([tampered.status, tampered.body["code"]]).toEqual([400, "digest_mismatch"]);
    const otherPath = await send(s.hostname, "POST", `${BASE}/${good.body["id"]}/cancel`, body, { ...headers, ...signature });
    expect([otherPath.status, otherPath.body["code"]]).toEqual([401, "signature_invalid"]);
    const stranger = await generateSigningKey();
    const strangerKey = { kid: stranger.publicJwk.kid, privateKey: await crypto.subtle.importKey("jwk", stranger.privateJwk, { name: "ECDSA", namedCurve: "P-256" }, false, ["sign"]) };
    const unknown = await signMessage({ method: "POST", url: `https://${s.hostname}${BASE}`, headers: new Headers(headers), body: new TextEncoder().encode(body) }, strangerKey);
    expect((await send(s.hostname, "POST", BASE, body, { ...headers, ...unknown })).body["code"]).toBe("key_not_found");
    // Unsigned requests from the same agent are served (signing is a SHOULD).
    expect((await send(s.hostname, "GET", `${BASE}/${good.body["id"]}`, undefined, { "ucp-agent": agent })).status).toBe(200);
  });

  it("counts every call per address before any database work: past the ucp door's limit, 429 with Retry-After", async () => {
    const s = await shop();
    const from = ip();
    const limit = SHOPPER_LIMITS.ucp.address.limit;
    const id = crypto.randomUUID();
    for (let i = 0; i < limit; i++) await send(s.hostname, "GET", `${BASE}/${id}`, undefined, { "cf-connecting-ip": from });
    const trace = newTrace();
    const refused = await send(s.hostname, "GET", `${BASE}/${id}`, undefined, { "cf-connecting-ip": from, "x-commerce-trace": trace });
    expect(refused.status).toBe(429);
    expect((await tripsOf(proxy, trace)).turns).toBe(0);
    expect(refused.body["code"]).toBe("rate_limited");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    // Every operation is the same door: completing and cancelling are refused there too, before any database work.
    for (const op of ["complete", "cancel"]) {
      const t = newTrace();
      const r = await send(s.hostname, "POST", `${BASE}/${id}/${op}`, {}, { "cf-connecting-ip": from, "x-commerce-trace": t });
      expect([r.status, (await tripsOf(proxy, t)).turns]).toEqual([429, 0]);
    }
  });
});
