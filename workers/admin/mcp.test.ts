import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { makeStore, testDb } from "../../test/harness";
import { api, createToken, rpc, rpcJson, sessionFor } from "../../test/admin";
import { adminFetch, connectMcpClient, mcpUrl, SECURE_ADMIN, toolResult, type ConnectedClient } from "../../test/oauth";

const db = testDb();

const toolNames = async (client: ConnectedClient["client"]) => (await client.listTools()).tools.map((t) => t.name).sort();
const resultOf = toolResult;

function post(slug: string, body: unknown, token?: string, method = "POST"): Promise<Response> {
  return adminFetch(mcpUrl(slug), {
    method,
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    ...(method === "POST" ? { body: JSON.stringify(body) } : {}),
  });
}

describe("MCP endpoint", () => {
  it("connects with nothing but the URL, lists and calls tools", async () => {
    const { client, store } = await connectMcpClient(db, { areas: ["products:read", "analytics:read"] });
    expect(await toolNames(client)).toEqual(["getProduct", "listProductImages", "listProducts", "salesSummary"]);
    const listed = await client.listTools();
    const schema = listed.tools.find((t) => t.name === "listProducts")!.inputSchema as { properties: Record<string, unknown> };
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(["page", "pageSize", "query", "status"]));
    const res = await client.callTool({ name: "listProducts", arguments: { pageSize: 5 } });
    expect(res.isError).toBeFalsy();
    expect(resultOf(res)).toMatchObject({ total: 1, items: [{ title: "Fixture" }] });
    // The SDK's McpServer validates arguments against the procedure's schema and answers a tool error
    // naming the field; a tool the connection may not use is not there at all.
    const bad = await client.callTool({ name: "listProducts", arguments: { pageSize: 500 } });
    expect(bad.isError).toBe(true);
    expect(JSON.stringify(bad.content)).toMatch(/Invalid arguments for tool listProducts.*pageSize/);
    const hidden = await client.callTool({ name: "listCustomers", arguments: {} });
    expect(hidden.isError).toBe(true);
    expect(JSON.stringify(hidden.content)).toMatch(/Tool listCustomers not found/);
    const activity = await withStore(db, store.id, (tx) => tx.$client.query("select procedure, via, count from api_activity where via = 'mcp'"));
    expect(activity.rows).toEqual([{ procedure: "products.list", via: "mcp", count: 1 }]);
  });

  it("answers 401 with the store's metadata URL, 405 for GET and DELETE, and batches", async () => {
    const store = await makeStore(db);
    const none = await post(store.slug, { jsonrpc: "2.0", id: 1, method: "tools/list" });
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="${SECURE_ADMIN}/.well-known/oauth-protected-resource/api/mcp/${store.slug}"`);
    const { token } = await createToken(await sessionFor(db, store.ownerUserId, store.id), ["products:read"]);
    expect((await post(store.slug, null, token, "GET")).status).toBe(405);
    expect((await post(store.slug, null, token, "DELETE")).status).toBe(405);
    const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } };
    expect((await post(store.slug, init, token)).status).toBe(200);
    const batch = await post(store.slug, [{ jsonrpc: "2.0", id: 2, method: "tools/list" }, { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "listProducts", arguments: {} } }], token);
    expect(batch.status).toBe(200);
    const answers = (await batch.json()) as { id: number; result: { tools?: unknown[]; content?: unknown[] } }[];
    expect(answers.map((a) => a.id).sort()).toEqual([2, 3]);
    // products:read: listProducts, getProduct, listProductImages.
    expect(answers.find((a) => a.id === 2)!.result.tools).toHaveLength(3);
  });

  it("refuses a token of another store, and revoked grants (Postgres is the authority)", async () => {
    const { oauth, store, browser } = await connectMcpClient(db);
    const other = await makeStore(db);
    const access = oauth.saved!.access_token;
    const list = { jsonrpc: "2.0", id: 1, method: "tools/list" };
    expect((await post(store.slug, list, access)).status).toBe(200);
    const elsewhere = await post(other.slug, list, access);
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.headers.get("www-authenticate")).toContain('error="invalid_token"');
    const created = await createToken(await sessionFor(db, other.ownerUserId, other.id), ["products:read"]);
    expect((await post(store.slug, list, created.token)).status).toBe(401);
    const grants = await rpcJson<{ items: { id: string; kind: string }[] }>(await rpc(browser, "apiGrants/list", {}));
    const grant = grants.items.find((g) => g.kind === "oauth")!;
    expect((await rpc(browser, "apiGrants/revoke", { id: grant.id })).status).toBe(200);
    expect((await post(store.slug, list, access)).status).toBe(401);
    // Settings also deleted the provider's tokens: the refresh token no longer works either.
    const refresh = await adminFetch(`${SECURE_ADMIN}/api/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: oauth.saved!.refresh_token!, client_id: oauth.info!.client_id }).toString(),
    });
    expect(refresh.status).toBe(400);
  });

  it("RFC 7009 revocation of the access token ends it", async () => {
    const { oauth, store } = await connectMcpClient(db);
    const access = oauth.saved!.access_token;
    const res = await adminFetch(`${SECURE_ADMIN}/api/oauth/revoke`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: access, client_id: oauth.info!.client_id }).toString(),
    });
    expect(res.status).toBe(200);
    expect((await post(store.slug, { jsonrpc: "2.0", id: 1, method: "tools/list" }, access)).status).toBe(401);
  });

  it("lists tools by role × areas × the three settings; customerDetails blocked while reading details is off", async () => {
    const owner = await connectMcpClient(db, { areas: ["products:write", "customers:read"] });
    expect(await toolNames(owner.client)).toEqual(["customerDetails", "getProduct", "listCustomers", "listProductImages", "listProducts"]);
    const customers = resultOf(await owner.client.callTool({ name: "listCustomers", arguments: {} })) as { items: { id: string }[] };
    // While details are off, a search finds customers by name but never by email or phone words.
    const found = async (query: string) => (resultOf(await owner.client.callTool({ name: "listCustomers", arguments: { query } })) as { total: number }).total;
    expect(await found("fixture")).toBe(1);
    expect(await found("shopper")).toBe(0);
    const blocked = await owner.client.callTool({ name: "customerDetails", arguments: { id: customers.items[0]!.id } });
    expect(blocked.isError).toBe(true);
    expect(resultOf(blocked)).toMatchObject({ code: "FORBIDDEN", data: { reason: "customer_details_off" } });
    await rpc(owner.browser, "store/update", { mcpAllowChanges: true, mcpReadCustomerDetails: true });
    expect(await toolNames(owner.client)).toEqual([
      ...["attachProductImage", "customerDetails", "getProduct", "listCustomers", "listProductImages", "listProducts", "removeProductImage", "updateProduct"],
    ]);
    expect(await found("shopper")).toBe(1);
    const details = await owner.client.callTool({ name: "customerDetails", arguments: { id: customers.items[0]!.id } });
    expect(resultOf(details)["email"]).toMatch(/@example\.test$/);
    // Staff cannot grant analytics; their connection never lists it whatever the client asks.
    const staff = await connectMcpClient(db, { role: "staff", store: owner.store });
    expect(await toolNames(staff.client)).not.toContain("salesSummary");
  });

  it("proposes changes for approval; approved once, rejected, expired; auto-approved when approval is off", async () => {
    const { client, browser, store } = await connectMcpClient(db, { areas: ["products:write", "content:write"] });
    await rpc(browser, "store/update", { mcpAllowChanges: true });
    const product = (resultOf(await client.callTool({ name: "listProducts", arguments: {} })) as { items: { id: string }[] }).items[0]!;
    const proposed = resultOf(await client.callTool({ name: "updateProduct", arguments: { id: product.id, title: "Renamed by AI" } }));
    expect(proposed).toMatchObject({ status: "pending" });
    expect(String(proposed["summary"])).toContain('title "Fixture" → "Renamed by AI"');
    const approve = (id: unknown) => rpc(browser, "aiApprovals/approve", { id });
    expect((await approve(proposed["approvalId"])).status).toBe(200);
    const after = resultOf(await client.callTool({ name: "getProduct", arguments: { id: product.id } }));
    expect(after["title"]).toBe("Renamed by AI");
    const twice = await approve(proposed["approvalId"]);
    expect(twice.status).toBe(409);

    const second = resultOf(await client.callTool({ name: "updateProduct", arguments: { id: product.id, status: "active" } }));
    expect((await rpc(browser, "aiApprovals/reject", { id: second["approvalId"] })).status).toBe(200);
    expect((await approve(second["approvalId"])).status).toBe(409);

    const third = resultOf(await client.callTool({ name: "updateProduct", arguments: { id: product.id, vendor: "Late" } }));
    await withStore(db, store.id, (tx) => tx.$client.query("update ai_approval set expires_at = now() - interval '1 second', created_at = now() - interval '2 days' where id = $1", [third["approvalId"]]));
    const expired = await approve(third["approvalId"]);
    expect(expired.status).toBe(409);
    expect(await expired.text()).toContain("expired");

    await rpc(browser, "store/update", { mcpChangesNeedApproval: false });
    const auto = await client.callTool({ name: "updateProduct", arguments: { id: product.id, title: "Straight through" } });
    expect(resultOf(auto)).toMatchObject({ status: "approved", result: { title: "Straight through" } });
    const listed = await rpcJson<{ items: { state: string }[] }>(await rpc(browser, "aiApprovals/list", {}));
    expect(listed.items.map((i) => i.state).sort()).toEqual(["approved", "approved", "expired", "pending", "rejected"].sort());
  });

  it("approving re-checks the connection: a member demoted since cannot have it run", async () => {
    const store = await makeStore(db);
    const { client, browser } = await connectMcpClient(db, { role: "admin", areas: ["content:write"], store });
    const owner = await sessionFor(db, store.ownerUserId, store.id);
    await rpc(owner, "store/update", { mcpAllowChanges: true });
    const page = (resultOf(await client.callTool({ name: "listPages", arguments: {} })) as { items: { id: string }[] }).items[0]!;
    const proposed = resultOf(await client.callTool({ name: "updatePage", arguments: { id: page.id, title: "By AI" } }));
    const me = await rpcJson<{ member: { id: string } }>(await rpc(browser, "staff/me", {}));
    await rpc(owner, "staff/setRole", { memberId: me.member.id, role: "staff" });
    const decided = await rpcJson<{ state: string; error: string }>(await rpc(browser, "aiApprovals/approve", { id: proposed["approvalId"] }));
    expect(decided).toMatchObject({ state: "failed" });
    expect(decided.error).toMatch(/role does not allow changing content \(content.write\)/);
  });

  it("shares one limit of 120 per minute with /api/v1", async () => {
    const store = await makeStore(db);
    const { token } = await createToken(await sessionFor(db, store.ownerUserId, store.id), ["products:read"]);
    for (let batch = 0; batch < 7; batch++) await Promise.all(Array.from({ length: 17 }, () => api(token, "products/list", { pageSize: 1 })));
    const list = { jsonrpc: "2.0", id: 1, method: "tools/list" };
    expect((await post(store.slug, list, token)).status).toBe(200); // call 120
    const limited = await post(store.slug, list, token);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await api(token, "products/list", {})).status).toBe(429);
  });
});
