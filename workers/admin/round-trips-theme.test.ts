import { describe, expect, it } from "vitest";
import { ownerOf, rpc, type Browser } from "../../test/admin";
import { withStore } from "#shared/db/with-store";
import { makeStore, testDb } from "../../test/harness";
import { callerFor } from "../../test/procedures";
import { traced } from "../../test/proxy";
import { racing } from "../../test/racing";
import { base64, makePng } from "../../test/media";

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

describe("round trips: the storefront look", () => {
  it("get one, updateDraft two (the draft is read first), publish and discardDraft one", async () => {
    const { browser } = await ownerOf(db);
    const turns = calls(browser);
    expect(await turns("theme/get", {})).toBe(1);
    expect(await turns("theme/updateDraft", { bannerHeading: "Sale" })).toBe(2);
    expect(await turns("theme/publish", {})).toBe(1);
    expect(await turns("theme/publish", {})).toBe(1);
    expect(await turns("theme/updateDraft", { bannerHeading: "Later" })).toBe(2);
    expect(await turns("theme/discardDraft", {})).toBe(1);
  });

  it("setImage and removeImage two (the draft is read first; the upload is stored between the units)", async () => {
    const { browser } = await ownerOf(db);
    const turns = calls(browser);
    expect(await turns("theme/setImage", { slot: "favicon", image: { base64: base64(await makePng(48, 48, 51)) } })).toBe(2);
    expect(await turns("theme/removeImage", { slot: "favicon" })).toBe(2);
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
