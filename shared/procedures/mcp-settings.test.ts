import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { isAppError } from "#shared/core/errors";
import { testDb } from "../../test/harness";
import { addMember, callerFor, outboxPayloads, storeWithCaller } from "../../test/procedures";

const db = testDb();

const failure = (p: Promise<unknown>) =>
  p.then(
    () => ({ code: "ok", path: undefined as string | undefined, permission: undefined as unknown }),
    (e: unknown) => {
      if (!isAppError(e)) throw e;
      const issues = e.data?.issues as { path: string }[] | undefined;
      return { code: e.code, path: issues?.[0]?.path, permission: e.data?.permission };
    },
  );

const eventsOf = (storeId: string, kind: string) => outboxPayloads(db, storeId, kind);

const columnsOf = (storeId: string) =>
  withStore(db, storeId, (tx) =>
    tx.$client.query<{ mcp_read_customer_details: boolean; mcp_allow_changes: boolean; mcp_changes_need_approval: boolean }>(
      "select mcp_read_customer_details, mcp_allow_changes, mcp_changes_need_approval from store where id = $1",
      [storeId],
    ),
  ).then((r) => r.rows[0]);

describe("mcpSettings procedures", () => {
  it("a new store starts with reads of customer details off, changes off and approval on", async () => {
    const { call } = await storeWithCaller(db);
    expect(await call("mcpSettings.get", {})).toEqual({ readCustomerDetails: false, allowChanges: false, changesNeedApproval: true });
  });

  it("the Owner updates the settings; the store row and the outbox record the change", async () => {
    const { store, call } = await storeWithCaller(db);
    const after = await call("mcpSettings.update", { readCustomerDetails: true, allowChanges: true, changesNeedApproval: false });
    expect(after).toEqual({ readCustomerDetails: true, allowChanges: true, changesNeedApproval: false });
    expect(await call("mcpSettings.get", {})).toEqual(after);
    expect(await columnsOf(store.id)).toEqual({ mcp_read_customer_details: true, mcp_allow_changes: true, mcp_changes_need_approval: false });
    expect(await eventsOf(store.id, "store.mcp_settings_updated")).toEqual([
      { fields: ["readCustomerDetails", "allowChanges", "changesNeedApproval"] },
    ]);

    // Only the fields given change; the event names only those whose value changed.
    expect(await call("mcpSettings.update", { allowChanges: false, readCustomerDetails: true })).toEqual({
      readCustomerDetails: true,
      allowChanges: false,
      changesNeedApproval: false,
    });
    // Repeating the current values changes nothing and emits nothing.
    await call("mcpSettings.update", { changesNeedApproval: false });
    expect(await eventsOf(store.id, "store.mcp_settings_updated")).toEqual([
      { fields: ["readCustomerDetails", "allowChanges", "changesNeedApproval"] },
      { fields: ["allowChanges"] },
    ]);
  });

  it("an Admin may read and change them", async () => {
    const { store, call } = await storeWithCaller(db, "admin");
    expect(await call("mcpSettings.update", { allowChanges: true })).toMatchObject({ allowChanges: true });
    expect(await eventsOf(store.id, "store.mcp_settings_updated")).toEqual([{ fields: ["allowChanges"] }]);
  });

  it("refuses Staff by permission, before the input is looked at, and changes nothing", async () => {
    const { store, call } = await storeWithCaller(db, "staff");
    expect(await failure(call("mcpSettings.get", {}))).toMatchObject({ code: "FORBIDDEN", permission: "settings.read" });
    expect(await failure(call("mcpSettings.update", { allowChanges: true }))).toMatchObject({ code: "FORBIDDEN", permission: "settings.write" });
    expect(await failure(call("mcpSettings.update", { nonsense: 1 }))).toMatchObject({ code: "FORBIDDEN" });
    expect(await columnsOf(store.id)).toEqual({ mcp_read_customer_details: false, mcp_allow_changes: false, mcp_changes_need_approval: true });
    expect(await eventsOf(store.id, "store.mcp_settings_updated")).toEqual([]);
  });

  it("answers 400 for an empty update (naming the root), unknown fields and non-booleans", async () => {
    const { store, call } = await storeWithCaller(db);
    expect(await failure(call("mcpSettings.update", {}))).toEqual({ code: "BAD_REQUEST", path: "", permission: undefined });
    expect(await failure(call("mcpSettings.update", { allowChanges: true, extra: true }))).toMatchObject({ code: "BAD_REQUEST" });
    expect(await failure(call("mcpSettings.update", { allowChanges: "yes" }))).toMatchObject({ code: "BAD_REQUEST", path: "allowChanges" });
    expect(await failure(call("mcpSettings.get", { x: 1 }))).toMatchObject({ code: "BAD_REQUEST" });
    expect(await eventsOf(store.id, "store.mcp_settings_updated")).toEqual([]);
  });

  it("each store's settings are its own", async () => {
    const a = await storeWithCaller(db);
    const b = await storeWithCaller(db);
    await a.call("mcpSettings.update", { allowChanges: true });
    expect(await b.call("mcpSettings.get", {})).toMatchObject({ allowChanges: false });
    // A member of store B calling into store A is not a member there.
    const outsider = await addMember(db, b.store, "owner");
    expect(await failure(callerFor(db, outsider.userId, a.store.id)("mcpSettings.update", { allowChanges: false }))).toMatchObject({
      code: "FORBIDDEN",
    });
    expect(await a.call("mcpSettings.get", {})).toMatchObject({ allowChanges: true });
  });
});
