import { describe, expect, it } from "vitest";
import { createLogger } from "#shared/core/log";
import { withStore } from "#shared/db/with-store";
import type { Principal } from "#shared/pipeline/principal";
import { resolveCaller } from "#shared/pipeline/run";
import { makeStore, testDb, type TestStore } from "../../test/harness";
import { addMember, callerFor, failureText } from "../../test/procedures";
import { assistantToolSpecs, callAssistantTool, type AssistantCalls } from "./assistant-calls";
import { TOOLS, visibleTools } from "./tools";

const db = testDb();
const log = createLogger({ test: true }, "error");

/** The assistant's calls for a member of `store` (its Owner by default). */
async function assistantOf(store: TestStore, userId = store.ownerUserId) {
  const principal: Principal = { kind: "member", userId, storeId: store.id };
  const deps: AssistantCalls = { db, principal, log };
  const caller = await resolveCaller(db, principal, "assistant");
  return { caller, call: (name: string, args: unknown) => callAssistantTool(deps, caller, name, args), approvals: callerFor(db, userId, store.id) };
}

const settings = (store: TestStore, set: string) => withStore(db, store.id, (tx) => tx.$client.query(`update store set ${set} where id = $1`, [store.id]));
const fixture = (store: TestStore) =>
  withStore(db, store.id, (tx) =>
    tx.$client.query<{ product: string; variant: string; price: string }>("select p.id as product, v.id as variant, v.price_minor::text as price from product p join product_variant v on v.product_id = p.id limit 1"),
  ).then((r) => r.rows[0]!);

describe("the store's assistant calls the MCP tools through the pipeline, as the signed-in member", () => {
  it("reads its own store's products, with the tools' input schemas for the model", async () => {
    const store = await makeStore(db);
    const { caller, call } = await assistantOf(store);
    const specs = assistantToolSpecs(caller);
    expect(specs.map((s) => s.function.name)).toContain("listProducts");
    expect(specs.find((s) => s.function.name === "listProducts")!.function.parameters).toMatchObject({ type: "object", properties: { query: { type: "string" } } });
    const listed = await call("listProducts", { pageSize: 5 });
    expect(listed).toMatchObject({ isError: false, data: { total: 1, items: [{ title: "Fixture" }] } });
    expect(await call("listProducts", { pageSize: 500 })).toMatchObject({ isError: true, data: { code: "BAD_REQUEST" } });
  });

  it("offers exactly the tools MCP lists for the member, each with an object JSON Schema of its input", async () => {
    const store = await makeStore(db);
    await settings(store, "mcp_allow_changes = true, mcp_read_customer_details = true");
    const { caller } = await assistantOf(store);
    const specs = assistantToolSpecs(caller);
    expect(specs.map((s) => s.function.name)).toEqual(visibleTools(caller.permissions, caller.store).map((t) => t.name));
    expect(specs.length).toBe(TOOLS.length);
    for (const spec of specs) expect(spec.function.parameters, spec.function.name).toMatchObject({ type: "object" });
  });

  it("a change is a pending proposal from the assistant, even with approval switched off; nothing changes until the member approves", async () => {
    const store = await makeStore(db);
    await settings(store, "mcp_allow_changes = true, mcp_changes_need_approval = false");
    const { call, approvals } = await assistantOf(store);
    const { product, variant, price } = await fixture(store);
    const proposed = await call("updateProduct", { id: product, variants: [{ id: variant, priceMinor: 89900 }] });
    expect(proposed).toMatchObject({ isError: false, data: { status: "pending", next: expect.stringContaining("in this conversation") } });
    expect((proposed.data as { diff: unknown[] }).diff.length).toBeGreaterThan(0);
    expect((await fixture(store)).price).toBe(price);
    const id = (proposed.data as { approvalId: string }).approvalId;
    const row = await withStore(db, store.id, (tx) => tx.$client.query("select source, grant_id, status from ai_approval where id = $1", [id]));
    expect(row.rows).toEqual([{ source: "assistant", grant_id: null, status: "pending" }]);
    expect(await approvals("aiApprovals.approve", { id })).toMatchObject({ state: "approved" });
    expect((await fixture(store)).price).toBe("89900");
  });

  it("a rejected proposal changes nothing, and only its member decides it", async () => {
    const store = await makeStore(db);
    await settings(store, "mcp_allow_changes = true");
    const admin = await addMember(db, store, "admin");
    const { call, approvals } = await assistantOf(store);
    const { product, variant, price } = await fixture(store);
    const proposed = await call("updateProduct", { id: product, variants: [{ id: variant, priceMinor: 100 }] });
    const id = (proposed.data as { approvalId: string }).approvalId;
    expect(await failureText(callerFor(db, admin.userId, store.id)("aiApprovals.approve", { id }))).toBe("FORBIDDEN");
    expect(await approvals("aiApprovals.reject", { id })).toMatchObject({ state: "rejected" });
    expect((await fixture(store)).price).toBe(price);
  });

  it("Staff never see or call a tool their role lacks; the store's AI settings bind the assistant", async () => {
    const store = await makeStore(db);
    await settings(store, "mcp_allow_changes = true");
    const staff = await addMember(db, store, "staff");
    const { caller, call } = await assistantOf(store, staff.userId);
    const names = assistantToolSpecs(caller).map((s) => s.function.name);
    expect(names).toContain("updateProduct");
    expect(names).not.toContain("createDiscount");
    expect(names).not.toContain("salesSummary");
    expect(await call("createDiscount", { code: "STAFF10", kind: "percentage", value: 10 })).toMatchObject({ isError: true, data: { code: "NOT_FOUND" } });
    // With changes off, no change tool is offered, and one called anyway is refused before anything is stored.
    await settings(store, "mcp_allow_changes = false, mcp_read_customer_details = false");
    const owner = await assistantOf(store);
    expect(assistantToolSpecs(owner.caller).some((s) => ["updateProduct", "adjustInventory", "createDiscount"].includes(s.function.name))).toBe(false);
    const { product } = await fixture(store);
    expect(await call("updateProduct", { id: product, title: "Renamed" })).toMatchObject({ isError: true, data: { code: "FORBIDDEN", data: { reason: "ai_changes_off" } } });
    expect(await owner.call("customerDetails", { id: crypto.randomUUID() })).toMatchObject({ isError: true, data: { code: "FORBIDDEN", data: { reason: "customer_details_off" } } });
    const stored = await withStore(db, store.id, (tx) => tx.$client.query("select count(*)::int as n from ai_approval where source = 'assistant'"));
    expect(stored.rows).toEqual([{ n: 0 }]);
  });

  it("a conversation in store A never reads or proposes changes to store B's rows", async () => {
    const a = await makeStore(db);
    const b = await makeStore(db);
    await settings(a, "mcp_allow_changes = true");
    const { call } = await assistantOf(a);
    const theirs = await fixture(b);
    expect(await call("getProduct", { id: theirs.product })).toMatchObject({ isError: true, data: { code: "NOT_FOUND" } });
    const proposed = await call("updateProduct", { id: theirs.product, variants: [{ id: theirs.variant, priceMinor: 1 }] });
    expect(proposed.isError).toBe(true);
    expect((await fixture(b)).price).toBe(theirs.price);
  });
});
