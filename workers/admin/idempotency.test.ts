import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { makeStore, testDb } from "../../test/harness";
import { addMember } from "../../test/procedures";
import { api, createToken, rpc, rpcJson, sessionFor, type RpcError } from "../../test/admin";
import { adminFetch, connectMcpClient, SECURE_ADMIN, toolResult } from "../../test/oauth";

/**
 * Idempotency-Key on the writes of /api/v1 and /api/rpc (issue 25 item 1; shared/pipeline/idempotent.ts,
 * docs/decisions/0041-idempotency-keys.md): a repeated request answers the first answer and changes
 * nothing more; another body is a 422; concurrent requests with one key run once; a refused request takes
 * no key; keys are the caller's own.
 */
const db = testDb();

async function tokenFor(areas: string[]) {
  const store = await makeStore(db);
  const browser = await sessionFor(db, store.ownerUserId, store.id);
  return { store, browser, ...(await createToken(browser, areas)) };
}

const keyed = (key: string) => ({ "idempotency-key": key });
const newKey = () => `key-${crypto.randomUUID()}`;

const productsTitled = (storeId: string, title: string) =>
  withStore(db, storeId, (tx) => tx.$client.query<{ id: string }>("select id from product where title = $1", [title])).then((r) => r.rows.map((row) => row.id));

const keyRows = (storeId: string, key: string) =>
  withStore(db, storeId, (tx) => tx.$client.query<{ owner: string; status: number | null; response: string | null }>("select owner, status, response from idempotency_key where key = $1", [key])).then(
    (r) => r.rows,
  );

describe("Idempotency-Key at /api/v1", () => {
  it("a repeated products.create answers the same product, byte for byte, marked as replayed, and makes one row", async () => {
    const { store, token } = await tokenFor(["products:write"]);
    const key = newKey();
    const body = { title: "Idempotent Kurta", variants: [{ priceMinor: 129900, sku: "IK-1" }] };
    const first = await api(token, "products/create", body, keyed(key));
    expect(first.status).toBe(200);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const firstText = await first.text();
    // The same body with its fields in another order is the same request.
    const again = await api(token, "products/create", { variants: [{ sku: "IK-1", priceMinor: 129900 }], title: "Idempotent Kurta" }, keyed(key));
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("ratelimit")).toMatch(/^"default";r=\d+;t=\d+$/);
    expect(await again.text()).toBe(firstText);
    const ids = await productsTitled(store.id, "Idempotent Kurta");
    expect(ids).toHaveLength(1);
    expect(JSON.parse(firstText).json.id).toBe(ids[0]);
    // Without a key, the same body is a new request (another SKU: SKUs are unique in a store).
    expect((await api(token, "products/create", { ...body, variants: [{ priceMinor: 129900, sku: "IK-2" }] })).status).toBe(200);
    expect(await productsTitled(store.id, "Idempotent Kurta")).toHaveLength(2);
  });

  it("the same key with another body, or on another procedure, is a 422 naming the mismatch; nothing changes", async () => {
    const { store, token } = await tokenFor(["products:write"]);
    const key = newKey();
    expect((await api(token, "products/create", { title: "First body", variants: [{ priceMinor: 100 }] }, keyed(key))).status).toBe(200);
    const other = await api(token, "products/create", { title: "Second body", variants: [{ priceMinor: 100 }] }, keyed(key));
    expect(other.status).toBe(422);
    const error = await rpcJson<RpcError & { code: string }>(other);
    expect(error).toMatchObject({ code: "UNPROCESSABLE_CONTENT", data: { reason: "idempotency_key_reused", mismatch: "body", procedure: "products.create" } });
    expect(error.message).toMatch(/another body/);
    const elsewhere = await api(token, "products/update", { id: crypto.randomUUID(), title: "x" }, keyed(key));
    expect(elsewhere.status).toBe(422);
    expect((await rpcJson<RpcError>(elsewhere)).data).toMatchObject({ mismatch: "procedure" });
    expect(await productsTitled(store.id, "Second body")).toHaveLength(0);
  });

  it("20 concurrent requests with one key make one change, and every one answers it", async () => {
    const { store, token } = await tokenFor(["products:write"]);
    const key = newKey();
    const body = { title: "Crowded Kurta", variants: [{ priceMinor: 50000 }] };
    const answers = await Promise.all(Array.from({ length: 20 }, () => api(token, "products/create", body, keyed(key))));
    expect(answers.map((r) => r.status)).toEqual(Array(20).fill(200));
    const texts = await Promise.all(answers.map((r) => r.text()));
    expect(new Set(texts).size).toBe(1);
    expect(answers.filter((r) => r.headers.get("idempotent-replayed") === "true")).toHaveLength(19);
    expect(await productsTitled(store.id, "Crowded Kurta")).toHaveLength(1);
  });

  it("a stock adjustment repeated after a lost answer adjusts once", async () => {
    const { store, token } = await tokenFor(["inventory:write", "products:write"]);
    const created = await rpcJson<{ id: string }>(await api(token, "products/create", { title: "Stocked Kurta", variants: [{ priceMinor: 100 }] }));
    const location = await withStore(db, store.id, (tx) => tx.$client.query<{ id: string }>("select id from location order by created_at limit 1")).then((r) => r.rows[0]!);
    const onHand = () =>
      withStore(db, store.id, (tx) =>
        tx.$client.query<{ on_hand: number }>("select coalesce(sum(l.on_hand), 0)::int as on_hand from inventory_level l join product_variant v on v.id = l.variant_id where v.product_id = $1", [created.id]),
      ).then((r) => r.rows[0]!.on_hand);
    const variant = await withStore(db, store.id, (tx) => tx.$client.query<{ id: string }>("select id from product_variant where product_id = $1", [created.id])).then((r) => r.rows[0]!.id);
    const before = await onHand();
    const key = newKey();
    const input = { variantId: variant, locationId: location.id, delta: 5, reason: "received" };
    const first = await api(token, "inventory/adjust", input, keyed(key));
    expect(first.status).toBe(200);
    const again = await api(token, "inventory/adjust", input, keyed(key));
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.text()).toBe(await first.text());
    expect(await onHand()).toBe(before + 5);
    expect((await keyRows(store.id, key))[0]).toMatchObject({ status: 200 });
  });

  it("the answer is kept in Postgres, so a replay served by any Worker (after a restart) finds it", async () => {
    const { store, token } = await tokenFor(["products:write"]);
    const key = newKey();
    const first = await api(token, "products/create", { title: "Kept Kurta", variants: [{ priceMinor: 100 }] }, keyed(key));
    const [row] = await keyRows(store.id, key);
    expect(row).toMatchObject({ status: 200, response: await first.text() });
    // This isolate keeps nothing of it: the replay reads the row (marked here so the test can tell).
    await withStore(db, store.id, (tx) => tx.$client.query(`update idempotency_key set response = '{"json":"from postgres"}' where key = $1`, [key]));
    const again = await api(token, "products/create", { title: "Kept Kurta", variants: [{ priceMinor: 100 }] }, keyed(key));
    expect(await again.json()).toEqual({ json: "from postgres" });
  });

  it("a refused request takes no key: invalid input, a refused change, a missing permission, then the same key works", async () => {
    const { store, browser, token } = await tokenFor(["products:write"]);
    const key = newKey();
    const invalid = await api(token, "products/create", { title: "", variants: [] }, keyed(key));
    expect(invalid.status).toBe(400);
    // A refused change (a handle another product has) rolls back with its key.
    const taken = await rpcJson<{ handle: string }>(await api(token, "products/create", { title: "Handle owner", variants: [{ priceMinor: 100 }] }));
    const clash = await api(token, "products/create", { title: "Clash", handle: taken.handle, variants: [{ priceMinor: 100 }] }, keyed(key));
    expect(clash.status).toBe(409);
    const { token: readOnly } = await createToken(browser, ["products:read"]);
    expect((await api(readOnly, "products/create", { title: "No right", variants: [{ priceMinor: 100 }] }, keyed(key))).status).toBe(403);
    expect(await keyRows(store.id, key)).toEqual([]);
    const ok = await api(token, "products/create", { title: "After refusals", variants: [{ priceMinor: 100 }] }, keyed(key));
    expect(ok.status).toBe(200);
    expect(ok.headers.get("idempotent-replayed")).toBeNull();
  });

  it("keys are the caller's own: another token's same key is a new request, and another store never sees it", async () => {
    const a = await tokenFor(["products:write"]);
    const { token: second } = await createToken(a.browser, ["products:write"]);
    const b = await tokenFor(["products:write"]);
    const key = newKey();
    const body = { title: "Shared key", variants: [{ priceMinor: 100 }] };
    const one = await rpcJson<{ id: string }>(await api(a.token, "products/create", body, keyed(key)));
    const two = await api(second, "products/create", body, keyed(key));
    expect(two.headers.get("idempotent-replayed")).toBeNull();
    expect((await rpcJson<{ id: string }>(two)).id).not.toBe(one.id);
    const other = await api(b.token, "products/create", body, keyed(key));
    expect(other.headers.get("idempotent-replayed")).toBeNull();
    expect(await productsTitled(b.store.id, "Shared key")).toHaveLength(1);
    expect(await productsTitled(a.store.id, "Shared key")).toHaveLength(2);
    expect((await keyRows(b.store.id, key)).map((r) => r.owner)).toHaveLength(1);
  });

  it("a malformed key is a 400 naming the header; reads ignore a key", async () => {
    const { token } = await tokenFor(["products:write", "products:read"]);
    for (const bad of ["", "x".repeat(256), "has space", "tab\there", "a\u007fb"]) {
      const res = await api(token, "products/create", { title: "Bad key", variants: [{ priceMinor: 100 }] }, { "idempotency-key": bad });
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect((await rpcJson<RpcError>(res)).data?.issues?.[0]?.path).toBe("Idempotency-Key");
    }
    const key = newKey();
    const list = await api(token, "products/list", {}, keyed(key));
    expect(list.status).toBe(200);
    expect(list.headers.get("idempotent-replayed")).toBeNull();
  });

  it("an OAuth connection's change while approval is on: a replay answers the same proposal, and one proposal waits", async () => {
    const connected = await connectMcpClient(db, { areas: ["products:write"] });
    const owner = connected.browser;
    const access = connected.oauth.saved!.access_token;
    await rpc(owner, "mcpSettings/update", { allowChanges: true });
    const product = (await rpcJson<{ items: { id: string }[] }>(await rpc(owner, "products/list", {}))).items[0]!;
    const key = newKey();
    const send = () =>
      adminFetch(`${SECURE_ADMIN}/api/v1/products/update`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${access}`, "idempotency-key": key },
        body: JSON.stringify({ json: { id: product.id, title: "Proposed once" } }),
      });
    const first = await send();
    expect(first.status).toBe(202);
    const again = await send();
    expect(again.status).toBe(202);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    const a = await rpcJson<{ proposal: { approvalId: string } }>(first);
    const b = await rpcJson<{ proposal: { approvalId: string } }>(again);
    expect(b.proposal.approvalId).toBe(a.proposal.approvalId);
    const pending = await rpcJson<{ items: { id: string; procedure: string }[] }>(await rpc(owner, "aiApprovals/list", { state: "pending" }));
    expect(pending.items.filter((i) => i.procedure === "products.update")).toHaveLength(1);
  });
});

describe("Idempotency-Key at /api/rpc", () => {
  it("a member's repeated change answers the first answer; another member's same key is their own", async () => {
    const store = await makeStore(db);
    const owner = await sessionFor(db, store.ownerUserId, store.id);
    const key = newKey();
    const body = { title: "Session Kurta", variants: [{ priceMinor: 100 }] };
    const first = await rpc(owner, "products/create", body, keyed(key));
    const again = await rpc(owner, "products/create", body, keyed(key));
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.text()).toBe(await first.text());
    const staff = await addMember(db, store, "admin");
    const other = await rpc(await sessionFor(db, staff.userId, store.id), "products/create", body, keyed(key));
    expect(other.status).toBe(200);
    expect(other.headers.get("idempotent-replayed")).toBeNull();
    expect(await productsTitled(store.id, "Session Kurta")).toHaveLength(2);
    const mismatch = await rpc(owner, "products/create", { ...body, title: "Other" }, keyed(key));
    expect(mismatch.status).toBe(422);
  });
});

describe("Idempotency-Key over MCP (a tools/call request's _meta.idempotencyKey)", () => {
  it("a change tool called again with its key answers the same proposal, marked, and one proposal waits; another key proposes anew", async () => {
    const { client, browser, store } = await connectMcpClient(db, { areas: ["products:write", "products:read"] });
    await rpc(browser, "mcpSettings/update", { allowChanges: true });
    const product = (await rpcJson<{ items: { id: string }[] }>(await rpc(browser, "products/list", {}))).items[0]!;
    const key = newKey();
    const call = (title: string, k = key) => client.callTool({ name: "updateProduct", arguments: { id: product.id, title }, _meta: { idempotencyKey: k } });
    const first = await call("Via MCP once");
    const again = await call("Via MCP once");
    expect(first.isError).toBeFalsy();
    expect(again._meta).toMatchObject({ idempotentReplayed: true });
    expect(first._meta?.idempotentReplayed).toBeUndefined();
    expect(toolResult(again)).toEqual(toolResult(first));
    expect(again.structuredContent).toEqual(first.structuredContent);
    const pending = await rpcJson<{ items: { id: string; procedure: string }[] }>(await rpc(browser, "aiApprovals/list", { state: "pending" }));
    expect(pending.items.filter((i) => i.procedure === "products.update")).toHaveLength(1);
    // Another body with the key: the 422 as a tool error; nothing proposed.
    const other = await call("Another title");
    expect(other.isError).toBe(true);
    expect(toolResult(other)).toMatchObject({ code: "UNPROCESSABLE_CONTENT", data: { reason: "idempotency_key_reused" } });
    const fresh = await call("Via MCP once", newKey());
    expect((toolResult(fresh) as { approvalId: string }).approvalId).not.toBe((toolResult(first) as { approvalId: string }).approvalId);
    expect(await keyRows(store.id, key)).toHaveLength(1);
  });

  it("a malformed key is the tool's 400; a read tool ignores a key", async () => {
    const { client, browser } = await connectMcpClient(db, { areas: ["products:write", "products:read"] });
    await rpc(browser, "mcpSettings/update", { allowChanges: true });
    const bad = await client.callTool({ name: "updateProduct", arguments: { id: crypto.randomUUID(), title: "x" }, _meta: { idempotencyKey: "has space" } });
    expect(bad.isError).toBe(true);
    expect(toolResult(bad)).toMatchObject({ code: "BAD_REQUEST", data: { issues: [{ path: "Idempotency-Key" }] } });
    const read = await client.callTool({ name: "listProducts", arguments: {}, _meta: { idempotencyKey: newKey() } });
    expect(read.isError).toBeFalsy();
    expect(read._meta?.idempotentReplayed).toBeUndefined();
  });
});
