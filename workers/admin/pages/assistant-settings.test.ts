import { describe, expect, it } from "vitest";
import { rowsOn, withStore } from "#shared/db/with-store";
import { recordUsage } from "#shared/assistant/usage";
import { makeStore, testDb } from "../../../test/harness";
import { page, postForm, rpc, rpcJson, sessionFor } from "../../../test/admin";
import { addMember } from "../../../test/procedures";

const db = testDb();

/** The store's assistant in Settings (its daily token budget) and in MCP & API (today's use), issue 24 item 5. */
describe("the assistant's budget and today's use in the admin", () => {
  it("Settings saves the daily token budget, refusing one out of range by its field; MCP & API shows today's use against it", async () => {
    const store = await makeStore(db);
    const owner = await sessionFor(db, store.ownerUserId, store.id);
    expect(await (await page(owner, "/settings")).text()).toMatch(/name="assistantDailyTokens"[^>]*value="200000"/);
    const bad = await postForm(owner, "/settings", { csrf: owner.csrf, name: store.name, assistantDailyTokens: "-5" });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("assistantDailyTokens");
    expect((await postForm(owner, "/settings", { csrf: owner.csrf, name: store.name, assistantDailyTokens: "50000" })).status).toBe(303);
    expect(await rpcJson(await rpc(owner, "store/current"))).toMatchObject({ assistantDailyTokens: 50_000 });
    await withStore(db, store.id, (tx) => rowsOn(tx, (q) => recordUsage(q, tx.storeId, { input: 12_000, output: 345 })));
    const html = await (await page(owner, "/settings/api")).text();
    expect(html).toContain('<span data-usage="tokens">12,345</span> of 50,000 tokens used today');
    expect(html).toMatch(/<meter[^>]*max="50000"[^>]*value="12345"/);
  });

  it("a budget of 0 says the assistant is off; Staff do not see the store's use", async () => {
    const store = await makeStore(db);
    const owner = await sessionFor(db, store.ownerUserId, store.id);
    await postForm(owner, "/settings", { csrf: owner.csrf, name: store.name, assistantDailyTokens: "0" });
    expect(await (await page(owner, "/settings/api")).text()).toContain("The assistant is switched off");
    const staff = await addMember(db, store, "staff");
    const html = await (await page(await sessionFor(db, staff.userId, store.id), "/settings/api")).text();
    expect(html).not.toContain("assistant-usage");
  });
});
