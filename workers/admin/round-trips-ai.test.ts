import { describe, expect, it } from "vitest";
import { finishProposal, proposalCall, readProposal } from "#shared/assistant/proposal-units";
import { withStore } from "#shared/db/with-store";
import { createLogger } from "#shared/core/log";
import type { Principal } from "#shared/pipeline/principal";
import { updateProduct } from "#shared/procedures/products";
import { rpc, type Browser } from "../../test/admin";
import { makeStore, testDb } from "../../test/harness";
import { adminFetch, connectMcpClient, mcpUrl, SECURE_ADMIN } from "../../test/oauth";
import { traced } from "../../test/proxy";

/**
 * Round trips of an AI client's change (modelled on ./round-trips.test.ts "round trips: changes"): a change
 * tool over MCP and an OAuth connection's change at /api/v1, with 'Changes need approval' on and off. Two
 * on the answer's path: the caller's opening with what the proposal reads, then the proposal (and the
 * change itself when approval is off). An approved proposal's result is stored after the answer.
 */
const db = testDb();


const rows = <R = Record<string, unknown>>(storeId: string, text: string, values: unknown[] = []) =>
  withStore(db, storeId, (tx) => tx.$client.query(text, values)).then((r) => r.rows as R[]);

/** A connected OAuth client of a fresh store that lets AI clients change things, and its fixture rows. */
async function connected() {
  const c = await connectMcpClient(db, { areas: ["products:write", "inventory:write", "content:write", "discounts:write"] });
  expect((await rpc(c.browser, "store/update", { mcpAllowChanges: true })).status).toBe(200);
  const [fixture] = await rows<{ product: string; variant: string; location: string; grant: string }>(
    c.store.id,
    `select (select id from product limit 1) as product, (select id from product_variant limit 1) as variant,
       (select id from location limit 1) as location, (select id from api_grant where kind = 'oauth' limit 1) as "grant"`,
  );
  return { ...c, access: c.oauth.saved!.access_token, fixture: fixture! };
}

const approvalNeeded = (browser: Browser, on: boolean) => rpc(browser, "store/update", { mcpChangesNeedApproval: on });

/** One tools/call POST, traced; the tool's answer and whether it is an error. */
async function toolCall(slug: string, access: string, name: string, args: Record<string, unknown>) {
  const { status, body, trips } = await traced((h) =>
    adminFetch(mcpUrl(slug), {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${access}`, ...h },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
    }),
  );
  const { result } = JSON.parse(body) as { result: { content: { text: string }[]; isError?: boolean } };
  return { status, text: result.content[0]!.text, answer: JSON.parse(result.content[0]!.text) as Record<string, unknown>, isError: result.isError === true, trips };
}

async function apiCall(access: string, path: string, input: unknown) {
  const { status, body, trips } = await traced((h) =>
    adminFetch(`${SECURE_ADMIN}/api/v1/${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${access}`, ...h },
      body: JSON.stringify({ json: input }),
    }),
  );
  return { status, json: (JSON.parse(body) as { json: Record<string, unknown> }).json, trips };
}

const titleOf = async (storeId: string, id: string) => (await rows<{ title: string }>(storeId, "select title from product where id = $1", [id]))[0]?.title;
const approvalRow = async (storeId: string, id: unknown) =>
  (await rows<{ status: string; result: unknown; error: string | null; source: string; tool: string | null }>(storeId, "select status, result, error, source, tool from ai_approval where id = $1", [id]))[0];

describe("round trips: an AI client's change", () => {
  it("MCP, approval needed: a change tool's call is two round trips; the proposal waits, nothing changed", async () => {
    const { store, access, fixture } = await connected();
    const { status, answer, trips } = await toolCall(store.slug, access, "updateProduct", { id: fixture.product, title: "Proposed" });
    expect(status).toBe(200);
    expect(answer).toMatchObject({ status: "pending", summary: 'Update product "Fixture": title "Fixture" → "Proposed".' });
    expect(trips.turns).toBeLessThanOrEqual(2);
    expect(trips.after.turns).toBe(0);
    expect(await approvalRow(store.id, answer["approvalId"])).toMatchObject({ status: "pending", source: "mcp", tool: "updateProduct", result: null });
    expect(await titleOf(store.id, fixture.product)).toBe("Fixture");
    const logged = await rows(store.id, "select 1 from api_activity where kind = 'write' and procedure = 'products.update' and via = 'mcp'");
    expect(logged).toHaveLength(1);
  });

  it("the member's approval: two round trips, three when the change reads before it decides; the result after the answer (decision 0018)", async () => {
    const { store, browser, access, fixture } = await connected();
    const approve = async (approvalId: unknown) => {
      const approved = await traced((h) => rpc(browser, "aiApprovals/approve", { id: approvalId }, h));
      expect(approved.status).toBe(200);
      expect(JSON.parse(approved.body)).toMatchObject({ json: { state: "approved" } });
      return [approved.trips.turns, approved.trips.after.turns];
    };
    // products.update decides in its guarded statements: the member's unit, then the change.
    const update = await toolCall(store.slug, access, "updateProduct", { id: fixture.product, title: "Approved" });
    expect(await approve(update.answer["approvalId"])).toEqual([2, 1]);
    expect(await titleOf(store.id, fixture.product)).toBe("Approved");
    // products.create without a handle reads a free one first (its `prepare`): the member's unit, that read, the change.
    const create = await apiCall(access, "products/create", { title: "Approved Kurta", variants: [{ priceMinor: 1000 }] });
    expect(create.status).toBe(202);
    expect(await approve((create.json["proposal"] as Record<string, unknown>)["approvalId"])).toEqual([3, 1]);
    expect(await rows(store.id, "select handle from product where title = 'Approved Kurta'")).toEqual([{ handle: "approved-kurta" }]);
  });

  it("approvals racing for one proposal: the change runs once, the others hear it is approved (409)", async () => {
    const { store, browser, access, fixture } = await connected();
    const { answer } = await toolCall(store.slug, access, "adjustInventory", { variantId: fixture.variant, locationId: fixture.location, delta: 4, reason: "received" });
    const answers = await Promise.all(Array.from({ length: 4 }, () => rpc(browser, "aiApprovals/approve", { id: answer["approvalId"] })));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 409, 409, 409]);
    const onHand = await rows<{ on_hand: number }>(store.id, "select on_hand from inventory_level where variant_id = $1 and location_id = $2", [fixture.variant, fixture.location]);
    expect(onHand).toEqual([{ on_hand: 5 + 4 }]);
    expect(await approvalRow(store.id, answer["approvalId"])).toMatchObject({ status: "approved", error: null });
  });

  it("MCP, approval off: two round trips with the change itself; its result is stored after the answer, as the answer shows it", async () => {
    const { store, browser, access, fixture } = await connected();
    await approvalNeeded(browser, false);
    const { answer, trips } = await toolCall(store.slug, access, "updateProduct", { id: fixture.product, title: "Straight through", vendor: "AI" });
    expect(answer).toMatchObject({ status: "approved", result: { id: fixture.product, title: "Straight through", vendor: "AI" } });
    expect(trips.turns).toBeLessThanOrEqual(2);
    expect(trips.after.turns).toBe(1);
    expect(await titleOf(store.id, fixture.product)).toBe("Straight through");
    const stored = await approvalRow(store.id, answer["approvalId"]);
    expect(stored).toMatchObject({ status: "approved", error: null });
    // The answer carries the result exactly as the row now holds it (jsonb's key order included).
    expect(JSON.stringify(stored!.result)).toBe(JSON.stringify(answer["result"]));

    const adjusted = await toolCall(store.slug, access, "adjustInventory", { variantId: fixture.variant, locationId: fixture.location, delta: 2, reason: "received" });
    expect(adjusted.answer).toMatchObject({ status: "approved", result: { onHand: 7, available: 7, restocked: false } });
    expect(adjusted.trips.turns).toBeLessThanOrEqual(2);
    expect(JSON.stringify((await approvalRow(store.id, adjusted.answer["approvalId"]))!.result)).toBe(JSON.stringify(adjusted.answer["result"]));
  });

  it("MCP, approval off, the change refused: the failed proposal is recorded in one more round trip (an error path)", async () => {
    const { store, browser, access, fixture } = await connected();
    await approvalNeeded(browser, false);
    const { answer, isError, trips } = await toolCall(store.slug, access, "adjustInventory", { variantId: fixture.variant, locationId: fixture.location, delta: -1000, reason: "damaged" });
    expect(isError).toBe(true);
    expect(answer).toMatchObject({ status: "failed", error: "This adjustment would take on-hand below zero (on hand 5)." });
    expect(trips.turns).toBe(3);
    expect(trips.after.turns).toBe(0);
    expect(await approvalRow(store.id, answer["approvalId"])).toMatchObject({ status: "failed", result: null });
    expect(await rows(store.id, "select on_hand from inventory_level where variant_id = $1", [fixture.variant])).toEqual([{ on_hand: 5 }]);
  });

  it("MCP, approval off: another store's product is NOT_FOUND from the proposal's reading; nothing stored, nothing changed", async () => {
    const { store, browser, access } = await connected();
    await approvalNeeded(browser, false);
    const other = await makeStore(db);
    const [theirs] = await rows<{ id: string }>(other.id, "select id from product limit 1");
    const { answer, isError, trips } = await toolCall(store.slug, access, "updateProduct", { id: theirs!.id, title: "Taken over" });
    expect(isError).toBe(true);
    expect(answer).toEqual({ code: "NOT_FOUND", message: "Product not found in this store." });
    expect(trips.turns).toBe(1);
    expect(await titleOf(other.id, theirs!.id)).toBe("Fixture");
    expect(await rows(store.id, "select 1 from ai_approval where procedure = 'products.update'")).toEqual([]);
  });

  it("/api/v1 with an OAuth token, approval needed: 202 with the proposal in two round trips", async () => {
    const { store, access, fixture } = await connected();
    const { status, json, trips } = await apiCall(access, "products/update", { id: fixture.product, title: "Via the API" });
    expect(status).toBe(202);
    expect(json["proposal"]).toMatchObject({ status: "pending", summary: 'Update product "Fixture": title "Fixture" → "Via the API".' });
    expect(trips.turns).toBeLessThanOrEqual(2);
    expect(trips.after.turns).toBe(0);
    expect(await titleOf(store.id, fixture.product)).toBe("Fixture");
    // A procedure without a change tool: its proposal reads nothing, the caller's opening still comes first.
    const created = await apiCall(access, "products/create", { title: "Proposed product", variants: [{ priceMinor: 100 }] });
    expect(created.status).toBe(202);
    expect(created.trips.turns).toBeLessThanOrEqual(2);
  });

  it("/api/v1 with an OAuth token, approval off: the change itself in two round trips, no proposal", async () => {
    const { store, browser, access, fixture } = await connected();
    await approvalNeeded(browser, false);
    const { status, json, trips } = await apiCall(access, "products/update", { id: fixture.product, title: "Changed via the API" });
    expect(status).toBe(200);
    expect(json).toMatchObject({ id: fixture.product, title: "Changed via the API" });
    expect(trips.turns).toBeLessThanOrEqual(2);
    expect(trips.after.turns).toBe(0);
    expect(await titleOf(store.id, fixture.product)).toBe("Changed via the API");
    expect(await rows(store.id, "select 1 from ai_approval where procedure = 'products.update'")).toEqual([]);
  });
});

describe("the guard: 'Changes need approval' switched on between the two units", () => {
  const log = createLogger({ test: true }, "error");

  async function readWhileOff(door: "mcp" | "token") {
    const c = await connected();
    await approvalNeeded(c.browser, false);
    const principal: Principal = { kind: "oauth", grantId: c.fixture.grant, storeId: c.store.id };
    const proc = { ...updateProduct, write: updateProduct.write! };
    const call = await proposalCall(db, principal, proc, { id: c.fixture.product, title: "Raced" }, { door, log });
    const reading = await readProposal(call);
    expect(reading.caller.store.mcpChangesNeedApproval).toBe(false);
    await approvalNeeded(c.browser, true);
    return { ...c, call, reading };
  }

  it("over MCP the change does not run: read again, it waits as a proposal", async () => {
    const { store, fixture, call, reading } = await readWhileOff("mcp");
    const outcome = await finishProposal(call, reading);
    expect(outcome).toMatchObject({ kind: "proposed", proposal: { state: "pending" } });
    expect(await titleOf(store.id, fixture.product)).toBe("Fixture");
    expect(await rows(store.id, "select status from ai_approval where procedure = 'products.update'")).toEqual([{ status: "pending" }]);
  });

  it("at /api/v1 the change does not run: read again, it waits as a proposal", async () => {
    const { store, fixture, call, reading } = await readWhileOff("token");
    expect(await finishProposal(call, reading)).toMatchObject({ kind: "proposed", proposal: { state: "pending", source: "api" } });
    expect(await titleOf(store.id, fixture.product)).toBe("Fixture");
  });
});
