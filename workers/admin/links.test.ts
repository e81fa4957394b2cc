import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { shortLink } from "#shared/db/schema";
import { withStore } from "#shared/db/with-store";
import { page, postForm, rpc, rpcJson, sessionFor, type Browser, type RpcError, ownerOf } from "../../test/admin";
import { testDb, type TestStore } from "../../test/harness";
import { addMember } from "../../test/procedures";

/** Short links in the admin (issue 10 part 5): /api/rpc links/* and the Links page. */
const db = testDb();

const owner = () => ownerOf(db);

const utm = { source: "insta", medium: "social", campaign: "diwali" };

describe("links over /api/rpc", () => {
  it("creates and lists with the short URL, 409 naming slug, Staff reads but cannot write or delete", async () => {
    const { store, browser } = await owner();
    const created = await rpc(browser, "links/create", { slug: "diwali", target: "/sale", utm });
    expect(created.status).toBe(200);
    const dup = await rpc(browser, "links/create", { slug: "diwali", target: "/other", utm });
    expect(dup.status).toBe(409);
    expect(JSON.stringify(await rpcJson<RpcError>(dup))).toMatch(/"path":"slug"/);
    const listed = await rpcJson<{ items: { slug: string; shortUrl: string | null; clicks: number; views: number }[]; total: number }>(await rpc(browser, "links/list", {}));
    expect(listed.items.find((l) => l.slug === "diwali")).toMatchObject({ shortUrl: `https://${store.hostname}/l/diwali`, clicks: 0, views: 0 });
    const { id } = await rpcJson<{ id: string }>(created);
    const staff = await sessionFor(db, (await addMember(db, store, "staff")).userId, store.id);
    expect((await rpc(staff, "links/list", {})).status).toBe(200);
    expect((await rpc(staff, "links/create", { slug: "x", target: "/", utm })).status).toBe(403);
    expect((await rpc(staff, "links/delete", { id })).status).toBe(403);
    expect((await rpc(browser, "links/delete", { id })).status).toBe(200);
  });
});

describe("Links page", () => {
  it("lists links with short URL, target, UTM, clicks and views; creates and deletes through the form", async () => {
    const { store, browser } = await owner();
    const res = await page(browser, "/links");
    expect(res.status).toBe(200);
    const first = await res.text();
    expect(first).toContain(`https://${store.hostname}/l/fixture`);
    expect(first).toContain('<a href="/links">Links</a>');
    const created = await postForm(browser, "/links", {
      csrf: browser.csrf,
      action: "create",
      slug: "spring",
      target: "https://example.com/a?b=1",
      utm_source: "mail",
      utm_medium: "email",
      utm_campaign: "spring",
      utm_term: "",
      utm_content: "",
    });
    expect(created.status).toBe(303);
    const html = await (await page(browser, "/links")).text();
    expect(html).toContain(`https://${store.hostname}/l/spring`);
    expect(html).toContain("https://example.com/a?b=1");
    expect(html).toContain("mail · email · spring");
    const bad = await postForm(browser, "/links", { csrf: browser.csrf, action: "create", slug: "Bad Slug", target: "/", utm_source: "a", utm_medium: "b", utm_campaign: "c" });
    expect(bad.status).toBe(400);
    const dup = await postForm(browser, "/links", { csrf: browser.csrf, action: "create", slug: "spring", target: "/", utm_source: "a", utm_medium: "b", utm_campaign: "c" });
    expect(dup.status).toBe(409);
    expect((await postForm(browser, "/links", { csrf: "nope", action: "create", slug: "z", target: "/", utm_source: "a", utm_medium: "b", utm_campaign: "c" })).status).toBe(403);
    const { items } = await rpcJson<{ items: { id: string; slug: string }[] }>(await rpc(browser, "links/list", {}));
    const spring = items.find((l) => l.slug === "spring")!;
    expect((await postForm(browser, "/links", { csrf: browser.csrf, action: "delete", id: spring.id })).status).toBe(303);
    expect(await (await page(browser, "/links")).text()).not.toContain("/l/spring");
    const staff = await sessionFor(db, (await addMember(db, store, "staff")).userId, store.id);
    expect((await page(staff, "/links")).status).toBe(200);
    expect((await postForm(staff, "/links", { csrf: staff.csrf, action: "delete", id: items[0]!.id })).status).toBe(403);
  });
});

describe("Links page: editing a link", () => {
  const stored = (s: TestStore, id: string) => withStore(db, s.id, async (tx) => (await tx.select().from(shortLink).where(eq(shortLink.id, id)))[0]);

  async function ownerWithLink() {
    const { store, browser } = await owner();
    const created = await rpc(browser, "links/create", { slug: "edit-me", target: "/old", utm: { ...utm, term: "silk" } });
    const { id } = await rpcJson<{ id: string }>(created);
    await withStore(db, store.id, (tx) => tx.update(shortLink).set({ clicks: 7 }).where(eq(shortLink.id, id)));
    return { store, browser, id };
  }

  const edit = (browser: Browser, id: string, fields: Record<string, string>, csrf = browser.csrf) =>
    postForm(browser, "/links", {
      csrf,
      action: "update",
      id,
      slug: "edit-me",
      target: "/old",
      utm_source: "insta",
      utm_medium: "social",
      utm_campaign: "diwali",
      utm_term: "silk",
      utm_content: "",
      ...fields,
    });

  /** The `<input>` tag of a form field, by its id. */
  const inputTag = (html: string, id: string) => html.match(new RegExp(`<input id="${id}"[^>]*>`))?.[0] ?? "";

  it("opens the stored link in the edit form and saves slug, target and UTM tags; clicks are kept", async () => {
    const { store, browser, id } = await ownerWithLink();
    const list = await (await page(browser, "/links")).text();
    expect(list).toContain(`href="/links?edit=${id}#edit"`);
    const form = await page(browser, `/links?edit=${id}`);
    expect(form.status).toBe(200);
    const html = await form.text();
    expect(html).toContain("Edit /l/edit-me");
    expect(inputTag(html, "edit-target")).toContain('value="/old"');
    expect(inputTag(html, "edit-utm_term")).toContain('value="silk"');
    const saved = await edit(browser, id, { slug: "edited", target: "https://example.com/new?x=1", utm_source: "mail", utm_term: "" });
    expect(saved.status).toBe(303);
    expect(saved.headers.get("location")).toBe("/links?done=updated");
    const after = await (await page(browser, saved.headers.get("location")!)).text();
    expect(after).toContain("Short link saved.");
    expect(after).toContain(`https://${store.hostname}/l/edited`);
    expect(after).toContain("https://example.com/new?x=1");
    expect(after).not.toContain("/l/edit-me");
    expect(await stored(store, id)).toMatchObject({ slug: "edited", target: "https://example.com/new?x=1", utmSource: "mail", utmTerm: null, clicks: 7 });
  });

  it("a bad target answers 400 with the error next to the target and everything typed kept; nothing changes", async () => {
    const { store, browser, id } = await ownerWithLink();
    const res = await edit(browser, id, { slug: "typed-slug", target: "not a url", utm_content: "typed content" });
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).toContain("Edit /l/edit-me");
    expect(inputTag(html, "edit-target")).toContain('value="not a url"');
    expect(inputTag(html, "edit-target")).toContain('aria-invalid="true"');
    expect(inputTag(html, "edit-target")).toContain('aria-describedby="edit-target-error"');
    expect(html).toMatch(/<p class="field-error" id="edit-target-error">Enter an absolute http\(s\) URL or a path that starts with a single \/.<\/p>/);
    expect(inputTag(html, "edit-slug")).toContain('value="typed-slug"');
    expect(inputTag(html, "edit-slug")).not.toContain("aria-invalid");
    expect(inputTag(html, "edit-utm_content")).toContain('value="typed content"');
    expect(html).toContain('<input type="hidden" name="id" value="' + id + '"');
    expect(await stored(store, id)).toMatchObject({ slug: "edit-me", target: "/old", utmContent: null });
    // A slug another link has: 409, the error next to the slug.
    const dup = await edit(browser, id, { slug: "fixture" });
    expect(dup.status).toBe(409);
    const dupHtml = await dup.text();
    expect(inputTag(dupHtml, "edit-slug")).toContain('aria-invalid="true"');
    expect(dupHtml).toContain('id="edit-slug-error"');
    // The new-link form does the same for its own fields.
    const badNew = await postForm(browser, "/links", { csrf: browser.csrf, action: "create", slug: "Bad Slug", target: "/kept", utm_source: "a", utm_medium: "b", utm_campaign: "c" });
    expect(badNew.status).toBe(400);
    const newHtml = await badNew.text();
    expect(inputTag(newHtml, "slug")).toContain('aria-invalid="true"');
    expect(inputTag(newHtml, "target")).toContain('value="/kept"');
    expect(newHtml).not.toContain('id="edit"');
  });

  it("refuses a wrong CSRF token and a cross-site post (403); nothing changes", async () => {
    const { store, browser, id } = await ownerWithLink();
    expect((await edit(browser, id, { target: "/csrf" }, "nope")).status).toBe(403);
    expect((await edit(browser, id, { target: "/csrf" }, "")).status).toBe(403);
    const crossSite = await postForm(browser, "/links", { csrf: browser.csrf, action: "update", id, slug: "x", target: "/csrf", utm_source: "a", utm_medium: "b", utm_campaign: "c" }, { origin: "https://evil.example" });
    expect(crossSite.status).toBe(403);
    expect((await stored(store, id))?.target).toBe("/old");
  });

  it("Staff (no content.write, no records.delete) are offered no actions and get the 403 page for editing", async () => {
    const { store, id } = await ownerWithLink();
    const staff = await sessionFor(db, (await addMember(db, store, "staff")).userId, store.id);
    const list = await (await page(staff, "/links")).text();
    expect(list).toContain("/l/edit-me");
    expect(list).not.toContain("?edit=");
    expect(list).not.toContain('value="delete"');
    expect(list).not.toContain("New short link");
    expect(list).not.toContain(">Actions<");
    const opened = await page(staff, `/links?edit=${id}`);
    expect(opened.status).toBe(403);
    expect(await opened.text()).toContain("Your role does not allow changing content (content.write)");
    const posted = await edit(staff, id, { target: "/staff" });
    expect(posted.status).toBe(403);
    expect(posted.headers.get("content-type")).toMatch(/text\/html/);
    expect(await posted.text()).toContain("Your role does not allow");
    expect((await stored(store, id))?.target).toBe("/old");
    // An Admin has both permissions: both actions are offered.
    const admin = await sessionFor(db, (await addMember(db, store, "admin")).userId, store.id);
    const adminList = await (await page(admin, "/links")).text();
    expect(adminList).toContain(`?edit=${id}`);
    expect(adminList).toContain('value="delete"');
  });

  it("another store's link id is the 404 page, for opening, saving and deleting; that link is unchanged", async () => {
    const a = await ownerWithLink();
    const b = await ownerWithLink();
    const opened = await page(a.browser, `/links?edit=${b.id}`);
    expect(opened.status).toBe(404);
    expect(await opened.text()).toContain("Short link not found in this store.");
    const saved = await edit(a.browser, b.id, { target: "/stolen" });
    expect(saved.status).toBe(404);
    expect(saved.headers.get("content-type")).toMatch(/text\/html/);
    expect((await postForm(a.browser, "/links", { csrf: a.browser.csrf, action: "delete", id: b.id })).status).toBe(404);
    expect(await stored(b.store, b.id)).toMatchObject({ slug: "edit-me", target: "/old", clicks: 7 });
    expect((await page(a.browser, "/links?edit=not-a-uuid")).status).toBe(404);
  });
});
