import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { page, postForm, sessionFor } from "../../../test/admin";
import { call } from "../../../test/call";
import { makeStore, testDb, type TestStore } from "../../../test/harness";
import { addMember } from "../../../test/procedures";
import storefront from "../../storefront/index";
import { reordered } from "./collections";

/** /collections, /collections/<id> and /navigation through the real admin routes (issue 23 item 3), without JavaScript. */
const db = testDb();
const sql = <R,>(s: TestStore, text: string, values: unknown[] = []) => withStore(db, s.id, (tx) => tx.$client.query(text, values)).then((r) => r.rows as R[]);
const shopPage = (s: TestStore, path: string) => call(storefront, `http://storefront.test${path}`, { headers: { host: s.hostname } });
const cardTitles = (html: string) => [...html.matchAll(/<a href="\/products\/[^"]+"><strong>([^<]*)<\/strong>/g)].map((m) => m[1]);
const order = (s: TestStore, id: string) =>
  sql<{ title: string }>(s, "select p.title from collection_product cp join product p on p.id = cp.product_id where cp.collection_id = $1 order by cp.position", [id]).then((r) => r.map((x) => x.title));

async function withProducts(s: TestStore, titles: string[]): Promise<Record<string, string>> {
  const ids: Record<string, string> = {};
  for (const title of titles) {
    const [row] = await sql<{ id: string }>(s, "insert into product (store_id, title, handle, status) values ($1, $2, $3, 'active') returning id", [s.id, title, title.toLowerCase().replace(/ /g, "-")]);
    await sql(s, "insert into product_variant (store_id, product_id, price_minor, preorder) values ($1, $2, 10000, true)", [s.id, row!.id]);
    ids[title] = row!.id;
  }
  return ids;
}

describe("reordered", () => {
  it("moves one product up, down, out or in, leaving the rest in order", () => {
    expect(reordered(["a", "b", "c"], "b", "up")).toEqual(["b", "a", "c"]);
    expect(reordered(["a", "b", "c"], "a", "up")).toEqual(["a", "b", "c"]);
    expect(reordered(["a", "b", "c"], "b", "down")).toEqual(["a", "c", "b"]);
    expect(reordered(["a", "b", "c"], "c", "down")).toEqual(["a", "b", "c"]);
    expect(reordered(["a", "b", "c"], "b", "remove")).toEqual(["a", "c"]);
    expect(reordered(["a", "b"], "c", "add")).toEqual(["a", "b", "c"]);
    expect(reordered(["a", "b"], "a", "add")).toEqual(["a", "b"]);
    expect(reordered(["a", "b"], "x", "up")).toEqual(["a", "b"]);
  });
});

describe("Collections in the admin", () => {
  it("create, add products, reorder with Move up/down, remove, publish: the storefront follows", async () => {
    const s = await makeStore(db);
    const ids = await withProducts(s, ["Kurta", "Saree", "Dupatta"]);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const made = await postForm(owner, "/collections", { csrf: owner.csrf, action: "save", title: "Wedding Edit", handle: "", description: "For the season." });
    const location = made.headers.get("location")!;
    expect(location).toMatch(/^\/collections\/[0-9a-f-]{36}\?done=created$/);
    const id = location.split("/")[2]!.split("?")[0]!;
    const to = `/collections/${id}`;
    for (const title of ["Kurta", "Saree", "Dupatta"]) {
      expect((await postForm(owner, to, { csrf: owner.csrf, action: "add", productId: ids[title]! })).status).toBe(303);
    }
    expect(await order(s, id)).toEqual(["Kurta", "Saree", "Dupatta"]);
    await postForm(owner, to, { csrf: owner.csrf, action: "up", productId: ids["Dupatta"]! });
    await postForm(owner, to, { csrf: owner.csrf, action: "down", productId: ids["Kurta"]! });
    expect(await order(s, id)).toEqual(["Dupatta", "Kurta", "Saree"]);
    await postForm(owner, to, { csrf: owner.csrf, action: "remove", productId: ids["Kurta"]! });
    expect(await order(s, id)).toEqual(["Dupatta", "Saree"]);

    const view = await (await page(owner, to)).text();
    expect(view).toContain('aria-label="Move Saree up"');
    expect(view).toContain('aria-label="Move Dupatta down"');
    expect(view).not.toContain('aria-label="Move Dupatta up"');
    expect(view).toContain('aria-label="Add Kurta"');
    expect((await shopPage(s, "/collections/wedding-edit")).status).toBe(404);
    await postForm(owner, to, { csrf: owner.csrf, action: "save", title: "Wedding Edit", handle: "wedding-edit", description: "For the season.", published: "yes" });
    const live = await shopPage(s, "/collections/wedding-edit");
    expect(live.status).toBe(200);
    expect(cardTitles(await live.text())).toEqual(["Dupatta", "Saree"]);
    expect(await (await page(owner, "/collections")).text()).toContain(`<a href="/collections/${id}">Wedding Edit</a>`);
  });

  it("a refused field is shown by the field with what was typed; staff curate but cannot delete; CSRF; another store's collection is not found", async () => {
    const s = await makeStore(db);
    const other = await makeStore(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const dup = await postForm(owner, "/collections", { csrf: owner.csrf, action: "save", title: "Shelf", handle: "fixture-shelf", description: "Kept text" });
    expect(dup.status).toBe(409);
    const html = await dup.text();
    expect(html).toContain("Another collection already uses this handle");
    expect(html).toContain('id="handle" name="handle" type="text" value="fixture-shelf" maxlength="100" aria-invalid="true" aria-describedby="handle-error"');
    expect(html).toContain(">Kept text</textarea>");
    const bad = await postForm(owner, "/collections", { csrf: owner.csrf, action: "save", title: "", handle: "" });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('id="title" name="title" type="text" value="" maxlength="255" aria-invalid="true"');

    const [shelf] = await sql<{ id: string }>(s, "select id from collection");
    const staff = await sessionFor(db, (await addMember(db, s, "staff")).userId, s.id);
    const staffView = await (await page(staff, `/collections/${shelf!.id}`)).text();
    expect(staffView).toContain('id="collection-form"');
    expect(staffView).not.toContain("Delete this collection");
    expect((await postForm(staff, `/collections/${shelf!.id}`, { csrf: staff.csrf, action: "delete" })).status).toBe(403);
    expect((await postForm(owner, `/collections/${shelf!.id}`, { csrf: "bad", action: "save", title: "X" })).status).toBe(403);
    const [theirs] = await sql<{ id: string }>(other, "select id from collection");
    const [theirProduct] = await sql<{ id: string }>(other, "select id from product");
    expect((await page(owner, `/collections/${theirs!.id}`)).status).toBe(404);
    expect((await postForm(owner, `/collections/${theirs!.id}`, { csrf: owner.csrf, action: "save", title: "Mine" })).status).toBe(404);
    // Another store's product cannot be added to this store's collection.
    expect((await postForm(owner, `/collections/${shelf!.id}`, { csrf: owner.csrf, action: "add", productId: theirProduct!.id })).status).toBe(404);
    expect(await sql(other, "select title from collection")).toEqual([{ title: "Fixture shelf" }]);
    expect(await order(s, shelf!.id)).toEqual(["Fixture"]);
    // The owner deletes after confirming.
    expect(await (await page(owner, `/collections/${shelf!.id}?confirm=delete`)).text()).toContain('role="alertdialog"');
    expect((await postForm(owner, `/collections/${shelf!.id}`, { csrf: owner.csrf, action: "delete" })).headers.get("location")).toBe("/collections?done=deleted");
    expect(await sql(s, "select id from collection")).toEqual([]);
  });
});

describe("Navigation in the admin", () => {
  it("adds a collection, a page and a link, reorders and removes them: the storefront's header follows", async () => {
    const s = await makeStore(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    await sql(s, "delete from menu_item; update collection set published = true; update page set status = 'published', published_at = now()");
    const [shelf] = await sql<{ id: string }>(s, "select id from collection");
    const [about] = await sql<{ id: string }>(s, "select id from page");
    const add = (fields: Record<string, string>) => postForm(owner, "/navigation", { csrf: owner.csrf, action: "add", ...fields });
    expect((await add({ label: "Shelf", kind: "collection", collectionId: shelf!.id, pageId: "", url: "" })).headers.get("location")).toBe("/navigation?done=add");
    await add({ label: "About us", kind: "page", collectionId: "", pageId: about!.id, url: "" });
    await add({ label: "All products", kind: "link", collectionId: "", pageId: "", url: "/products" });
    const menu = () => shopPage(s, "/").then((r) => r.text()).then((h) => [...(/<nav class="menu"[\s\S]*?<\/nav>/.exec(h)?.[0] ?? "").matchAll(/>([^<>]+)<\/a>/g)].map((m) => m[1]));
    expect(await menu()).toEqual(["Shelf", "About us", "All products"]);
    // Each change makes the items anew: a post names an item of the menu as its page showed it.
    const idOf = async (label: string) => (await sql<{ id: string }>(s, "select id from menu_item where label = $1", [label]))[0]!.id;
    const stale = await idOf("Shelf");
    await postForm(owner, "/navigation", { csrf: owner.csrf, action: "up", itemId: await idOf("All products") });
    await postForm(owner, "/navigation", { csrf: owner.csrf, action: "down", itemId: await idOf("Shelf") });
    expect(await menu()).toEqual(["All products", "Shelf", "About us"]);
    await postForm(owner, "/navigation", { csrf: owner.csrf, action: "remove", itemId: await idOf("About us") });
    expect(await menu()).toEqual(["All products", "Shelf"]);
    const late = await postForm(owner, "/navigation", { csrf: owner.csrf, action: "remove", itemId: stale });
    expect(late.status).toBe(409);
    expect(await late.text()).toContain("The menu has changed since this page was opened");
    expect(await menu()).toEqual(["All products", "Shelf"]);
    const view = await (await page(owner, "/navigation")).text();
    expect(view).toContain('aria-label="Move Shelf up"');
    expect(view).toContain('<legend>Points at</legend>');
  });

  it("refuses a javascript: link by its field, keeping what was typed; staff see the menu but cannot change it", async () => {
    const s = await makeStore(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const refused = await postForm(owner, "/navigation", { csrf: owner.csrf, action: "add", label: "Click", kind: "link", collectionId: "", pageId: "", url: "javascript:alert(1)" });
    expect(refused.status).toBe(400);
    const html = await refused.text();
    expect(html).toContain('id="url" name="url" type="text" value="javascript:alert(1)"');
    expect(html).toMatch(/id="url"[^>]*aria-invalid="true" aria-describedby="url-error"/);
    expect(html).toContain("other schemes such as javascript: are refused");
    expect(html).toContain('id="label" name="label" type="text" value="Click"');
    const noTarget = await postForm(owner, "/navigation", { csrf: owner.csrf, action: "add", label: "Shelf", kind: "collection", collectionId: "", pageId: "", url: "" });
    expect(noTarget.status).toBe(400);
    expect(await noTarget.text()).toMatch(/id="collectionId"[^>]*aria-invalid="true"/);
    expect(await sql(s, "select label from menu_item")).toEqual([{ label: "About" }]);
    const staff = await sessionFor(db, (await addMember(db, s, "staff")).userId, s.id);
    const staffView = await (await page(staff, "/navigation")).text();
    expect(staffView).toContain("About");
    expect(staffView).not.toContain('id="menu-item-form"');
    expect((await postForm(staff, "/navigation", { csrf: staff.csrf, action: "add", label: "X", kind: "link", url: "/" })).status).toBe(403);
  });
});
