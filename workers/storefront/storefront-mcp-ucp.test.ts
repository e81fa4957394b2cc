import { env } from "cloudflare:workers";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { describe, expect, it } from "vitest";
import { hashPassword } from "#shared/auth/password";
import { clientOf } from "#shared/limits/address";
import { hit, peek } from "#shared/limits/limit";
import type { RateLimiter } from "#shared/limits/rate-limiter";
import { shopperKeys } from "#shared/limits/shopper";
import { deriveLocalSecret, localConfirmationFields } from "#shared/payments/local-protocol";
import { generateSigningKey } from "#shared/ucp/keys";
import { UCP_VERSION } from "#shared/ucp/profile";
import { signMessage } from "#shared/ucp/signatures";
import { mcpAgent, rpcPost } from "../../test/mcp-agent";
import { newTrace, tripsOf } from "../../test/proxy";
import { Shopper } from "../../test/storefront";
import { BASE, ip, ready, send, shop, sql, total, type Json } from "../../test/ucp";

/**
 * UCP's checkout tools on the Storefront MCP (issue 26 item 3; docs/storefront-mcp.md "UCP checkout tools";
 * the specification's MCP binding) through the real Worker and Postgres, with the SDK's own client: a checkout
 * created, updated and completed, the buyer paying on the order's page through the local gateway, the
 * checkout then completed with its order; the binding's errors as JSON-RPC errors with their HTTP status;
 * replays and conflicts of `meta["idempotency-key"]`; another store's and another agent's checkout; the switch;
 * the password.
 */
const PROFILE = "https://agent.example.com/.well-known/ucp";
const OTHER_PROFILE = "https://another-agent.example.com/.well-known/ucp";
const LOCAL_SECRET = "local-gateway-test-secret";
const proxy = (env as unknown as { DB_WS_PROXY: string }).DB_WS_PROXY;
const limiter = (env as unknown as { RATE_LIMITER: DurableObjectNamespace<RateLimiter> }).RATE_LIMITER;

/** The keys a signing platform publishes (host `signed.…`). */
const published: Record<string, unknown>[] = [];
/** The test's agent platforms (the UCP_AGENT_FETCH binding, development and test only): a profile at our version for any URL. */
const platforms = {
  fetch: async (url: string) =>
    Response.json({ ucp: { version: UCP_VERSION, services: {}, capabilities: {}, payment_handlers: {} }, keys: new URL(url).host.startsWith("signed.") ? published : [] }),
};

const agent = (host: string, from = ip()) => mcpAgent(host, from, { UCP_AGENT_FETCH: platforms });

/**
 * The answers shared/ucp/checkout-mcp.node.test.ts validates against the specification's schemas (workerd cannot
 * compile them), recorded from these flows; a live answer must keep their shape (its fields, arrays aside).
 */
const recorded = (
  JSON.parse(Object.values(import.meta.glob("../../test/fixtures/ucp/recorded/mcp-checkout-tools.json", { query: "?raw", import: "default", eager: true }))[0] as string) as { calls: Json[] }
).calls;
const shape = (v: unknown): unknown =>
  Array.isArray(v) ? "array" : v && typeof v === "object" ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shape(x)]).sort(([a], [b]) => String(a).localeCompare(String(b)))) : typeof v;
const recordedAnswer = (note: string) => {
  const r = recorded.find((c) => c["note"] === note)!["response"];
  return r["error"] ? { error: r["error"] } : r["result"]["structuredContent"];
};

const meta = (key?: string, profile = PROFILE) => ({ "ucp-agent": { profile }, ...(key ? { "idempotency-key": key } : {}) });

/** A tool's answer through the SDK's client (which checks structuredContent against the tool's outputSchema). */
async function tool(client: Client, name: string, args: Record<string, unknown>) {
  const r = await client.callTool({ name, arguments: args });
  const text = JSON.parse((r.content as { text: string }[])[0]!.text) as Json;
  expect(r.structuredContent).toEqual(text);
  return { body: text, isError: r.isError === true, meta: r._meta };
}

/** One raw JSON-RPC POST: the errors, whose HTTP status the SDK's client turns into an exception. */
async function rpc(host: string, name: string, args: unknown, headers: Record<string, string> = {}, body = JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name, arguments: args } })) {
  const res = await rpcPost(host, ip(), body, headers, { UCP_AGENT_FETCH: platforms });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Json };
}

describe("UCP checkout tools on the Storefront MCP", () => {
  it("are listed with the binding's arguments (meta required; idempotency-key required on complete and cancel) and an outputSchema", async () => {
    const s = await shop();
    const client = await agent(s.hostname);
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    for (const name of ["create_checkout", "get_checkout", "update_checkout", "complete_checkout", "cancel_checkout"]) {
      const t = byName[name]!;
      expect(t.description!.length, name).toBeGreaterThan(100);
      expect(t.inputSchema.required, name).toContain("meta");
      expect(t.outputSchema?.type, name).toBe("object");
      const metaSchema = (t.inputSchema.properties as Json)["meta"];
      expect(metaSchema.required, name).toEqual(name === "complete_checkout" || name === "cancel_checkout" ? ["ucp-agent", "idempotency-key"] : ["ucp-agent"]);
    }
    expect(byName["complete_checkout"]!.description).toContain("continue_url");
    expect(byName["update_checkout"]!.inputSchema.required).toEqual(["meta", "id", "checkout"]);
    await client.close();
  });

  it("create → update → complete: requires_escalation with the order's page; the buyer pays there; get_checkout answers completed with the order", async () => {
    const s = await shop();
    const client = await agent(s.hostname);
    const created = await tool(client, "create_checkout", { meta: meta(), checkout: { line_items: [{ item: { id: s.variantId }, quantity: 2 }] } });
    expect(created.isError).toBe(false);
    expect(created.body["status"]).toBe("incomplete");
    const id = created.body["id"] as string;
    expect((created.body["messages"] as Json[]).filter((m) => m["type"] === "error").map((m) => m["path"])).toEqual(["$.buyer.email", "$.fulfillment.methods[0].destinations"]);
    expect(created.body["continue_url"]).toBe(`https://${s.hostname}/cart/session/${id}`);
    // The session keeps the domain it was made on (its order updates name the order's page there).
    expect((await sql(s, "select host from ucp_checkout_session where id = $1", [id]))[0].host).toBe(s.hostname.toLowerCase());

    const updated = await tool(client, "update_checkout", { meta: meta(), id, checkout: ready(s.variantId, 2) });
    expect(updated.body["status"]).toBe("ready_for_complete");
    // The same checkout as REST answers it to the same agent: one session code, two transports.
    expect((await send(s.hostname, "GET", `${BASE}/${id}`)).body).toEqual(updated.body);

    const key = crypto.randomUUID();
    const done = await tool(client, "complete_checkout", { meta: meta(key), id, checkout: { payment: {} } });
    const b = done.body;
    expect(b["status"]).toBe("requires_escalation");
    const [order] = await sql(s, "select id, channel, payment_status, total from shop_order where channel = 'ucp'");
    expect(order).toMatchObject({ channel: "ucp", payment_status: "unpaid" });
    expect(Number(order.total)).toBe(total(updated.body, "total"));
    expect(b["continue_url"]).toMatch(new RegExp(`^https://${s.hostname.replace(/\./g, "\\.")}/orders/${order.id}\\?k=[A-Za-z0-9_-]{43}$`));
    expect(b["messages"]).toContainEqual(expect.objectContaining({ type: "error", severity: "requires_buyer_input" }));
    expect(shape(b)).toEqual(shape(recordedAnswer("completed: the order placed, requires_escalation with the order's page")));

    // The same key and arguments: the first answer again, marked, and still one order.
    const replay = await tool(client, "complete_checkout", { meta: meta(key), id, checkout: { payment: {} } });
    expect(replay.body).toEqual(b);
    expect(replay.meta).toEqual({ "idempotent-replayed": true });
    expect(await sql(s, "select count(*)::int as n from shop_order where channel = 'ucp'")).toEqual([{ n: 1 }]);
    // The same key with other arguments: a protocol error (409), nothing run.
    const conflict = await rpc(s.hostname, "complete_checkout", { meta: meta(key), id, checkout: { payment: { instruments: [] } } });
    expect(conflict.status).toBe(409);
    expect(conflict.body).toMatchObject({ jsonrpc: "2.0", id: 7, error: { code: -32000, data: { code: "idempotency_conflict" } } });
    expect(shape({ error: conflict.body["error"] })).toEqual(shape(recordedAnswer("the same idempotency-key with other arguments")));
    // A placed checkout cannot change: invalid_state, a protocol error as over REST.
    const changed = await rpc(s.hostname, "update_checkout", { meta: meta(), id, checkout: ready(s.variantId, 1) });
    expect([changed.status, changed.body["error"]["code"], changed.body["error"]["data"]["code"]]).toEqual([409, -32000, "invalid_state"]);

    // The buyer follows continue_url and pays at the store's gateway (the local one).
    const link = new URL(b["continue_url"]);
    const buyer = new Shopper(s.hostname);
    const paying = await buyer.send("POST", `/api/checkout/${order.id}/pay${link.search}`, {}, { "sec-fetch-site": "same-origin" });
    expect(paying.status).toBe(201);
    const ref = decodeURIComponent(String((paying.body["payment"] as Json)["redirectUrl"]).split("/-gateway/pay/")[1]!);
    const fields = (await localConfirmationFields(ref, "captured", await deriveLocalSecret(LOCAL_SECRET, s.id)))!;
    expect((await buyer.send("POST", `/api/checkout/${order.id}/confirm${link.search}`, fields)).body["order"]).toMatchObject({ paymentStatus: "paid" });

    const after = await tool(client, "get_checkout", { meta: meta(), id });
    expect(after.body["status"]).toBe("completed");
    expect(after.body["order"]).toEqual({ id: order.id, label: expect.stringMatching(/^#\d+$/), permalink_url: b["continue_url"] });
    expect(after.body["continue_url"]).toBeUndefined();
    expect(shape(after.body)).toEqual(shape(recordedAnswer("paid: completed with its order")));
    await client.close();
  });

  it("the binding's protocol errors: no meta[\"ucp-agent\"], no idempotency-key on complete or cancel, an id inside the checkout, a bad shape", async () => {
    const s = await shop();
    const created = await rpc(s.hostname, "create_checkout", { meta: meta(), checkout: ready(s.variantId, 1) });
    expect(created.status).toBe(200);
    const id = created.body["result"]["structuredContent"]["id"] as string;

    const noAgent = await rpc(s.hostname, "create_checkout", { checkout: ready(s.variantId, 1) });
    expect(noAgent.status).toBe(400);
    expect(noAgent.body).toMatchObject({ id: 7, error: { code: -32001, data: { code: "invalid_profile_url", content: expect.stringContaining('meta["ucp-agent"].profile') } } });
    const notHttps = await rpc(s.hostname, "get_checkout", { meta: meta(undefined, "http://agent.example.com/profile"), id });
    expect([notHttps.status, notHttps.body["error"]["code"], notHttps.body["error"]["data"]["code"]]).toEqual([400, -32001, "invalid_profile_url"]);
    expect(notHttps.body["error"]["data"]["content"]).toMatch(/^meta\["ucp-agent"\]\.profile: .*https/);

    for (const name of ["complete_checkout", "cancel_checkout"]) {
      const noKey = await rpc(s.hostname, name, { meta: meta(), id });
      expect(noKey.status, name).toBe(400);
      expect(noKey.body["error"], name).toMatchObject({ code: -32602, data: { code: "invalid_request", content: expect.stringContaining('$.meta["idempotency-key"]') } });
    }
    const withId = await rpc(s.hostname, "update_checkout", { meta: meta(), id, checkout: { ...ready(s.variantId, 1), id } });
    expect([withId.status, withId.body["error"]["data"]["code"]]).toEqual([400, "invalid_request"]);
    expect(withId.body["error"]["data"]["content"]).toMatch(/^\$\.checkout\.id: must not be sent/);
    const badQuantity = await rpc(s.hostname, "create_checkout", { meta: meta(), checkout: { line_items: [{ item: { id: s.variantId }, quantity: 0 }] } });
    expect(badQuantity.body["error"]["data"]["content"]).toMatch(/^\$\.checkout\.line_items\[0\]\.quantity: /);
    // None of it changed the session.
    expect((await sql(s, "select status, line_items from ucp_checkout_session where id = $1", [id]))[0]).toMatchObject({ status: "ready_for_complete" });
  });

  it("another store's or another agent's checkout is not_found (the protocol's error response as a result); a made-up id too", async () => {
    const s = await shop();
    const other = await shop();
    const client = await agent(s.hostname);
    const { body } = await tool(client, "create_checkout", { meta: meta(), checkout: ready(s.variantId, 1) });
    const id = body["id"] as string;
    const notFound = { ucp: { version: UCP_VERSION, status: "error" }, messages: [expect.objectContaining({ type: "error", code: "not_found", severity: "unrecoverable" })] };

    const elsewhere = await agent(other.hostname);
    expect((await tool(elsewhere, "get_checkout", { meta: meta(), id })).body).toEqual(notFound);
    expect(shape((await tool(elsewhere, "get_checkout", { meta: meta(), id })).body)).toEqual(shape(recordedAnswer("another agent's checkout: not_found")));
    expect((await tool(elsewhere, "cancel_checkout", { meta: meta(crypto.randomUUID()), id })).body).toEqual(notFound);
    expect((await tool(client, "get_checkout", { meta: meta(undefined, OTHER_PROFILE), id })).body).toEqual(notFound);
    expect((await tool(client, "update_checkout", { meta: meta(undefined, OTHER_PROFILE), id, checkout: ready(s.variantId, 5) })).body).toEqual(notFound);
    expect((await tool(client, "complete_checkout", { meta: meta(crypto.randomUUID(), OTHER_PROFILE), id })).body).toEqual(notFound);
    expect((await tool(client, "get_checkout", { meta: meta(), id: "checkout_abc123" })).body).toEqual(notFound);
    // Untouched: still its agent's, at its store, as it was.
    expect((await sql(s, "select status from ucp_checkout_session where id = $1", [id]))[0].status).toBe("ready_for_complete");
    expect(await sql(s, "select count(*)::int as n from shop_order where channel = 'ucp'")).toEqual([{ n: 0 }]);

    // Its own agent cancels it; a canceled checkout cannot change (invalid_state).
    const key = crypto.randomUUID();
    const cancelled = await tool(client, "cancel_checkout", { meta: meta(key), id });
    expect(cancelled.body["status"]).toBe("canceled");
    expect(cancelled.body["continue_url"]).toBeUndefined();
    expect((await tool(client, "cancel_checkout", { meta: meta(key), id })).body).toEqual(cancelled.body);
    const again = await rpc(s.hostname, "cancel_checkout", { meta: meta(crypto.randomUUID()), id });
    expect([again.status, again.body["error"]["data"]["code"]]).toEqual([409, "invalid_state"]);
    await client.close();
    await elsewhere.close();
  });

  it("two complete_checkout calls racing with one key place one order: the other is told to retry (409 idempotency_in_progress, retry_after) or hears the same answer", async () => {
    const s = await shop();
    const created = await rpc(s.hostname, "create_checkout", { meta: meta(), checkout: ready(s.variantId, 1) });
    const id = created.body["result"]["structuredContent"]["id"] as string;
    const key = crypto.randomUUID();
    const answers = await Promise.all([0, 1, 2].map(() => rpc(s.hostname, "complete_checkout", { meta: meta(key), id })));
    for (const a of answers) {
      if (a.status === 200) expect(a.body["result"]["structuredContent"]["status"]).toBe("requires_escalation");
      else expect([a.status, a.body["error"]["code"], a.body["error"]["data"]]).toEqual([409, -32000, { code: "idempotency_in_progress", content: expect.any(String), retry_after: 2 }]);
    }
    expect(answers.some((a) => a.status === 200)).toBe(true);
    expect(await sql(s, "select count(*)::int as n from shop_order where channel = 'ucp'")).toEqual([{ n: 1 }]);
    // The retry it was told to make hears the first answer.
    const retried = await rpc(s.hostname, "complete_checkout", { meta: meta(key), id });
    expect([retried.status, retried.headers.get("idempotent-replayed")]).toEqual([200, "true"]);
    expect(retried.body["result"]["structuredContent"]).toEqual(answers.find((a) => a.status === 200)!.body["result"]["structuredContent"]);
  });

  it("the same idempotency-key on create: the first checkout again, one session; other arguments: idempotency_conflict", async () => {
    const s = await shop();
    const client = await agent(s.hostname);
    const key = crypto.randomUUID();
    const first = await tool(client, "create_checkout", { meta: meta(key), checkout: ready(s.variantId, 1) });
    // The same arguments in another order of keys are the same request.
    const { buyer, ...rest } = ready(s.variantId, 1);
    const again = await tool(client, "create_checkout", { checkout: { buyer, ...rest }, meta: meta(key) });
    expect(again.body).toEqual(first.body);
    expect(again.meta).toEqual({ "idempotent-replayed": true });
    const conflict = await rpc(s.hostname, "create_checkout", { meta: meta(key), checkout: ready(s.variantId, 2) });
    expect([conflict.status, conflict.body["error"]["code"], conflict.body["error"]["data"]["code"]]).toEqual([409, -32000, "idempotency_conflict"]);
    expect(await sql(s, "select count(*)::int as n from ucp_checkout_session where agent_profile = $1", [PROFILE])).toEqual([{ n: 1 }]);
    await client.close();
  });

  it("while agentic checkout is off the checkout tools stay listed and answer not_found, a refused call too; the shopping tools work", async () => {
    const s = await shop();
    const client = await agent(s.hostname);
    const { body } = await tool(client, "create_checkout", { meta: meta(), checkout: ready(s.variantId, 1) });
    await sql(s, "update store set agentic_checkout = false where id = $1", [s.id]);
    const notFound = { ucp: { version: UCP_VERSION, status: "error" }, messages: [expect.objectContaining({ code: "not_found" })] };
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("create_checkout");
    expect((await tool(client, "create_checkout", { meta: meta(), checkout: ready(s.variantId, 1) })).body).toEqual(notFound);
    expect((await tool(client, "get_checkout", { meta: meta(), id: body["id"] })).body).toEqual(notFound);
    expect((await tool(client, "complete_checkout", { meta: meta(crypto.randomUUID()), id: body["id"] })).body).toEqual(notFound);
    // A call refused for its shape or its agent says no more than not_found either.
    const noAgent = await rpc(s.hostname, "get_checkout", { id: body["id"] });
    expect([noAgent.status, noAgent.body["result"]["structuredContent"]]).toEqual([200, notFound]);
    expect(await sql(s, "select count(*)::int as n from shop_order where channel = 'ucp'")).toEqual([{ n: 0 }]);
    const search = await client.callTool({ name: "get_store_policies", arguments: {} });
    expect(search.isError).toBeFalsy();
    await client.close();
  });

  it("a signed request is verified with the profile's published key, as over REST: a good one served, a bad one the binding's error", async () => {
    const s = await shop();
    const signer = async () => {
      const { publicJwk, privateJwk } = await generateSigningKey();
      return { publicJwk, key: { kid: publicJwk.kid, privateKey: await crypto.subtle.importKey("jwk", privateJwk, { name: "ECDSA", namedCurve: "P-256" }, false, ["sign"]) } };
    };
    const own = await signer();
    published.push(own.publicJwk as unknown as Record<string, unknown>);
    const profile = `https://signed.${crypto.randomUUID().slice(0, 8)}.example.com/.well-known/ucp`;
    const body = JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "create_checkout", arguments: { meta: meta(undefined, profile), checkout: ready(s.variantId, 1) } } });
    const headers = { "content-type": "application/json", "ucp-agent": `profile="${profile}"` };
    const sign = (key: typeof own.key) => signMessage({ method: "POST", url: `https://${s.hostname}/api/mcp`, headers: new Headers(headers), body: new TextEncoder().encode(body) }, key);
    const signature = await sign(own.key);
    const good = await rpc(s.hostname, "", null, { ...headers, ...signature }, body);
    expect([good.status, good.body["result"]["structuredContent"]["status"]]).toEqual([200, "ready_for_complete"]);
    const tampered = await rpc(s.hostname, "", null, { ...headers, ...signature }, body.replace('"quantity":1', '"quantity":2'));
    expect([tampered.status, tampered.body["error"]["code"], tampered.body["error"]["data"]["code"]]).toEqual([400, -32600, "digest_mismatch"]);
    const stranger = await signer();
    const unknown = await rpc(s.hostname, "", null, { ...headers, ...(await sign(stranger.key)) }, body);
    expect([unknown.status, unknown.body["error"]["code"], unknown.body["error"]["data"]["code"]]).toEqual([401, -32000, "key_not_found"]);
    expect(await sql(s, "select count(*)::int as n from ucp_checkout_session where agent_profile = $1", [profile])).toEqual([{ n: 1 }]);
  });

  it("discount codes count at the discount door as over REST, one per code; past its limit, 429 rate_limited with retry_after and no database work", async () => {
    const s = await shop();
    const from = ip();
    const door = shopperKeys("discount", s.hostname, clientOf(from)).address[0]!;
    const used = async () => door.policy.limit - (await peek(limiter, door.key, door.policy)).remaining - 1;
    await rpc(s.hostname, "create_checkout", { meta: meta(), checkout: ready(s.variantId, 1, [s.discountCode, "NOPE"]) }, { "cf-connecting-ip": from });
    expect(await used()).toBe(2);
    await hit(limiter, door.key, door.policy, door.policy.limit - 2);
    const trace = newTrace();
    const refused = await rpc(s.hostname, "create_checkout", { meta: meta(), checkout: ready(s.variantId, 1, [s.discountCode]) }, { "cf-connecting-ip": from, "x-commerce-trace": trace });
    expect(refused.status).toBe(429);
    expect(refused.body["error"]).toMatchObject({ code: -32000, data: { code: "rate_limited", retry_after: Number(refused.headers.get("retry-after")) } });
    expect((await tripsOf(proxy, trace)).turns).toBe(0);
    // Without a code the agent goes on.
    expect((await rpc(s.hostname, "create_checkout", { meta: meta(), checkout: ready(s.variantId, 1) }, { "cf-connecting-ip": from })).status).toBe(200);
  });

  it("the endpoint's own refusals reach a checkout call in the binding's shape: past the mcp door's limit, 429 -32000 rate_limited with retry_after", async () => {
    const s = await shop();
    const from = ip();
    const { key, policy } = shopperKeys("mcp", s.hostname, clientOf(from)).address[0]!;
    await hit(limiter, key, policy, policy.limit);
    const refused = await rpc(s.hostname, "get_checkout", { meta: meta(), id: crypto.randomUUID() }, { "cf-connecting-ip": from });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      jsonrpc: "2.0",
      id: 7,
      error: { code: -32000, message: expect.any(String), data: { code: "rate_limited", content: expect.any(String), retry_after: Number(refused.headers.get("retry-after")) } },
    });
  });

  it("round trips as over REST: two units an operation, a key's read and its answer's write more, a replay one; a refused call the switch only", async () => {
    const s = await shop();
    await rpc(s.hostname, "get_checkout", { meta: meta(), id: crypto.randomUUID() }); // the host and its facts held
    const turns = async (name: string, args: unknown) => {
      const trace = newTrace();
      const r = await rpc(s.hostname, name, args, { "x-commerce-trace": trace });
      return { body: r.body, turns: (await tripsOf(proxy, trace)).turns };
    };
    const created = await turns("create_checkout", { meta: meta(), checkout: ready(s.variantId, 1, [s.discountCode]) });
    const id = created.body["result"]["structuredContent"]["id"] as string;
    expect(created.turns).toBe(2);
    expect((await turns("get_checkout", { meta: meta(), id })).turns).toBe(2);
    const key = crypto.randomUUID();
    expect((await turns("update_checkout", { meta: meta(key), id, checkout: ready(s.variantId, 2) })).turns).toBe(4);
    expect((await turns("update_checkout", { meta: meta(key), id, checkout: ready(s.variantId, 2) })).turns).toBe(1);
    expect((await turns("cancel_checkout", { meta: meta(crypto.randomUUID()), id: crypto.randomUUID() })).turns).toBe(3);
    // A call refused for its arguments reads the switch only (off, it is not_found like everything else).
    expect((await turns("cancel_checkout", { meta: meta(), id })).turns).toBe(1);
  });

  it("a store behind its password refuses the checkout tools: 403, the binding's error with password_protected", async () => {
    const s = await shop();
    await sql(s, "update store set storefront_password_hash = $2 where id = $1", [s.id, await hashPassword("open sesame 42")]);
    const res = await rpc(s.hostname, "create_checkout", { meta: meta(), checkout: ready(s.variantId, 1) });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ jsonrpc: "2.0", id: 7, error: { code: -32000, message: expect.any(String), data: { code: "password_protected", content: expect.stringContaining("password") } } });
    expect(await sql(s, "select count(*)::int as n from ucp_checkout_session where agent_profile = $1", [PROFILE])).toEqual([{ n: 0 }]);
  });
});
