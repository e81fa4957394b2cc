import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { createToken, rpc, rpcJson, type RpcError } from "../../test/admin";
import { testDb } from "../../test/harness";
import { adminFetch, connectMcpClient, SECURE_ADMIN } from "../../test/oauth";

/**
 * Both bearer doors take both kinds of token (SPEC Authentication 2), and the store's AI-client settings
 * bind an OAuth connection at /api/v1 exactly as over MCP (ARCHITECTURE §4): an AI client cannot
 * sidestep 'Changes need approval' by calling the token API. Created tokens are scripts, not bound.
 */
const db = testDb();

function apiAt(token: string, path: string, input: unknown = {}): Promise<Response> {
  return adminFetch(`${SECURE_ADMIN}/api/v1/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ json: input }),
  });
}

async function connection(areas: string[]) {
  const connected = await connectMcpClient(db, { areas });
  const owner = connected.browser;
  const access = connected.oauth.saved!.access_token;
  const product = (await rpcJson<{ items: { id: string; title: string }[] }>(await rpc(owner, "products/list", {}))).items[0]!;
  const customer = (await rpcJson<{ items: { id: string }[] }>(await rpc(owner, "customers/list", {}))).items[0]!;
  return { ...connected, owner, access, product, customer };
}

const titleOf = (storeId: string, productId: string) =>
  withStore(db, storeId, (tx) => tx.$client.query<{ title: string }>("select title from product where id = $1", [productId])).then((r) => r.rows[0]?.title);

describe("/api/v1 with an OAuth access token", () => {
  it("accepts it, within the connection's areas, and logs the call", async () => {
    const { access, store } = await connection(["products:read"]);
    const res = await apiAt(access, "products/list", { pageSize: 1 });
    expect(res.status).toBe(200);
    expect(res.headers.get("ratelimit")).toMatch(/^"default";r=\d+;t=\d+$/);
    expect((await rpcJson<{ total: number }>(res)).total).toBe(1);
    const outside = await apiAt(access, "customers/list", {});
    expect(outside.status).toBe(403);
    expect((await rpcJson<RpcError>(outside)).message).toMatch(/connection's grant does not allow/);
    const logged = await withStore(db, store.id, (tx) => tx.$client.query("select procedure, via from api_activity where kind = 'read' and procedure = 'products.list' and via = 'token'"));
    expect(logged.rows.length).toBeGreaterThanOrEqual(1);
  });

  it("refuses an access token whose signature is wrong, or that names another store's grant", async () => {
    const { access } = await connection(["products:read"]);
    const forged = `${access.slice(0, -4)}${access.endsWith("AAAA") ? "BBBB" : "AAAA"}`;
    const res = await apiAt(forged, "products/list", {});
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"');
  });

  it("junk shaped like an access token is a 401 at both doors, never a 500", async () => {
    const { store } = await connection(["products:read"]);
    const junk = ["wcat_", "wcat_x", "wcat_a:b:c", `wcat_${store.slug}.x:y:z`, `wcat_${"a".repeat(600)}`, "wcat_%00:%0a:..", "wc_live_short"];
    for (const token of junk) {
      const api = await apiAt(token, "products/list", {});
      expect(api.status, token).toBe(401);
      const mcp = await adminFetch(`${SECURE_ADMIN}/api/mcp/${store.slug}`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      expect(mcp.status, token).toBe(401);
    }
  });

  it("customer details off → customers.get refused with reason customer_details_off; on → answered", async () => {
    const { access, owner, customer } = await connection(["customers:read"]);
    const off = await apiAt(access, "customers/get", { id: customer.id });
    expect(off.status).toBe(403);
    expect((await rpcJson<RpcError>(off)).data?.reason).toBe("customer_details_off");
    await rpc(owner, "mcpSettings/update", { readCustomerDetails: true });
    const on = await apiAt(access, "customers/get", { id: customer.id });
    expect(on.status).toBe(200);
    expect(await rpcJson<{ email: string }>(on)).toMatchObject({ email: expect.stringContaining("@") });
  });

  it("changes off → a write is refused with reason ai_changes_off and nothing changes", async () => {
    const { access, store, product } = await connection(["products:write"]);
    const res = await apiAt(access, "products/update", { id: product.id, title: "Sneaked in" });
    expect(res.status).toBe(403);
    expect((await rpcJson<RpcError>(res)).data?.reason).toBe("ai_changes_off");
    expect(await titleOf(store.id, product.id)).toBe(product.title);
  });

  it("approval on → a write answers 202 with the proposal waiting in AI approvals; approving runs it once", async () => {
    const { access, owner, store, product } = await connection(["products:write"]);
    await rpc(owner, "mcpSettings/update", { allowChanges: true });
    const res = await apiAt(access, "products/update", { id: product.id, title: "Proposed title" });
    expect(res.status).toBe(202);
    const { proposal } = await rpcJson<{ proposal: { approvalId: string; status: string; summary: string } }>(res);
    expect(proposal).toMatchObject({ status: "pending", summary: expect.stringContaining("Proposed title") });
    expect(await titleOf(store.id, product.id)).toBe(product.title);
    const pending = await rpcJson<{ items: { id: string; source: string; procedure: string }[] }>(await rpc(owner, "aiApprovals/list", { state: "pending" }));
    expect(pending.items.find((i) => i.id === proposal.approvalId)).toMatchObject({ source: "api", procedure: "products.update" });
    const decided = await rpcJson<{ state: string }>(await rpc(owner, "aiApprovals/approve", { id: proposal.approvalId }));
    expect(decided.state).toBe("approved");
    expect(await titleOf(store.id, product.id)).toBe("Proposed title");
  });

  it("approval on for a procedure without a change tool: every field is in the proposal", async () => {
    const { access, owner } = await connection(["products:write"]);
    await rpc(owner, "mcpSettings/update", { allowChanges: true });
    const res = await apiAt(access, "products/create", { title: "From an AI client", variants: [{ priceMinor: 4200, sku: "AI-1" }] });
    expect(res.status).toBe(202);
    const { proposal } = await rpcJson<{ proposal: { approvalId: string; diff: { field: string; to: unknown }[] } }>(res);
    expect(proposal.diff).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ field: "title", from: null, to: "From an AI client" }),
        expect.objectContaining({ field: "variants", to: expect.stringMatching(/"sku": "AI-1",\n\s*"priceMinor": 4200/) }),
      ]),
    );
  });

  it("approval off → the write runs at once", async () => {
    const { access, owner, store, product } = await connection(["products:write"]);
    await rpc(owner, "mcpSettings/update", { allowChanges: true, changesNeedApproval: false });
    const res = await apiAt(access, "products/update", { id: product.id, title: "Straight through" });
    expect(res.status).toBe(200);
    expect(await titleOf(store.id, product.id)).toBe("Straight through");
  });

  it("created tokens are scripts: the AI-client settings do not bind them", async () => {
    const { owner, store, product, customer } = await connection(["products:read"]);
    const { token } = await createToken(owner, ["products:write", "customers:read"]);
    expect((await apiAt(token, "customers/get", { id: customer.id })).status).toBe(200);
    const write = await apiAt(token, "products/update", { id: product.id, title: "Script change" });
    expect(write.status).toBe(200);
    expect(await titleOf(store.id, product.id)).toBe("Script change");
  });

  it("counts MCP and /api/v1 calls of one connection together", async () => {
    const { access, client } = await connection(["products:read"]);
    await client.listTools();
    const first = await apiAt(access, "products/list", {});
    const remaining = Number(/r=(\d+)/.exec(first.headers.get("ratelimit") ?? "")?.[1]);
    await client.listTools();
    const second = await apiAt(access, "products/list", {});
    expect(Number(/r=(\d+)/.exec(second.headers.get("ratelimit") ?? "")?.[1])).toBe(remaining - 2);
  });
});
