import { describe, expect, it } from "vitest";
import { clientErrorFromConstraint } from "#shared/db/pg-errors";
import { withStore } from "#shared/db/with-store";
import { testDb } from "../../test/harness";
import { failureMessage, failureText, outboxPayloads, storeWithCaller, type Caller } from "../../test/procedures";
import { isMenuUrl } from "../storefront/menu";

const db = testDb();

interface CollectionOut {
  id: string;
  title: string;
  handle: string;
  description: string;
  published: boolean;
  products: { id: string; title: string; handle: string; status: string }[];
}

const version = (storeId: string) =>
  withStore(db, storeId, async (tx) => Number((await tx.$client.query("select coalesce(max(version), 0) as v from storefront_version")).rows[0].v));

const newProduct = async (call: Caller, title: string) =>
  ((await call("products.create", { title, status: "active", variants: [{ priceMinor: 1000 }] })) as { id: string }).id;

describe("collections procedures", () => {
  it("creates, lists, gets, updates and deletes a collection, each change bumping the catalogue version", async () => {
    const { store, call } = await storeWithCaller(db);
    const v0 = await version(store.id);
    const a = (await call("collections.create", { title: "Summer Kurtas", description: "Light cotton." })) as CollectionOut;
    expect(a).toMatchObject({ title: "Summer Kurtas", handle: "summer-kurtas", description: "Light cotton.", published: false, products: [] });
    const v1 = await version(store.id);
    expect(v1).toBeGreaterThan(v0);
    const b = (await call("collections.create", { title: "Summer kurtas!" })) as CollectionOut;
    expect(b.handle).toBe("summer-kurtas-2");
    expect(await failureText(call("collections.create", { title: "Again", handle: "summer-kurtas" }))).toBe("CONFLICT handle");
    expect(await failureText(call("collections.create", { title: "Bad", handle: "Not A Handle" }))).toBe("BAD_REQUEST handle");

    const listed = (await call("collections.list", { query: "summer" })) as { items: (CollectionOut & { productCount: number })[]; total: number };
    expect(listed.total).toBe(2);
    expect(listed.items.map((c) => [c.handle, c.productCount])).toEqual([["summer-kurtas-2", 0], ["summer-kurtas", 0]]);

    const updated = (await call("collections.update", { id: a.id, published: true, title: "Summer" })) as CollectionOut;
    expect(updated).toMatchObject({ title: "Summer", handle: "summer-kurtas", published: true });
    expect(await version(store.id)).toBeGreaterThan(v1);
    expect(((await call("collections.list", { published: true })) as { total: number }).total).toBe(1);
    expect(await outboxPayloads(db, store.id, "collection.updated")).toEqual([{ collectionId: a.id, fields: ["title", "published"] }]);

    const v2 = await version(store.id);
    expect(await call("collections.delete", { id: b.id })).toEqual({ id: b.id, deleted: true });
    expect(await version(store.id)).toBeGreaterThan(v2);
    expect(await failureText(call("collections.get", { id: b.id }))).toBe("NOT_FOUND");
    expect(await outboxPayloads(db, store.id, "collection.deleted")).toEqual([{ collectionId: b.id, title: "Summer kurtas!" }]);
  });

  it("sets a collection's products in order, replacing them, and refuses another store's product or a repeat", async () => {
    const { store, call } = await storeWithCaller(db);
    const other = await storeWithCaller(db);
    const [p1, p2, p3] = [await newProduct(call, "One"), await newProduct(call, "Two"), await newProduct(call, "Three")];
    const theirs = await newProduct(other.call, "Theirs");
    const c = (await call("collections.create", { title: "Picks" })) as CollectionOut;
    const v0 = await version(store.id);
    const set = (await call("collections.setProducts", { id: c.id, productIds: [p3, p1, p2] })) as CollectionOut;
    expect(set.products.map((p) => p.title)).toEqual(["Three", "One", "Two"]);
    expect(await version(store.id)).toBeGreaterThan(v0);
    const again = (await call("collections.setProducts", { id: c.id, productIds: [p2, p3] })) as CollectionOut;
    expect(again.products.map((p) => p.title)).toEqual(["Two", "Three"]);
    expect(((await call("collections.list", {})) as { items: { id: string; productCount: number }[] }).items.find((i) => i.id === c.id)?.productCount).toBe(2);

    expect(await failureMessage(call("collections.setProducts", { id: c.id, productIds: [p1, theirs] }))).toBe(
      "NOT_FOUND | A product of the list is not a product of this store. | productIds: not a product of this store",
    );
    expect(await failureText(call("collections.setProducts", { id: c.id, productIds: [p1, crypto.randomUUID()] }))).toBe("NOT_FOUND productIds");
    expect(await failureText(call("collections.setProducts", { id: c.id, productIds: [p1, p1] }))).toBe("BAD_REQUEST productIds");
    // Nothing of a refused change was written.
    expect(((await call("collections.get", { id: c.id })) as CollectionOut).products.map((p) => p.title)).toEqual(["Two", "Three"]);
    // Another store's collection is not found, and stays as it was.
    expect(await failureText(other.call("collections.setProducts", { id: c.id, productIds: [theirs] }))).toBe("NOT_FOUND");
    expect(await failureText(other.call("collections.update", { id: c.id, title: "Mine" }))).toBe("NOT_FOUND");
    expect(await failureText(other.call("collections.delete", { id: c.id }))).toBe("NOT_FOUND");
    expect(((await call("collections.get", { id: c.id })) as CollectionOut).title).toBe("Picks");
    // Emptying it is allowed; deleting a product takes it out of its collections.
    expect(((await call("collections.setProducts", { id: c.id, productIds: [p1, p2] })) as CollectionOut).products).toHaveLength(2);
    await call("products.delete", { id: p1 });
    expect(((await call("collections.get", { id: c.id })) as CollectionOut).products.map((p) => p.title)).toEqual(["Two"]);
    expect(((await call("collections.setProducts", { id: c.id, productIds: [] })) as CollectionOut).products).toEqual([]);
  });

  it("lets staff curate collections but not delete them", async () => {
    const { call } = await storeWithCaller(db, "staff");
    const c = (await call("collections.create", { title: "Staff picks" })) as CollectionOut;
    expect(await failureText(call("collections.update", { id: c.id, published: true }))).toBe("ok");
    expect(await failureText(call("collections.delete", { id: c.id }))).toBe("FORBIDDEN");
  });
});

describe("the navigation menu", () => {
  it("accepts https and the store's own paths only", () => {
    for (const ok of ["https://example.com", "https://example.com/a?b=c#d", "/", "/collections/summer", "/pages/about?x=1"]) expect([ok, isMenuUrl(ok)]).toEqual([ok, true]);
    for (const bad of [
      "javascript:alert(1)",
      "JavaScript:alert(1)",
      "data:text/html,hi",
      "http://example.com",
      "//evil.example",
      "/\\evil.example",
      "https://",
      "https:///path",
      "ftp://example.com",
      "mailto:a@example.com",
      "collections/summer",
      "/a b",
      "/a\u0000",
      " ",
      "",
    ]) expect([bad, isMenuUrl(bad)]).toEqual([bad, false]);
  });

  it("replaces the menu in order, shows what each item points at, and bumps the catalogue version", async () => {
    const { store, call } = await storeWithCaller(db);
    const c = (await call("collections.create", { title: "New in", published: true })) as CollectionOut;
    const hidden = (await call("collections.create", { title: "Later" })) as CollectionOut;
    const faq = (await call("content.create", { title: "FAQ" })) as { id: string };
    const v0 = await version(store.id);
    const menu = (await call("menu.replace", {
      items: [
        { kind: "collection", label: "New in", collectionId: c.id },
        { kind: "link", label: "All products", url: "/products" },
        { kind: "page", label: "Questions", pageId: faq.id },
        { kind: "collection", label: "Later", collectionId: hidden.id },
        { kind: "link", label: "Blog", url: "https://blog.example.com/" },
      ],
    })) as { items: { label: string; kind: string; href: string; shown: boolean }[] };
    expect(menu.items.map((i) => [i.label, i.kind, i.href, i.shown])).toEqual([
      ["New in", "collection", "/collections/new-in", true],
      ["All products", "link", "/products", true],
      ["Questions", "page", "/pages/faq", false],
      ["Later", "collection", "/collections/later", false],
      ["Blog", "link", "https://blog.example.com/", true],
    ]);
    expect(await version(store.id)).toBeGreaterThan(v0);
    expect(await call("menu.get", {})).toEqual(menu);
    // Deleting a collection takes its item out of the menu.
    await call("collections.delete", { id: hidden.id });
    expect(((await call("menu.get", {})) as { items: unknown[] }).items).toHaveLength(4);
    expect(await call("menu.replace", { items: [] })).toEqual({ items: [] });
    expect(await outboxPayloads(db, store.id, "menu.updated")).toEqual([{ items: 5 }, { items: 0 }]);
  });

  it("refuses bad links, other stores' collections and pages, and too many items, changing nothing", async () => {
    const { store, call } = await storeWithCaller(db);
    const other = await storeWithCaller(db);
    const theirs = (await other.call("collections.create", { title: "Theirs", published: true })) as CollectionOut;
    const theirPage = (await other.call("content.create", { title: "Their page" })) as { id: string };
    await call("menu.replace", { items: [{ kind: "link", label: "Home", url: "/" }] });
    const v0 = await version(store.id);
    const refusals: [unknown, string][] = [
      [{ kind: "link", label: "Evil", url: "javascript:alert(document.cookie)" }, "BAD_REQUEST items.0.url"],
      [{ kind: "link", label: "Evil", url: "//evil.example/" }, "BAD_REQUEST items.0.url"],
      [{ kind: "link", label: "Plain", url: "http://example.com" }, "BAD_REQUEST items.0.url"],
      [{ kind: "link", label: " ", url: "/" }, "BAD_REQUEST items.0.label"],
      [{ kind: "link", label: "x".repeat(61), url: "/" }, "BAD_REQUEST items.0.label"],
      [{ kind: "button", label: "What", url: "/" }, "BAD_REQUEST items.0.kind"],
      [{ kind: "collection", label: "Theirs", collectionId: theirs.id }, "NOT_FOUND items.collectionId"],
      [{ kind: "page", label: "Theirs", pageId: theirPage.id }, "NOT_FOUND items.pageId"],
    ];
    for (const [item, expected] of refusals) expect([item, await failureText(call("menu.replace", { items: [item] }))]).toEqual([item, expected]);
    const tooMany = Array.from({ length: 31 }, (_, i) => ({ kind: "link", label: `L${i}`, url: "/" }));
    expect(await failureText(call("menu.replace", { items: tooMany }))).toBe("BAD_REQUEST items");
    expect(((await call("menu.get", {})) as { items: { label: string }[] }).items.map((i) => i.label)).toEqual(["Home"]);
    expect(await version(store.id)).toBe(v0);
    // The database refuses a bad link whoever writes it (migration 0042's check).
    const written = await withStore(db, store.id, (tx) =>
      tx.$client.query("insert into menu_item (store_id, position, label, kind, url) values ($1, 9, 'x', 'link', 'javascript:alert(1)')", [store.id]).then(
        () => "written",
        (e: { code?: string }) => e.code,
      ),
    );
    expect(written).toBe("23514");
  });

  it("a change that meets another's rows (two at once) is a 409 saying to retry, not a 500", async () => {
    const { store } = await storeWithCaller(db);
    // The second of two replacements sent at once inserts positions the first has just written.
    const clash = await withStore(db, store.id, (tx) =>
      tx.$client.query("insert into menu_item (store_id, position, label, kind, url) values ($1, 0, 'Again', 'link', '/')", [store.id]).then(
        () => undefined,
        (e: unknown) => e,
      ),
    );
    const e = clientErrorFromConstraint(clash);
    expect([e?.code, e?.message, e?.data]).toEqual([
      "CONFLICT",
      "The menu was changed at the same moment; load it again and retry.",
      { issues: [{ path: "items", message: "The menu was changed at the same moment; load it again and retry." }] },
    ]);
  });

  it("lets staff read the menu but not change it", async () => {
    const { call } = await storeWithCaller(db, "staff");
    expect(await call("menu.get", {})).toEqual({ items: [{ id: expect.any(String), label: "About", kind: "page", pageId: expect.any(String), target: "About", href: "/pages/about", shown: false }] });
    expect(await failureText(call("menu.replace", { items: [] }))).toBe("FORBIDDEN");
  });
});
