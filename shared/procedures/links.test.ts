import { describe, expect, it } from "vitest";
import { testDb } from "../../test/harness";
import { addMember, callerFor, failureText, outboxPayloads, storeWithCaller } from "../../test/procedures";

const db = testDb();
const failure = failureText;

interface LinkOut {
  id: string;
  slug: string;
  target: string;
  utm: { source: string; medium: string; campaign: string; term: string | null; content: string | null };
  clicks: number;
  views: number;
}
interface Paged {
  items: LinkOut[];
  page: number;
  pageSize: number;
  total: number;
}

const utm = { source: "insta", medium: "social", campaign: "diwali" };

describe("links procedures", () => {
  it("creates, lists with paging, updates and deletes, emitting an event for each write", async () => {
    const { store, call } = await storeWithCaller(db);
    const a = (await call("links.create", { slug: "diwali", target: "https://example.com/sale?x=1", utm })) as LinkOut;
    expect(a).toMatchObject({ slug: "diwali", target: "https://example.com/sale?x=1", utm: { ...utm, term: null, content: null }, clicks: 0, views: 0 });
    const b = (await call("links.create", { slug: "b-2", target: "/products/kurta", utm: { ...utm, term: "red", content: "hero" } })) as LinkOut;
    expect(b.utm).toMatchObject({ term: "red", content: "hero" });
    const page1 = (await call("links.list", { page: 1, pageSize: 2 })) as Paged;
    // makeStore's fixture link makes three.
    expect(page1).toMatchObject({ page: 1, pageSize: 2, total: 3 });
    expect(page1.items.map((l) => l.slug)).toEqual(["b-2", "diwali"]);
    expect(page1.items[0]).toMatchObject({ shortUrl: `https://${store.hostname}/l/b-2` });
    expect(((await call("links.list", { page: 2, pageSize: 2 })) as Paged).items.map((l) => [l.slug, l.views])).toEqual([["fixture", 1]]);
    const updated = (await call("links.update", { id: a.id, slug: "diwali-2", utm: { ...utm, campaign: "diwali-late" } })) as LinkOut;
    expect(updated).toMatchObject({ slug: "diwali-2", target: "https://example.com/sale?x=1", utm: { campaign: "diwali-late" } });
    expect(await call("links.delete", { id: b.id })).toEqual({ id: b.id, deleted: true });
    expect(await failure(call("links.delete", { id: b.id }))).toBe("NOT_FOUND");
    expect(await outboxPayloads(db, store.id, "link.created")).toEqual([
      { linkId: a.id, slug: "diwali" },
      { linkId: b.id, slug: "b-2" },
    ]);
    expect(await outboxPayloads(db, store.id, "link.updated")).toEqual([{ linkId: a.id, fields: ["slug", "utm"] }]);
    expect(await outboxPayloads(db, store.id, "link.deleted")).toEqual([{ linkId: b.id, slug: "b-2" }]);
  });

  it("refuses a slug taken in the store (409 naming slug), bad slugs, targets and UTM tags", async () => {
    const { call } = await storeWithCaller(db);
    const a = (await call("links.create", { slug: "one", target: "/", utm })) as LinkOut;
    await call("links.create", { slug: "two", target: "/", utm });
    expect(await failure(call("links.create", { slug: "one", target: "/x", utm }))).toBe("CONFLICT slug");
    expect(await failure(call("links.update", { id: a.id, slug: "two" }))).toBe("CONFLICT slug");
    for (const slug of ["", "Upper", "a b", "a/b", "x".repeat(65)]) {
      expect(await failure(call("links.create", { slug, target: "/", utm }))).toBe("BAD_REQUEST slug");
    }
    for (const target of ["//evil.example/x", "HTTPS://example.com/", "javascript:alert(1)", "ftp://example.com/", "relative/path", "https://", "/a b", ""]) {
      expect(await failure(call("links.create", { slug: "t", target, utm }))).toBe("BAD_REQUEST target");
    }
    expect(await failure(call("links.create", { slug: "t", target: "/", utm: { source: "x", medium: "y" } }))).toBe("BAD_REQUEST utm.campaign");
    expect(await failure(call("links.create", { slug: "t", target: "/", utm: { ...utm, extra: "z" } }))).toMatch(/^BAD_REQUEST utm/);
    expect(await failure(call("links.update", { id: crypto.randomUUID(), target: "/" }))).toBe("NOT_FOUND");
  });

  it("Staff reads links but cannot change or delete them; Admin deletes", async () => {
    const { store, call: owner } = await storeWithCaller(db);
    const link = (await owner("links.create", { slug: "s", target: "/", utm })) as LinkOut;
    const m = await addMember(db, store, "staff");
    const staffHere = callerFor(db, m.userId, store.id);
    expect(((await staffHere("links.list", {})) as Paged).total).toBe(2);
    expect(await failure(staffHere("links.create", { slug: "t", target: "/", utm }))).toBe("FORBIDDEN");
    expect(await failure(staffHere("links.update", { id: link.id, target: "/x" }))).toBe("FORBIDDEN");
    expect(await failure(staffHere("links.delete", { id: link.id }))).toBe("FORBIDDEN");
    const a = await addMember(db, store, "admin");
    expect(await callerFor(db, a.userId, store.id)("links.delete", { id: link.id })).toEqual({ id: link.id, deleted: true });
  });
});
