import { describe, expect, it } from "vitest";
import { roleAllows } from "#shared/auth/permissions";
import { ROLES } from "#shared/db/schema";
import { procedureKey } from "#shared/procedures/define";
import { PROCEDURES } from "#shared/registry/procedures";
import { makeStore, testDb } from "../../test/harness";
import { addMember } from "../../test/procedures";
import { rpc, rpcJson, sessionFor, type Browser, type RpcError } from "../../test/admin";

const db = testDb();

/**
 * Generated from the registry: every procedure × every role, through the real /api/rpc door.
 * Allowed means anything but the permission refusal (an empty input may well be a 400); refused means
 * exactly the 'Your role does not allow' 403. A procedure added to the registry is covered here at once.
 */
describe("permission matrix (every registered procedure × every role)", () => {
  it("allows and refuses exactly as the role table says", async () => {
    const store = await makeStore(db);
    const browsers = {} as Record<(typeof ROLES)[number], Browser>;
    for (const role of ROLES) {
      const userId = role === "owner" ? store.ownerUserId : (await addMember(db, store, role)).userId;
      browsers[role] = await sessionFor(db, userId, store.id);
    }
    const mismatches: string[] = [];
    let checked = 0;
    for (const proc of PROCEDURES) {
      for (const role of ROLES) {
        const expectAllowed = proc.access === "none" || proc.access === "session" || roleAllows(role, proc.access);
        const res = await rpc(browsers[role], `${proc.router}/${proc.name}`, {});
        const body = res.status === 403 ? await rpcJson<RpcError>(res) : undefined;
        const refused = res.status === 403 && /^Your role does not allow/.test(body?.message ?? "");
        if (res.status >= 500) mismatches.push(`${procedureKey(proc)} as ${role}: ${res.status}`);
        if (refused === expectAllowed) mismatches.push(`${procedureKey(proc)} as ${role}: expected ${expectAllowed ? "allowed" : "refused"}, got ${res.status}`);
        checked++;
      }
    }
    expect(mismatches).toEqual([]);
    expect(checked).toBe(PROCEDURES.length * ROLES.length);
  });

  it("declares every procedure with exactly one kind of access and a description", () => {
    for (const proc of PROCEDURES) {
      expect(typeof proc.access).toBe("string");
      expect(proc.description.length, procedureKey(proc)).toBeGreaterThan(20);
    }
    // The named procedures are all registered.
    const keys = new Set(PROCEDURES.map(procedureKey));
    for (const key of [
      "staff.me", "store.current", "store.update", "store.switch", "staff.list", "staff.invite", "staff.setRole", "staff.remove",
      "products.list", "products.get", "products.create", "products.update", "products.archive", "products.delete",
      "locations.list", "locations.create", "inventory.levels", "inventory.adjust",
      "customers.list", "customers.get", "customers.create", "customers.update",
      "discounts.list", "discounts.create", "discounts.update", "discounts.disable",
      "content.list", "content.get", "content.create", "content.update", "content.publish", "analytics.summary",
      "orders.list", "orders.get", "orders.setStatus", "orders.cancel", "orders.fulfill", "orders.refund", "orders.markRto",
      "returns.request", "returns.approve", "returns.reject", "returns.receive", "returns.refund", "tasks.list", "tasks.done",
    ]) {
      expect(keys.has(key), key).toBe(true);
    }
    expect(PROCEDURES.find((p) => procedureKey(p) === "staff.me")?.access).toBe("none");
    expect(PROCEDURES.find((p) => procedureKey(p) === "store.switch")?.access).toBe("session");
    expect(PROCEDURES.find((p) => procedureKey(p) === "products.delete")?.access).toBe("records.delete");
    expect(PROCEDURES.find((p) => procedureKey(p) === "orders.cancel")?.access).toBe("orders.cancel");
    expect(PROCEDURES.find((p) => procedureKey(p) === "orders.refund")?.access).toBe("orders.refund");
    expect(PROCEDURES.find((p) => procedureKey(p) === "returns.refund")?.access).toBe("orders.refund");
  });
});
