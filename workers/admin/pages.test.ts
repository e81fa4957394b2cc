import { afterEach, describe, expect, it, vi } from "vitest";
import { makeStore, testDb } from "../../test/harness";
import { addMember, callerFor } from "../../test/procedures";
import { page, postForm, rpc, rpcJson, sessionFor } from "../../test/admin";

const db = testDb();

afterEach(() => vi.restoreAllMocks());

describe("admin pages", () => {
  it("home shows the store and your role (guarded by staff.me)", async () => {
    const s = await makeStore(db);
    const staff = await addMember(db, s, "staff");
    const owner = await page(await sessionFor(db, s.ownerUserId, s.id), "/");
    expect(owner.status).toBe(200);
    const html = await owner.text();
    expect(html).toContain(`<h1>${s.name}</h1>`);
    expect(html).toMatch(/data-testid="role">Owner</);
    expect(html).toContain('href="/settings"');
    const theirs = await (await page(await sessionFor(db, staff.userId, s.id), "/")).text();
    expect(theirs).toMatch(/data-testid="role">Staff</);
    // Staff lack settings.read: no link they could only be refused at.
    expect(theirs).not.toContain('href="/settings"');
    expect(theirs).toContain('href="/products"');
  });

  it("products lists with search and paging links", async () => {
    const s = await makeStore(db);
    const call = callerFor(db, s.ownerUserId, s.id);
    for (let i = 1; i <= 22; i++) await call("products.create", { title: `Lamp ${String(i).padStart(2, "0")}`, variants: [{ priceMinor: 99900 }] });
    const browser = await sessionFor(db, s.ownerUserId, s.id);
    const first = await (await page(browser, "/products?query=lamp")).text();
    expect(first.match(/<tr>/g)?.length).toBe(21); // header + 20
    expect(first).toContain('rel="next" href="/products?query=lamp&amp;page=2"');
    const second = await (await page(browser, "/products?query=lamp&page=2")).text();
    expect(second.match(/<tr>/g)?.length).toBe(3);
    expect(second).toContain('rel="prev"');
    const one = await (await page(browser, "/products?query=Lamp+07")).text();
    expect(one).toContain("Lamp 07");
    expect(one).not.toContain("Lamp 08");
    expect((await page(browser, "/products?page=0")).status).toBe(400);
  });

  it("a Staff member opening /settings gets the 403 page, reported, never a redirect to the picker", async () => {
    const s = await makeStore(db);
    const staff = await addMember(db, s, "staff");
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const res = await page(await sessionFor(db, staff.userId, s.id), "/settings");
    expect(res.status).toBe(403);
    expect(res.headers.get("location")).toBeNull();
    expect(res.headers.get("content-type")).toMatch(/text\/html/);
    expect(await res.text()).toContain("Your role does not allow");
    const reported = warn.mock.calls.map((args) => String(args[0])).filter((line) => line.includes('"reported":true'));
    expect(reported.length).toBe(1);
    expect(reported[0]).toContain('"procedure":"store.current"');
  });

  it("only the no-store errors send a page to /select-store, and the picker itself never redirects", async () => {
    const a = await makeStore(db);
    const b = await makeStore(db);
    const none = await sessionFor(db, a.ownerUserId, null);
    const toPicker = await page(none, "/products?query=x");
    expect(toPicker.status).toBe(302);
    expect(toPicker.headers.get("location")).toBe("/select-store?next=%2Fproducts%3Fquery%3Dx");
    const elsewhere = await page(await sessionFor(db, a.ownerUserId, b.id), "/settings");
    expect(elsewhere.headers.get("location")).toBe("/select-store?next=%2Fsettings");
    const picker = await page(none, "/select-store?next=/settings");
    expect(picker.status).toBe(200);
    const html = await picker.text();
    expect(html).toContain(a.name);
    expect(html).not.toContain(b.name);
  });

  it("choosing a store (store.switch) sets it and returns to next; a foreign store or a missing token is refused", async () => {
    const a = await makeStore(db);
    const b = await makeStore(db);
    const browser = await sessionFor(db, a.ownerUserId, null);
    const noToken = await postForm(browser, "/select-store", { storeId: a.id, next: "/settings" });
    expect(noToken.status).toBe(403);
    const foreign = await postForm(browser, "/select-store", { storeId: b.id, next: "/settings", csrf: browser.csrf });
    expect(foreign.status).toBe(403);
    expect(await foreign.text()).toContain("not available to you");
    const ok = await postForm(browser, "/select-store", { storeId: a.id, next: "/settings", csrf: browser.csrf });
    expect(ok.status).toBe(303);
    expect(ok.headers.get("location")).toBe("/settings");
    expect((await page(browser, "/settings")).status).toBe(200);
  });

  it("settings shows the store and saves through store.update with the CSRF token", async () => {
    const s = await makeStore(db);
    const browser = await sessionFor(db, s.ownerUserId, s.id);
    const html = await (await page(browser, "/settings")).text();
    expect(html).toContain("<h1>Settings</h1>");
    expect(html).toMatch(new RegExp(`name="name"[^>]*value="${s.name}"`));
    const forged = await postForm(browser, "/settings", { name: "Forged" });
    expect(forged.status).toBe(403);
    const saved = await postForm(browser, "/settings", { csrf: browser.csrf, name: "Renamed Store", mcpAllowChanges: "on" });
    expect(saved.status).toBe(303);
    const current = await rpcJson<{ name: string; mcpAllowChanges: boolean; mcpChangesNeedApproval: boolean }>(await rpc(browser, "store/current"));
    expect(current).toMatchObject({ name: "Renamed Store", mcpAllowChanges: true, mcpChangesNeedApproval: false });
    const bad = await postForm(browser, "/settings", { csrf: browser.csrf, name: "" });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("name");
  });
});
