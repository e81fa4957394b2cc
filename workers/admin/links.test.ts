import { describe, expect, it } from "vitest";
import { page, postForm, rpc, rpcJson, sessionFor, type RpcError } from "../../test/admin";
import { makeStore, testDb } from "../../test/harness";
import { addMember } from "../../test/procedures";

/** Short links in the admin (issue 10 part 5): /api/rpc links/* and the Links page. */
const db = testDb();

async function owner() {
  const store = await makeStore(db);
  return { store, browser: await sessionFor(db, store.ownerUserId, store.id) };
}

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
