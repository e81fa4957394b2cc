import { describe, expect, it } from "vitest";
import { api, createToken, rpc, type Browser, type RpcError, ownerOf } from "../../test/admin";
import { withStore } from "#shared/db/with-store";
import { makeStore, testDb } from "../../test/harness";
import { callerFor, failureMessage, outboxPayloads } from "../../test/procedures";
import { traced } from "../../test/proxy";
import { racing } from "../../test/racing";

/**
 * Round trips of the changes to pages, customers, discounts, short links, campaigns, automations and the
 * AI-client settings (issue 19's goal table): at most two each, one when nothing needs reading first.
 * Then the guards those changes gained: another store's ids, and a change that lands between two trips.
 */
const db = testDb();


const owner = () => ownerOf(db);

/** A change through /api/rpc: its status, its round trips (none after the answer) and its answer. */
function changes(browser: Browser) {
  return async <T = { id: string }>(path: string, input: unknown, status = 200) => {
    const { res, trips, body } = await traced((h) => rpc(browser, path, input, h));
    expect(res.status, `${path}: ${body}`).toBe(status);
    expect(trips.after.turns, path).toBe(0);
    const parsed = JSON.parse(body) as { json: T };
    return { turns: trips.turns, out: parsed.json };
  };
}

const suffix = () => crypto.randomUUID().slice(0, 8);

describe("round trips: changes to content, customers, discounts, links, marketing and AI-client settings", () => {
  it("pages: a derived handle is read first (two), a given one is not (one); update one; publish one (its event only for a real change)", async () => {
    const { browser } = await owner();
    const change = changes(browser);
    const derived = await change("content/create", { title: "Round Trip Page" });
    expect(derived.turns).toBe(2);
    expect((await change("content/create", { title: "Given", handle: `given-${suffix()}` })).turns).toBe(1);
    const id = derived.out.id;
    expect((await change("content/update", { id, body: "Text" })).turns).toBe(1);
    expect((await change("content/publish", { id })).turns).toBe(1);
    expect((await change("content/publish", { id })).turns).toBe(1);
    expect((await change("content/publish", { id, published: false })).turns).toBe(1);
  });

  it("customers: create, update (also with no field), delete: one each", async () => {
    const { browser } = await owner();
    const change = changes(browser);
    const made = await change("customers/create", { email: `rt-${suffix()}@example.test`, acceptsMarketing: true });
    expect(made.turns).toBe(1);
    const id = made.out.id;
    expect((await change("customers/update", { id, phone: "+919876543210", email: null, acceptsMarketing: false })).turns).toBe(1);
    expect((await change("customers/update", { id })).turns).toBe(1);
    expect((await change("customers/delete", { id })).turns).toBe(1);
  });

  it("discounts: create and update one each; disable reads the status first (two)", async () => {
    const { browser } = await owner();
    const change = changes(browser);
    const made = await change("discounts/create", { code: `RT${suffix()}`, kind: "percentage", value: 10 });
    expect(made.turns).toBe(1);
    const id = made.out.id;
    expect((await change("discounts/update", { id, value: 20, endsAt: new Date(Date.now() + 3_600_000).toISOString() })).turns).toBe(1);
    expect((await change("discounts/disable", { id })).turns).toBe(2);
    expect((await change("discounts/disable", { id })).turns).toBe(2);
  });

  it("short links: create, update, delete: one each", async () => {
    const { browser } = await owner();
    const change = changes(browser);
    const made = await change("links/create", { slug: `rt-${suffix()}`, target: "/", utm: { source: "a", medium: "b", campaign: "c" } });
    expect(made.turns).toBe(1);
    expect((await change("links/update", { id: made.out.id, target: "/sale" })).turns).toBe(1);
    expect((await change("links/delete", { id: made.out.id })).turns).toBe(1);
  });

  it("campaigns and automations: create, update, cancel and automations.update: one each", async () => {
    const { browser } = await owner();
    const change = changes(browser);
    const later = new Date(Date.now() + 86_400_000).toISOString();
    const made = await change("campaigns/create", { name: "RT", subject: "Hi", body: "Hello", audience: "subscribers", startsAt: later });
    expect(made.turns).toBe(1);
    expect((await change("campaigns/update", { id: made.out.id, subject: "Hi again" })).turns).toBe(1);
    expect((await change("campaigns/cancel", { id: made.out.id })).turns).toBe(1);
    expect((await change("automations/update", { kind: "abandoned_checkout", enabled: true, delayMinutes: 30 })).turns).toBe(1);
  });

  it("AI-client settings: the settings are read first (two), also when nothing changes", async () => {
    const { browser } = await owner();
    const change = changes(browser);
    expect((await change("mcpSettings/update", { allowChanges: true })).turns).toBe(2);
    expect((await change("mcpSettings/update", { allowChanges: true })).turns).toBe(2);
  });

  it("a change through /api/v1 is logged in its own unit: one trip, nothing after the answer", async () => {
    const { browser } = await owner();
    const { token } = await createToken(browser, ["customers:write"]);
    const { res, trips, body } = await traced((h) => api(token, "customers/create", { email: `api-${suffix()}@example.test` }, h));
    expect(res.status, body).toBe(200);
    expect(trips.turns).toBe(1);
    expect(trips.after.turns).toBe(0);
  });
});

describe("guards of these changes: another store's ids", () => {
  const utm = { source: "a", medium: "b", campaign: "c" };

  it("another store's short link: update and delete answer 404 in one trip and change nothing", async () => {
    const a = await owner();
    const b = await owner();
    const theirs = (await callerFor(db, b.store.ownerUserId, b.store.id)("links.create", { slug: "theirs", target: "/x", utm })) as { id: string };
    const change = changes(a.browser);
    for (const [path, input] of [
      ["links/update", { id: theirs.id, target: "/hijacked" }],
      ["links/delete", { id: theirs.id }],
    ] as const) {
      const refused = await change<RpcError>(path, input, 404);
      expect(refused.turns, path).toBe(1);
      expect(refused.out).toMatchObject({ code: "NOT_FOUND", message: "Short link not found in this store." });
    }
    expect(await callerFor(db, b.store.ownerUserId, b.store.id)("links.list", {})).toMatchObject({ items: expect.arrayContaining([expect.objectContaining({ id: theirs.id, target: "/x" })]) });
    for (const kind of ["link.updated", "link.deleted"]) {
      expect(await outboxPayloads(db, a.store.id, kind)).toEqual([]);
      expect(await outboxPayloads(db, b.store.id, kind)).toEqual([]);
    }
  });

  it("another store's campaign: update and cancel answer 404 and change nothing", async () => {
    const a = await owner();
    const b = await owner();
    const bCall = callerFor(db, b.store.ownerUserId, b.store.id);
    const later = new Date(Date.now() + 86_400_000).toISOString();
    const theirs = (await bCall("campaigns.create", { name: "Theirs", subject: "S", body: "B", audience: "subscribers", startsAt: later })) as { id: string };
    const change = changes(a.browser);
    for (const [path, input] of [
      ["campaigns/update", { id: theirs.id, name: "Hijacked" }],
      ["campaigns/cancel", { id: theirs.id }],
    ] as const) {
      expect((await change<RpcError>(path, input, 404)).out).toMatchObject({ code: "NOT_FOUND", message: "Campaign not found in this store." });
    }
    expect(await bCall("campaigns.get", { id: theirs.id })).toMatchObject({ name: "Theirs", status: "scheduled" });
    expect(await outboxPayloads(db, a.store.id, "campaign.updated")).toEqual([]);
    expect(await outboxPayloads(db, a.store.id, "campaign.cancelled")).toEqual([]);
  });

  it("a finished campaign: the 409 names its status, as before", async () => {
    const { store, browser } = await owner();
    const [sent] = await withStore(db, store.id, (tx) => tx.$client.query<{ id: string }>("select id from campaign where status = 'sent'")).then((r) => r.rows);
    const change = changes(browser);
    expect((await change<RpcError>("campaigns/cancel", { id: sent!.id }, 409)).out).toMatchObject({
      code: "CONFLICT",
      message: "This campaign is sent already.",
      data: { reason: "campaign_finished", status: "sent" },
    });
    expect((await change<RpcError>("campaigns/update", { id: sent!.id, name: "Late" }, 409)).out).toMatchObject({
      code: "CONFLICT",
      message: "This campaign is sent; only a scheduled campaign can change.",
      data: { reason: "campaign_not_scheduled", status: "sent" },
    });
  });
});

const sqlIn = (storeId: string, text: string, values: unknown[] = []) => withStore(db, storeId, (tx) => tx.$client.query(text, values));

describe("guards of these changes: a change between the two trips", () => {
  it("content.create: a derived handle taken meanwhile is read again, and the next one is used", async () => {
    const store = await makeStore(db);
    const base = `race-${suffix()}`;
    const { raced, units } = racing(() => sqlIn(store.id, "insert into page (store_id, title, handle) values ($1, 'Other', $2)", [store.id, base]));
    const made = (await callerFor(raced, store.ownerUserId, store.id)("content.create", { title: base })) as { handle: string };
    expect(made.handle).toBe(`${base}-2`);
    expect(units()).toBe(4);
  });

  it("content.publish: a page published meanwhile is not published again (no second event)", async () => {
    const store = await makeStore(db);
    const call = callerFor(db, store.ownerUserId, store.id);
    const p = (await call("content.create", { title: "Race" })) as { id: string };
    const { raced, units } = racing(() => sqlIn(store.id, "update page set status = 'published', published_at = now() where id = $1", [p.id]));
    expect(await callerFor(raced, store.ownerUserId, store.id)("content.publish", { id: p.id })).toMatchObject({ id: p.id, status: "published" });
    expect(units()).toBe(1);
    expect(await outboxPayloads(db, store.id, "page.published")).toEqual([]);
  });

  it("discounts.disable: a discount disabled meanwhile is not disabled again (no second event)", async () => {
    const store = await makeStore(db);
    const call = callerFor(db, store.ownerUserId, store.id);
    const d = (await call("discounts.create", { code: `RACE${suffix()}`, kind: "percentage", value: 5 })) as { id: string };
    const { raced, units } = racing(() => sqlIn(store.id, "update discount set status = 'disabled' where id = $1", [d.id]));
    expect(await callerFor(raced, store.ownerUserId, store.id)("discounts.disable", { id: d.id })).toMatchObject({ status: "disabled", state: "disabled" });
    expect(units()).toBe(4);
    expect(await outboxPayloads(db, store.id, "discount.disabled")).toEqual([]);
  });

  it("discounts.disable: another store's id is 404 from the first trip", async () => {
    const a = await makeStore(db);
    const b = await makeStore(db);
    const theirs = (await callerFor(db, b.ownerUserId, b.id)("discounts.create", { code: `THEIRS${suffix()}`, kind: "percentage", value: 5 })) as { id: string };
    expect(await failureMessage(callerFor(db, a.ownerUserId, a.id)("discounts.disable", { id: theirs.id }))).toBe("NOT_FOUND | Discount not found in this store.");
  });

  it("mcpSettings.update: a value set meanwhile is not set again (no event names it)", async () => {
    const store = await makeStore(db);
    const { raced, units } = racing(() => sqlIn(store.id, "update store set mcp_allow_changes = true where id = $1", [store.id]));
    expect(await callerFor(raced, store.ownerUserId, store.id)("mcpSettings.update", { allowChanges: true })).toEqual({
      readCustomerDetails: false,
      allowChanges: true,
      changesNeedApproval: true,
    });
    expect(units()).toBe(4);
    expect(await outboxPayloads(db, store.id, "store.mcp_settings_updated")).toEqual([]);
  });
});
