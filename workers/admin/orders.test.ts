import { describe, expect, it } from "vitest";
import { AREA_SCOPES } from "#shared/auth/grants";
import { withStore } from "#shared/db/with-store";
import { api, createToken, rpc, rpcJson, sessionFor, type RpcError } from "../../test/admin";
import { makeStore, testDb, type TestStore } from "../../test/harness";
import { adminFetch, connectMcpClient, SECURE_ADMIN, toolResult } from "../../test/oauth";
import { addMember } from "../../test/procedures";

/**
 * The orders procedures at the three doors (issue 11 part 8): /api/rpc by role, /api/v1 within a token's
 * areas and never cancel, MCP's listOrders/getOrder under the store's customer-details setting.
 * The fixture order of makeStore (#1001, buyer@example.test, unpaid) is the order.
 */
const db = testDb();

interface OrderItem {
  id: string;
  number: number;
  email: string | null;
}

const orderOf = (s: TestStore) =>
  withStore(db, s.id, (tx) => tx.$client.query<{ id: string; status: string; payment_status: string }>("select id, status, payment_status from shop_order")).then((r) => r.rows[0]!);

const apiAt = (token: string, path: string, input: unknown = {}) =>
  adminFetch(`${SECURE_ADMIN}/api/v1/${path}`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${token}` }, body: JSON.stringify({ json: input }) });

describe("orders at /api/rpc", () => {
  it("Staff list, read and mark paid but are refused cancel; an Owner's cancel of a paid order is 409 refund_first", async () => {
    const store = await makeStore(db);
    const { id } = await orderOf(store);
    const staff = await sessionFor(db, (await addMember(db, store, "staff")).userId, store.id);
    const owner = await sessionFor(db, store.ownerUserId, store.id);
    expect(await rpcJson(await rpc(staff, "orders/list", { query: "#1001" }))).toMatchObject({ total: 1, items: [{ id, email: "buyer@example.test" }] });
    expect(await rpcJson(await rpc(staff, "orders/get", { id }))).toMatchObject({ number: 1001, lines: [{ productTitle: "Fixture", quantity: 1 }], attempts: [{ attempt: 1, status: "created" }] });
    const refused = await rpc(staff, "orders/cancel", { orderId: id });
    expect(refused.status).toBe(403);
    expect(await rpcJson<RpcError>(refused)).toMatchObject({ message: "Your role does not allow cancelling orders (orders.cancel).", data: { permission: "orders.cancel" } });
    expect((await rpc(staff, "orders/setStatus", { orderId: id, action: "mark_paid" })).status).toBe(200);
    const conflict = await rpc(owner, "orders/cancel", { orderId: id });
    expect(conflict.status).toBe(409);
    expect(await rpcJson<RpcError>(conflict)).toMatchObject({ code: "CONFLICT", data: { reason: "refund_first", issues: [{ path: "orderId" }] } });
    expect(await orderOf(store)).toMatchObject({ status: "open", payment_status: "paid" });
  });
});

describe("orders at /api/v1", () => {
  it("a token reads orders with orders:read, marks paid with orders:write, and never cancels", async () => {
    const store = await makeStore(db);
    const { id } = await orderOf(store);
    const owner = await sessionFor(db, store.ownerUserId, store.id);
    const reader = (await createToken(owner, ["orders:read"])).token;
    // Created tokens are scripts: the AI-client settings do not hide emails from them.
    expect(await rpcJson(await api(reader, "orders/list", {}))).toMatchObject({ total: 1, items: [{ id, email: "buyer@example.test" }] });
    expect((await api(reader, "orders/get", { id })).status).toBe(200);
    expect((await api(reader, "orders/setStatus", { orderId: id, action: "mark_paid" })).status).toBe(403);
    const everything = (await createToken(owner, [...AREA_SCOPES])).token;
    const cancel = await api(everything, "orders/cancel", { orderId: id });
    expect(cancel.status).toBe(403);
    expect(await rpcJson<RpcError>(cancel)).toMatchObject({ code: "FORBIDDEN", data: { permission: "orders.cancel", reason: "members_only" } });
    expect(await orderOf(store)).toMatchObject({ status: "open", payment_status: "unpaid" });
    const writer = (await createToken(owner, ["orders:write"])).token;
    expect(await rpcJson(await api(writer, "orders/setStatus", { orderId: id, action: "mark_paid" }))).toMatchObject({ id, paymentStatus: "paid" });
    expect((await api(writer, "orders/cancel", { orderId: id })).status).toBe(403);
    // Another store's order through this store's token: not found.
    const other = await orderOf(await makeStore(db));
    expect((await api(writer, "orders/get", { id: other.id })).status).toBe(404);
  });
});

describe("orders over MCP and OAuth", () => {
  it("listOrders and getOrder within the orders area; emails and getOrder follow 'Let clients read customer details'", async () => {
    const { client, store, browser, oauth } = await connectMcpClient(db, { areas: ["orders:write"] });
    const { id } = await orderOf(store);
    // orders:write adds no tool: cancel and refunds are never tools, and mark_paid is not one either.
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(["getOrder", "listOrders"]);
    expect(toolResult(await client.callTool({ name: "listOrders", arguments: {} }))).toMatchObject({ total: 1, items: [{ id, number: 1001, email: null }] });
    // Barred from details, the client cannot probe emails by searching either.
    expect(toolResult(await client.callTool({ name: "listOrders", arguments: { query: "buyer" } }))).toMatchObject({ total: 0 });
    expect(toolResult(await client.callTool({ name: "listOrders", arguments: { email: "buyer@example.test" } }))).toMatchObject({ total: 0 });
    expect(toolResult(await client.callTool({ name: "listOrders", arguments: { query: "#1001" } }))).toMatchObject({ total: 1 });
    const blocked = await client.callTool({ name: "getOrder", arguments: { id } });
    expect(blocked.isError).toBe(true);
    expect(toolResult(blocked)).toMatchObject({ code: "FORBIDDEN", data: { reason: "customer_details_off" } });
    const access = oauth.saved!.access_token;
    expect(await rpcJson(await apiAt(access, "orders/get", { id }))).toMatchObject({ data: { reason: "customer_details_off" } });

    expect((await rpc(browser, "store/update", { mcpReadCustomerDetails: true })).status).toBe(200);
    const order = toolResult(await client.callTool({ name: "getOrder", arguments: { id } }));
    expect(order).toMatchObject({ number: 1001, email: "buyer@example.test", shipments: [expect.objectContaining({ provider: "manual", status: "pending" })], attempts: [{ attempt: 1 }] });
    const listed = toolResult(await client.callTool({ name: "listOrders", arguments: { query: "BUYER@" } })) as { items: OrderItem[] };
    expect(listed.items.map((i) => i.email)).toEqual(["buyer@example.test"]);
    expect(toolResult(await client.callTool({ name: "listOrders", arguments: { email: "Buyer@Example.test" } }))).toMatchObject({ total: 1, items: [{ id }] });

    // The connection can never cancel, whatever its areas and the store's settings.
    await rpc(browser, "store/update", { mcpAllowChanges: true, mcpChangesNeedApproval: false });
    expect((await apiAt(access, "orders/cancel", { orderId: id })).status).toBe(403);
    expect(await orderOf(store)).toMatchObject({ status: "open" });
    const activity = await withStore(db, store.id, (tx) => tx.$client.query("select procedure from api_activity where via = 'mcp' order by procedure"));
    expect(new Set(activity.rows.map((r) => r.procedure))).toEqual(new Set(["orders.get", "orders.list"]));
  });
});
