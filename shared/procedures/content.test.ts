import { describe, expect, it } from "vitest";
import { isAppError } from "#shared/core/errors";
import { testDb } from "../../test/harness";
import { failureText, outboxPayloads, storeWithCaller } from "../../test/procedures";

const db = testDb();

interface PageOut {
  id: string;
  title: string;
  handle: string;
  body?: string;
  status: string;
  publishedAt: Date | null;
}
interface Paged {
  items: PageOut[];
  page: number;
  pageSize: number;
  total: number;
}

const failure = failureText;

const outbox = (storeId: string, kind: string) => outboxPayloads(db, storeId, kind);

describe("content procedures", () => {
  it("creates drafts with a free handle derived from the title and emits page.created", async () => {
    const { store, call } = await storeWithCaller(db);
    const a = (await call("content.create", { title: "Shipping Policy", body: "We ship in 2 days." })) as PageOut;
    expect(a).toMatchObject({ title: "Shipping Policy", handle: "shipping-policy", body: "We ship in 2 days.", status: "draft", publishedAt: null });
    const b = (await call("content.create", { title: "Shipping policy!" })) as PageOut;
    expect(b).toMatchObject({ handle: "shipping-policy-2", body: "" });
    const c = (await call("content.create", { title: "About" })) as PageOut;
    expect(c.handle).toBe("about-2");
    expect(await outbox(store.id, "page.created")).toEqual([{ pageId: a.id }, { pageId: b.id }, { pageId: c.id }]);
    expect(await failure(call("content.create", { title: "Again", handle: "about" }))).toBe("CONFLICT handle");
    expect(await failure(call("content.create", { title: "X", status: "published" }))).toMatch(/^BAD_REQUEST/);
  });

  it("lists without bodies, with paging, status filter and search on title and handle", async () => {
    const { call } = await storeWithCaller(db);
    for (let i = 1; i <= 5; i++) await call("content.create", { title: `Guide ${i}`, body: "long text" });
    const first = (await call("content.list", { page: 1, pageSize: 2, query: "guide" })) as Paged;
    expect(first).toMatchObject({ page: 1, pageSize: 2, total: 5 });
    expect(first.items.map((p) => p.title)).toEqual(["Guide 5", "Guide 4"]);
    expect(first.items.every((p) => !("body" in p))).toBe(true);
    expect(((await call("content.list", { page: 3, pageSize: 2, query: "guide" })) as Paged).items.map((p) => p.title)).toEqual(["Guide 1"]);
    expect(await call("content.list", { page: 4, pageSize: 2, query: "guide" })).toMatchObject({ items: [], total: 5 });
    expect(((await call("content.list", { query: "guide-3" })) as Paged).items.map((p) => p.handle)).toEqual(["guide-3"]);
    expect(((await call("content.list", {})) as Paged).total).toBe(6);
    expect(((await call("content.list", { status: "published" })) as Paged).total).toBe(0);
  });

  it("gets and updates a page and emits page.updated with the fields", async () => {
    const { store, call } = await storeWithCaller(db);
    const p = (await call("content.create", { title: "FAQ" })) as PageOut;
    expect(await call("content.get", { id: p.id })).toMatchObject({ id: p.id, title: "FAQ", handle: "faq", body: "" });
    const updated = (await call("content.update", { id: p.id, title: "Questions", body: "Ask us." })) as PageOut;
    expect(updated).toMatchObject({ title: "Questions", handle: "faq", body: "Ask us.", status: "draft" });
    await call("content.update", { id: p.id, handle: "questions" });
    expect(await call("content.get", { id: p.id })).toMatchObject({ handle: "questions", body: "Ask us." });
    expect(await outbox(store.id, "page.updated")).toEqual([
      { pageId: p.id, fields: ["title", "body"] },
      { pageId: p.id, fields: ["handle"] },
    ]);
    expect(await failure(call("content.update", { id: p.id, handle: "about" }))).toBe("CONFLICT handle");
  });

  it("publishes, keeps the first publication time, unpublishes, and emits only on change", async () => {
    const { store, call } = await storeWithCaller(db);
    const p = (await call("content.create", { title: "Returns" })) as PageOut;
    const published = (await call("content.publish", { id: p.id })) as PageOut;
    expect(published.status).toBe("published");
    expect(published.publishedAt).toBeInstanceOf(Date);
    const first = published.publishedAt!.getTime();
    expect(((await call("content.publish", { id: p.id, published: true })) as PageOut).publishedAt!.getTime()).toBe(first);
    const draft = (await call("content.publish", { id: p.id, published: false })) as PageOut;
    expect(draft.status).toBe("draft");
    expect(draft.publishedAt!.getTime()).toBe(first);
    const again = (await call("content.publish", { id: p.id })) as PageOut;
    expect(again).toMatchObject({ status: "published" });
    expect(again.publishedAt!.getTime()).toBe(first);
    expect(await outbox(store.id, "page.published")).toEqual([{ pageId: p.id }, { pageId: p.id }]);
    expect(await outbox(store.id, "page.unpublished")).toEqual([{ pageId: p.id }]);
    expect(((await call("content.list", { status: "published" })) as Paged).items.map((x) => x.id)).toEqual([p.id]);
  });

  it("answers 400 naming the field for bad input", async () => {
    const { call } = await storeWithCaller(db);
    expect(await failure(call("content.create", { title: "  " }))).toBe("BAD_REQUEST title");
    expect(await failure(call("content.create", { title: "T", handle: "Bad Handle" }))).toBe("BAD_REQUEST handle");
    expect(await failure(call("content.create", { title: "T", body: "x".repeat(100_001) }))).toBe("BAD_REQUEST body");
    expect(await failure(call("content.create", { title: "T", body: "x".repeat(100_000) }))).toBe("ok");
    expect(await failure(call("content.get", { id: "nope" }))).toBe("BAD_REQUEST id");
    expect(await failure(call("content.publish", { id: crypto.randomUUID(), published: "yes" }))).toBe("BAD_REQUEST published");
  });

  it("answers NOT_FOUND 'Page not found in this store.' for another store's page and leaves it unchanged", async () => {
    const a = await storeWithCaller(db);
    const b = await storeWithCaller(db);
    const theirs = (await b.call("content.create", { title: "Secret", body: "B's text" })) as PageOut;
    const probes: [string, unknown][] = [
      ["content.get", { id: theirs.id }],
      ["content.update", { id: theirs.id, body: "hacked" }],
      ["content.publish", { id: theirs.id }],
      ["content.get", { id: crypto.randomUUID() }],
    ];
    for (const [procedure, input] of probes) {
      const e = await a.call(procedure, input).catch((err: unknown) => err);
      expect(isAppError(e) && [e.code, e.message]).toEqual(["NOT_FOUND", "Page not found in this store."]);
    }
    expect(await b.call("content.get", { id: theirs.id })).toMatchObject({ body: "B's text", status: "draft", publishedAt: null });
    expect(((await a.call("content.list", { query: "secret" })) as Paged).total).toBe(0);
    expect(await outbox(a.store.id, "page.updated")).toEqual([]);
    expect(await outbox(a.store.id, "page.published")).toEqual([]);
  });

  it("lets staff read pages but not change them", async () => {
    const { call } = await storeWithCaller(db, "staff");
    expect(((await call("content.list", {})) as Paged).items.map((p) => p.handle)).toEqual(["about"]);
    expect(await failure(call("content.create", { title: "Mine" }))).toBe("FORBIDDEN");
  });
});
