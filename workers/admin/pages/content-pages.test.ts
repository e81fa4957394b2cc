import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { page, postForm, sessionFor } from "../../../test/admin";
import { call } from "../../../test/call";
import { makeStore, testDb, type TestStore } from "../../../test/harness";
import { addMember } from "../../../test/procedures";
import storefront from "../../storefront/index";

/** /pages and /pages/<id> through the real admin routes (issue 13 item 5). */
const db = testDb();
const sql = <R,>(s: TestStore, text: string, values: unknown[] = []) => withStore(db, s.id, (tx) => tx.$client.query(text, values)).then((r) => r.rows as R[]);
const shopPage = (s: TestStore, path: string) => call(storefront, `http://storefront.test${path}`, { headers: { host: s.hostname } });

describe("Content pages", () => {
  it("create a draft, preview without saving, save, publish: the storefront shows it; unpublish takes it off", async () => {
    const s = await makeStore(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const made = await postForm(owner, "/pages", { csrf: owner.csrf, action: "save", title: "Shipping", handle: "", body: "We ship in 2 days." });
    const location = made.headers.get("location")!;
    expect(location).toMatch(/^\/pages\/[0-9a-f-]{36}\?done=created$/);
    const id = location.split("/")[2]!.split("?")[0]!;
    const preview = await postForm(owner, `/pages/${id}`, { csrf: owner.csrf, action: "preview", title: "Shipping", handle: "shipping", body: "Free over ₹999.\n\nCOD available." });
    expect(preview.status).toBe(200);
    const html = await preview.text();
    expect(html).toContain('<div class="card preview" data-preview=""><h1>Shipping</h1><p>Free over ₹999.</p><p>COD available.</p></div>');
    expect(html).toContain("Preview only: nothing is saved");
    expect(await sql(s, "select body from page where id = $1", [id])).toEqual([{ body: "We ship in 2 days." }]);
    expect((await postForm(owner, `/pages/${id}`, { csrf: owner.csrf, action: "save", title: "Shipping", handle: "shipping", body: "Free over ₹999.\n\nCOD available." })).status).toBe(303);
    expect((await shopPage(s, "/pages/shipping")).status).toBe(404);
    expect((await postForm(owner, `/pages/${id}`, { csrf: owner.csrf, action: "publish" })).headers.get("location")).toBe(`/pages/${id}?done=publish`);
    const live = await shopPage(s, "/pages/shipping");
    expect(live.status).toBe(200);
    expect(await live.text()).toContain("<p>COD available.</p>");
    await postForm(owner, `/pages/${id}`, { csrf: owner.csrf, action: "unpublish" });
    expect((await shopPage(s, "/pages/shipping")).status).toBe(404);
  });

  it("a taken handle by its field with the text kept; Staff read only; CSRF; another store's page not found", async () => {
    const s = await makeStore(db);
    const other = await makeStore(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const dup = await postForm(owner, "/pages", { csrf: owner.csrf, action: "save", title: "About us", handle: "about", body: "Our story" });
    expect(dup.status).toBe(409);
    const html = await dup.text();
    expect(html).toContain("Another page already uses this handle");
    expect(html).toContain('id="handle" name="handle" type="text" value="about" maxlength="100" aria-invalid="true"');
    expect(html).toContain(">Our story</textarea>");
    const staff = await sessionFor(db, (await addMember(db, s, "staff")).userId, s.id);
    const [about] = await sql<{ id: string }>(s, "select id from page where handle = 'about'");
    const view = await (await page(staff, `/pages/${about!.id}`)).text();
    expect(view).not.toContain('id="page-form"');
    expect(view).toContain('data-preview=""');
    expect((await postForm(staff, `/pages/${about!.id}`, { csrf: staff.csrf, action: "publish" })).status).toBe(403);
    expect((await postForm(staff, `/pages/${about!.id}`, { csrf: staff.csrf, action: "preview", title: "x", body: "y" })).status).toBe(403);
    expect((await postForm(owner, `/pages/${about!.id}`, { csrf: "bad", action: "publish" })).status).toBe(403);
    expect(await sql(s, "select status from page")).toEqual([{ status: "draft" }]);
    const [theirs] = await sql<{ id: string }>(other, "select id from page");
    expect((await page(owner, `/pages/${theirs!.id}`)).status).toBe(404);
    expect((await postForm(owner, `/pages/${theirs!.id}`, { csrf: owner.csrf, action: "publish" })).status).toBe(404);
    expect(await sql(other, "select status from page")).toEqual([{ status: "draft" }]);
  });
});

describe("the paragraph rule", () => {
  it("splits on blank lines whatever the line ends (a browser sends CRLF), and drops empty paragraphs", async () => {
    const { contentParagraphs } = await import("#shared/storefront/content");
    expect(contentParagraphs("One.\r\n\r\nTwo.\r\nstill two.\n \nThree.\n\n\n")).toEqual(["One.", "Two.\nstill two.", "Three."]);
    expect(contentParagraphs("")).toEqual([]);
  });
});
