import { describe, expect, it } from "vitest";
import { ownerOf, rpc, type Browser } from "../../test/admin";
import type { Database } from "#shared/db/database";
import { withStore } from "#shared/db/with-store";
import { makeStore, testDb } from "../../test/harness";
import { callerFor } from "../../test/procedures";
import { traced } from "../../test/proxy";

/** Round trips of the storefront look's procedures (issue 23 item 2): one each, two when the draft is read first. */
const db = testDb();

function calls(browser: Browser) {
  return async (path: string, input: unknown) => {
    const { res, trips, body } = await traced((h) => rpc(browser, path, input, h));
    expect(res.status, `${path}: ${body}`).toBe(200);
    expect(trips.after.turns, path).toBe(0);
    return trips.turns;
  };
}

/** A database whose first change unit waits for `meanwhile` (another writer's commit) before it is sent. */
function racing(meanwhile: () => Promise<unknown>): { raced: Database; units: () => number } {
  const raced = testDb();
  const send = raced.sendHttp.bind(raced);
  let sent = 0;
  let pending = true;
  raced.sendHttp = async (statements, options) => {
    sent++;
    if (pending && !options.readOnly) {
      pending = false;
      await meanwhile();
    }
    return send(statements, options);
  };
  return { raced, units: () => sent };
}

describe("round trips: the storefront look", () => {
  it("get one, updateDraft two (the draft is read first), publish one", async () => {
    const { browser } = await ownerOf(db);
    const turns = calls(browser);
    expect(await turns("theme/get", {})).toBe(1);
    expect(await turns("theme/updateDraft", { bannerHeading: "Sale" })).toBe(2);
    expect(await turns("theme/publish", {})).toBe(1);
    expect(await turns("theme/publish", {})).toBe(1);
  });

  it("updateDraft: a draft saved meanwhile is read again, and both changes are kept", async () => {
    const store = await makeStore(db);
    const { raced, units } = racing(() =>
      withStore(db, store.id, (tx) => tx.$client.query(`update store_theme set draft = draft || '{"bannerHeading": "Meanwhile"}'::jsonb where store_id = $1`, [store.id])),
    );
    const out = (await callerFor(raced, store.ownerUserId, store.id)("theme.updateDraft", { announcementText: "Hello" })) as { draft: Record<string, unknown> };
    expect(out.draft).toMatchObject({ bannerHeading: "Meanwhile", announcementText: "Hello" });
    expect(units()).toBe(4);
  });
});
