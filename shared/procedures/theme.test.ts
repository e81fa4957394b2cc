import { describe, expect, it } from "vitest";
import { isAppError } from "#shared/core/errors";
import { withStore } from "#shared/db/with-store";
import { loadStoreFacts } from "#shared/storefront/store-facts";
import { THEME_DEFAULTS } from "#shared/storefront/theme";
import { testDb } from "../../test/harness";
import { failureText, outboxPayloads, storeWithCaller } from "../../test/procedures";
import type { ThemeState } from "./theme";

const db = testDb();

/** The refusal's code, field and reason, as the admin form shows it by its field. */
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => {
      if (!isAppError(e)) throw e;
      const [issue] = (e.data?.issues as { path: string; message: string }[] | undefined) ?? [];
      return { code: e.code, path: issue?.path, message: issue?.message ?? e.message };
    },
  );

const versionOf = (storeId: string) =>
  withStore(db, storeId, (tx) => tx.$client.query<{ version: string }>("select version from storefront_version where store_id = $1", [storeId])).then((r) =>
    Number(r.rows[0]?.version ?? 0),
  );

describe("theme procedures", () => {
  it("a store starts with the default draft and nothing published", async () => {
    const { call } = await storeWithCaller(db);
    expect(await call("theme.get", {})).toEqual({ draft: THEME_DEFAULTS, published: null, publishedAt: null, unpublishedChanges: true });
  });

  it("refuses a colour under WCAG AA contrast by its field, with the ratio and what to do", async () => {
    const { call } = await storeWithCaller(db);
    const yellow = await refusal(call("theme.updateDraft", { brandColour: "#FFDD00" }));
    expect(yellow).toMatchObject({ code: "BAD_REQUEST", path: "brandColour" });
    expect(yellow?.message).toMatch(/white text on #ffdd00 is 1\.[0-9]:1/);
    expect(yellow?.message).toMatch(/WCAG 2\.1 AA needs at least 4\.5:1\. Choose a darker shade\./);
    // #777777 is 4.48:1 on white: just under, and refused; #767676 (4.54:1 on white) is refused on the page's #f7f7f8.
    expect(await refusal(call("theme.updateDraft", { accentColour: "#777777" }))).toMatchObject({ code: "BAD_REQUEST", path: "accentColour" });
    expect(await refusal(call("theme.updateDraft", { accentColour: "#767676" }))).toMatchObject({ path: "accentColour" });
    expect(await refusal(call("theme.updateDraft", { accentColour: "blue" }))).toMatchObject({ path: "accentColour", message: expect.stringMatching(/six hex digits/) });
    // Nothing half-written: the draft is as it was.
    expect(((await call("theme.get", {})) as ThemeState).draft).toEqual(THEME_DEFAULTS);
  });

  it("saves only the fields given, checks the whole draft, and refuses unsafe links", async () => {
    const { call } = await storeWithCaller(db);
    const saved = (await call("theme.updateDraft", { brandColour: "#0B5D3B", announcementEnabled: true, announcementText: "Free shipping over ₹999" })) as ThemeState;
    expect(saved.draft).toEqual({ ...THEME_DEFAULTS, brandColour: "#0b5d3b", announcementEnabled: true, announcementText: "Free shipping over ₹999" });
    expect(saved.published).toBeNull();
    const next = (await call("theme.updateDraft", { bannerHeading: "Diwali sale", bannerLink: "/products", bannerLinkLabel: "Shop now" })) as ThemeState;
    expect(next.draft).toMatchObject({ brandColour: "#0b5d3b", announcementEnabled: true, bannerHeading: "Diwali sale", bannerLink: "/products" });
    expect(await refusal(call("theme.updateDraft", { announcementText: "" }))).toMatchObject({ path: "announcementText", message: expect.stringMatching(/turn the bar off/) });
    expect(await refusal(call("theme.updateDraft", { bannerLinkLabel: "" }))).toMatchObject({ path: "bannerLinkLabel" });
    for (const bad of ["javascript:alert(1)", "//evil.example", "/\\evil.example", "http://shop.example", "https://a b"]) {
      expect(await refusal(call("theme.updateDraft", { bannerLink: bad })), bad).toMatchObject({ path: "bannerLink" });
    }
    expect(await failureText(call("theme.updateDraft", {}))).toMatch(/^BAD_REQUEST/);
    expect(await failureText(call("theme.updateDraft", { logo: "x.png" }))).toMatch(/^BAD_REQUEST/);
  });

  it("publishing copies the draft, bumps the catalogue version and the store's facts; a draft save bumps nothing", async () => {
    const { store, call } = await storeWithCaller(db);
    expect(await failureText(call("theme.publish", {}))).toBe("ok"); // the fixture's saved draft
    const v0 = await versionOf(store.id);
    await call("theme.updateDraft", { brandColour: "#7a1f3d", accentColour: "#0b5d3b" });
    expect(await versionOf(store.id)).toBe(v0);
    expect((await loadStoreFacts(db, store.id))?.theme).toEqual(THEME_DEFAULTS);
    const published = (await call("theme.publish", {})) as ThemeState;
    expect(published).toMatchObject({ published: { brandColour: "#7a1f3d", accentColour: "#0b5d3b" }, unpublishedChanges: false });
    expect(published.publishedAt).toBeInstanceOf(Date);
    expect(await versionOf(store.id)).toBe(v0 + 1);
    expect((await loadStoreFacts(db, store.id))?.theme).toMatchObject({ brandColour: "#7a1f3d" });
    // Publishing what is published changes nothing: no bump, no second event.
    await call("theme.publish", {});
    expect(await versionOf(store.id)).toBe(v0 + 1);
    expect(await outboxPayloads(db, store.id, "theme.published")).toHaveLength(2);
  });

  it("discarding the draft goes back to the published look without touching the storefront", async () => {
    const { store, call } = await storeWithCaller(db);
    expect(await failureText(call("theme.discardDraft", {}))).toMatch(/^CONFLICT/);
    await call("theme.updateDraft", { brandColour: "#7a1f3d" });
    await call("theme.publish", {});
    await call("theme.updateDraft", { brandColour: "#0b5d3b", bannerHeading: "Not yet" });
    const v = await versionOf(store.id);
    const back = (await call("theme.discardDraft", {})) as ThemeState;
    expect(back.draft).toEqual({ ...THEME_DEFAULTS, brandColour: "#7a1f3d" });
    expect(back.unpublishedChanges).toBe(false);
    expect(await versionOf(store.id)).toBe(v);
  });

  it("nothing to publish before a draft is saved (a store without a theme row)", async () => {
    const { store, call } = await storeWithCaller(db);
    await withStore(db, store.id, (tx) => tx.$client.query("delete from store_theme where store_id = $1", [store.id]));
    expect(await failureText(call("theme.publish", {}))).toMatch(/^CONFLICT/);
    expect((await loadStoreFacts(db, store.id))?.theme).toBeNull();
  });
});
