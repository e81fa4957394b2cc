import { describe, expect, it } from "vitest";
import { makeStore, testDb } from "../../test/harness";
import { foldReadActivity, grantById, grantByTokenHash, inline, membershipOf, StatementParamError, storeExpression } from "./statements";
import { withStore } from "./with-store";

const db = testDb();

describe("fixed opening statements", () => {
  const hostile = ["x' or '1'='1", "00000000-0000-0000-0000-000000000000'; drop table store; --", "", "A".repeat(64)];

  it("refuse every value that does not have its parameter's shape, before any SQL is written", () => {
    for (const value of hostile) {
      expect(() => membershipOf(value)).toThrow(StatementParamError);
      expect(() => grantById(value)).toThrow(StatementParamError);
      expect(() => grantByTokenHash(value)).toThrow(StatementParamError);
      expect(() => storeExpression({ tokenHash: value })).toThrow(StatementParamError);
    }
    const grantId = crypto.randomUUID();
    expect(() => foldReadActivity({ grantId, procedure: "products.list'--", via: "token", at: new Date() })).toThrow(StatementParamError);
    expect(() => foldReadActivity({ grantId, procedure: "products.list", via: "session", at: new Date() })).toThrow(StatementParamError);
  });

  it("write checked values as plain literals, and the same text runs with bind parameters", async () => {
    const id = crypto.randomUUID().toUpperCase();
    const s = membershipOf(id);
    expect(s.params).toEqual([id.toLowerCase()]);
    expect(inline(s)).toContain(`m.user_id = '${id.toLowerCase()}'`);
    expect(inline(s)).not.toMatch(/\$\d/);
    const store = await makeStore(db);
    const statement = membershipOf(store.ownerUserId);
    const { rows } = await withStore(db, store.id, (tx) => tx.$client.query(statement.text, [...statement.params]));
    expect(rows).toEqual([expect.objectContaining({ id: store.id, user_id: store.ownerUserId, role: "owner" })]);
  });

  it("a store key by token hash that names no grant resolves no store", async () => {
    const unknown = "0".repeat(64);
    await expect(withStore(db, { tokenHash: unknown }, async () => "ran")).rejects.toThrow("No store resolved");
  });
});
