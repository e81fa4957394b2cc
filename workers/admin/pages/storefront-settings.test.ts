import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { page, postForm, sessionFor } from "../../../test/admin";
import { call } from "../../../test/call";
import { makeStore, testDb, type TestStore } from "../../../test/harness";
import { addMember } from "../../../test/procedures";
import storefront from "../../storefront/index";

/** Settings → Storefront through the real admin routes (issue 23 item 2), forms without JavaScript. */
const db = testDb();
const shopHome = async (s: TestStore) => (await call(storefront, "http://storefront.test/", { headers: { host: s.hostname } })).text();
const draftOf = (s: TestStore) =>
  withStore(db, s.id, (tx) => tx.$client.query<{ draft: Record<string, unknown>; published: unknown }>("select draft, published from store_theme where store_id = $1", [s.id])).then((r) => r.rows[0]);

const FORM = {
  brandColour: "#7A1F3D",
  accentColour: "#0b5d3b",
  announcementEnabled: "on",
  announcementText: "Free shipping over ₹999",
  announcementLink: "",
  bannerHeading: "Diwali edit",
  bannerText: "Silk, lamps and sweets.",
  bannerLinkLabel: "Shop now",
  bannerLink: "/products",
};

describe("Settings → Storefront", () => {
  it("a colour under AA is refused by its field with the ratio, what was typed kept and nothing saved", async () => {
    const s = await makeStore(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const res = await postForm(owner, "/settings/storefront", { csrf: owner.csrf, action: "save", ...FORM, brandColour: "#ffdd00", bannerLink: "javascript:alert(1)" });
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).toContain('id="brandColour" name="brandColour" type="text" value="#ffdd00" maxlength="7" placeholder="#1a4d8f" autocomplete="off" aria-invalid="true" aria-describedby="brandColour-error"');
    expect(html).toMatch(/<p class="field-error" id="brandColour-error">Too light to read: white text on #ffdd00 is 1\.\d:1 and #ffdd00 text on the page is 1\.\d:1; WCAG 2\.1 AA needs at least 4\.5:1\. Choose a darker shade\.<\/p>/);
    expect(html).toContain('<p class="field-error" id="bannerLink-error">Give a path of the store (starting with /) or an https:// address.</p>');
    expect(html).toContain('value="Diwali edit"');
    expect(html).not.toContain('id="accentColour-error"');
    expect((await draftOf(s))?.draft["brandColour"]).toBe("#1b1f24");
  });

  it("save a draft (the storefront shows nothing), preview typed values without saving, publish: the storefront has the look", async () => {
    const s = await makeStore(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const settings = await (await page(owner, "/settings")).text();
    expect(settings).toContain('<a href="/settings/storefront">storefront look</a>');

    const saved = await postForm(owner, "/settings/storefront", { csrf: owner.csrf, action: "save", ...FORM });
    expect(saved.status).toBe(303);
    expect(saved.headers.get("location")).toBe("/settings/storefront?done=saved");
    expect((await draftOf(s))?.draft).toMatchObject({ brandColour: "#7a1f3d", announcementEnabled: true, bannerHeading: "Diwali edit" });
    expect(await shopHome(s)).not.toContain("Free shipping");

    const view = await page(owner, "/settings/storefront?done=saved");
    const html = await view.text();
    expect(html).toContain("Draft saved. Preview it below, then publish it.");
    expect(html).toContain("Not published yet");
    expect(html).toContain('<link rel="stylesheet" href="/settings/storefront/preview.css?brand=7a1f3d&amp;accent=0b5d3b"/>');
    expect(html).toMatch(/<p class="announcement" data-preview-bar="">Free shipping over ₹999<\/p>/);
    expect(html).toContain("<h3>Diwali edit</h3>");
    expect(view.headers.get("content-security-policy")).not.toContain("unsafe-inline");

    const css = await page(owner, "/settings/storefront/preview.css?brand=7a1f3d&accent=0b5d3b");
    expect(css.headers.get("content-type")).toMatch(/^text\/css/);
    expect(await css.text()).toContain(".theme-preview{--brand:#7a1f3d;");
    expect(await (await page(owner, "/settings/storefront/preview.css?brand=red;}body{x&accent=0b5d3b")).text()).toContain("--brand:#1b1f24;");

    const preview = await postForm(owner, "/settings/storefront", { csrf: owner.csrf, action: "preview", ...FORM, bannerHeading: "Holi colours" });
    expect(preview.status).toBe(200);
    const previewed = await preview.text();
    expect(previewed).toContain("Preview only: nothing is saved until you save the draft.");
    expect(previewed).toContain("<h3>Holi colours</h3>");
    expect((await draftOf(s))?.draft["bannerHeading"]).toBe("Diwali edit");
    const refusedPreview = await postForm(owner, "/settings/storefront", { csrf: owner.csrf, action: "preview", ...FORM, accentColour: "#aaaaaa" });
    expect(refusedPreview.status).toBe(400);
    expect(await refusedPreview.text()).toContain('id="accentColour-error"');

    const published = await postForm(owner, "/settings/storefront", { csrf: owner.csrf, action: "publish" });
    expect(published.headers.get("location")).toBe("/settings/storefront?done=published");
    const home = await shopHome(s);
    expect(home).toContain('class="announcement"');
    expect(home).toContain("Diwali edit");
    expect(home).toMatch(/<link rel="stylesheet" href="\/theme\.css\?t=[0-9a-z]+"\/>/);
    const after = await (await page(owner, "/settings/storefront")).text();
    expect(after).toContain("Shoppers see the draft as it is.");
    expect(after).toMatch(/<button type="submit" name="action" value="publish" disabled="">/);
    expect(after).not.toContain('value="discard"');

    await postForm(owner, "/settings/storefront", { csrf: owner.csrf, action: "save", ...FORM, bannerHeading: "Changed my mind" });
    expect(await (await page(owner, "/settings/storefront")).text()).toContain('value="discard"');
    const discarded = await postForm(owner, "/settings/storefront", { csrf: owner.csrf, action: "discard" });
    expect(discarded.headers.get("location")).toBe("/settings/storefront?done=discarded");
    expect((await draftOf(s))?.draft["bannerHeading"]).toBe("Diwali edit");
  });

  it("Staff get the 403 page and cannot post; another store's member never sees the draft; a wrong CSRF token is refused; the preview stylesheet needs a session", async () => {
    const s = await makeStore(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const staff = await sessionFor(db, (await addMember(db, s, "staff")).userId, s.id);
    expect((await page(staff, "/settings/storefront")).status).toBe(403);
    expect((await postForm(staff, "/settings/storefront", { csrf: staff.csrf, action: "save", ...FORM })).status).toBe(403);
    expect((await postForm(staff, "/settings/storefront", { csrf: staff.csrf, action: "publish" })).status).toBe(403);
    expect((await postForm(staff, "/settings/storefront", { csrf: staff.csrf, action: "preview", ...FORM })).status).toBe(403);
    expect((await postForm(owner, "/settings/storefront", { csrf: "bad", action: "publish" })).status).toBe(403);
    expect((await draftOf(s))?.published).toBeNull();
    // A member of another store never sees this store's draft, even with a session that names it.
    await postForm(owner, "/settings/storefront", { csrf: owner.csrf, action: "save", ...FORM, bannerHeading: "Secret draft" });
    const other = await makeStore(db);
    const stranger = await sessionFor(db, other.ownerUserId, s.id);
    const theirs = await page(stranger, "/settings/storefront");
    expect(theirs.status).not.toBe(200);
    expect(await theirs.text()).not.toContain("Secret draft");
    const ownStore = await (await page(await sessionFor(db, other.ownerUserId, other.id), "/settings/storefront")).text();
    expect(ownStore).not.toContain("Secret draft");
    const anonymous = await page(null, "/settings/storefront/preview.css?brand=7a1f3d&accent=0b5d3b");
    expect(anonymous.status).toBe(302);
    expect(anonymous.headers.get("location")).toMatch(/^\/login\?next=/);
  });
});
