import { afterEach, describe, expect, it, vi } from "vitest";
import { makeStore, testDb } from "../../../test/harness";
import { addMember } from "../../../test/procedures";
import { ADMIN, api, createToken, page, postForm, rpc, rpcJson, sessionFor, type Browser } from "../../../test/admin";
import { section } from "./api-settings-test-helpers";

/** Settings → MCP & API: creating, listing and revoking script tokens, and the recent activity. */

const db = testDb();

afterEach(() => vi.restoreAllMocks());

/** POST a form whose fields may repeat (`areas`), same-origin, as this browser. */
function postFields(browser: Browser, path: string, fields: [string, string][], headers: Record<string, string> = {}): Promise<Response> {
  return page(browser, path, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: ADMIN, ...headers },
    body: new URLSearchParams(fields).toString(),
  });
}

const offeredScopes = (html: string): string[] => [...html.matchAll(/name="areas" value="([a-z]+:(?:read|write))"/g)].map((m) => m[1]!);
const tokenIn = (html: string) => /id="new-token"[^>]*value="(wc_live_[A-Za-z0-9_-]{43})"/.exec(html)?.[1];
const revokeButtonFor = (html: string, grantId: string) => html.includes(`name="id" value="${grantId}"`);

interface GrantList {
  items: { id: string; name: string; status: string; areas: string[]; expiresAt: string | null; member: { email: string } }[];
  scope: string;
}
/** The grants a browser's member can list, less the one every test store is made with ("Fixture token"). */
const grantsOf = async (browser: Browser) => {
  const list = await rpcJson<GrantList>(await rpc(browser, "apiGrants/list", {}));
  return { ...list, items: list.items.filter((g) => g.name !== "Fixture token") };
};

describe("Settings → MCP & API", () => {
  it("offers only the scopes the member's role can grant, and every member gets the nav link", async () => {
    const s = await makeStore(db);
    const staff = await addMember(db, s, "staff");
    const ownerRes = await page(await sessionFor(db, s.ownerUserId, s.id), "/settings/api");
    expect(ownerRes.status).toBe(200);
    expect(ownerRes.headers.get("cache-control")).toBe("no-store");
    const owner = await ownerRes.text();
    expect(offeredScopes(owner)).toHaveLength(14);
    expect(owner).toContain('href="/settings/api"');
    expect(owner).toMatch(/<option value="90" selected=""/);
    expect(owner).toContain('<option value="never"');
    expect(owner).toContain(`curl -X POST ${ADMIN}/api/v1/products/list`);

    const theirs = await (await page(await sessionFor(db, staff.userId, s.id), "/settings/api")).text();
    const scopes = offeredScopes(theirs);
    expect(scopes).toHaveLength(10);
    expect(scopes.some((x) => x.startsWith("analytics:"))).toBe(false);
    expect(scopes).not.toContain("discounts:write");
    expect(scopes).not.toContain("content:write");
    expect(scopes).toContain("content:read");
    expect(theirs).toContain('href="/settings/api"');
    expect(theirs).not.toContain('href="/settings"');
  });

  it("creating a token answers 201 with the token once; the token works and is never shown again", async () => {
    const s = await makeStore(db);
    const browser = await sessionFor(db, s.ownerUserId, s.id);
    const res = await postFields(browser, "/settings/api/tokens", [
      ["csrf", browser.csrf],
      ["name", "Stock <sync>"],
      ["areas", "products:read"],
      ["areas", "products:write"],
      ["areas", "orders:read"],
      ["lifetimeDays", "90"],
    ]);
    expect(res.status).toBe(201);
    expect(res.headers.get("location")).toBeNull();
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("referrer-policy")).toBe("same-origin");
    const html = await res.text();
    expect(html).toContain("Copy it now: it is shown only once and cannot be recovered.");
    expect(html).toContain("navigator.clipboard.writeText");
    expect(html).toContain("Stock &lt;sync&gt;");
    expect(html).not.toContain("Stock <sync>");
    const token = tokenIn(html);
    expect(token).toBeDefined();
    expect(html.split(token!).length - 1).toBe(1); // exactly once in the page

    expect((await api(token!, "products/list", {})).status).toBe(200);
    const { items } = await grantsOf(browser);
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ name: "Stock <sync>", status: "active", areas: ["products:write", "orders:read"] });
    const days = (new Date(items[0]!.expiresAt!).getTime() - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(89.9);
    expect(days).toBeLessThan(90.1);

    const later = await (await page(browser, "/settings/api")).text();
    expect(later).not.toContain(token!);
    expect(later).not.toContain('id="new-token"');
    expect(section(later, "grants")).toContain(`…${token!.slice(-4)}`);

    const never = await postFields(browser, "/settings/api/tokens", [
      ["csrf", browser.csrf],
      ["name", "Forever"],
      ["areas", "content:read"],
      ["lifetimeDays", "never"],
    ]);
    expect(never.status).toBe(201);
    expect((await grantsOf(browser)).items.find((g) => g.name === "Forever")?.expiresAt).toBeNull();
  });

  it("refuses a missing, forged or cross-site CSRF token, and creates nothing", async () => {
    const s = await makeStore(db);
    const browser = await sessionFor(db, s.ownerUserId, s.id);
    const fields = { name: "Sneaky", areas: "products:read", lifetimeDays: "30" };
    expect((await postForm(browser, "/settings/api/tokens", fields)).status).toBe(403);
    expect((await postForm(browser, "/settings/api/tokens", { ...fields, csrf: "0".repeat(64) })).status).toBe(403);
    const other = await sessionFor(db, s.ownerUserId, s.id);
    expect((await postForm(browser, "/settings/api/tokens", { ...fields, csrf: other.csrf })).status).toBe(403);
    const crossSite = await postForm(browser, "/settings/api/tokens", { ...fields, csrf: browser.csrf }, { origin: "https://evil.test" });
    expect(crossSite.status).toBe(403);
    expect(await crossSite.text()).not.toContain("wc_live_");
    expect((await grantsOf(browser)).items).toHaveLength(0);
  });

  it("bad input comes back as the form with an alert (400), keeping what was typed", async () => {
    const s = await makeStore(db);
    const browser = await sessionFor(db, s.ownerUserId, s.id);
    const noAreas = await postFields(browser, "/settings/api/tokens", [
      ["csrf", browser.csrf],
      ["name", "Kept name"],
      ["lifetimeDays", "365"],
    ]);
    expect(noAreas.status).toBe(400);
    const html = await noAreas.text();
    expect(html).toMatch(/class="alert" role="alert">Choose at least one area/);
    expect(html).toMatch(/name="name"[^>]*value="Kept name"/);
    expect(html).toMatch(/<option value="365" selected=""/);
    const badLifetime = await postFields(browser, "/settings/api/tokens", [
      ["csrf", browser.csrf],
      ["name", "x"],
      ["areas", "products:read"],
      ["lifetimeDays", "7"],
    ]);
    expect(badLifetime.status).toBe(400);
    expect((await grantsOf(browser)).items).toHaveLength(0);
  });

  it("a Staff member submitting analytics:read by hand gets the 403 page with an alert, and nothing is created", async () => {
    const s = await makeStore(db);
    const staff = await addMember(db, s, "staff");
    const browser = await sessionFor(db, staff.userId, s.id);
    const res = await postFields(browser, "/settings/api/tokens", [
      ["csrf", browser.csrf],
      ["name", "Peek"],
      ["areas", "products:read"],
      ["areas", "analytics:read"],
      ["lifetimeDays", "30"],
    ]);
    expect(res.status).toBe(403);
    const html = await res.text();
    expect(html).toMatch(/class="alert" role="alert">Your role does not allow granting analytics:read/);
    expect(html).not.toContain('id="new-token"');
    // The form comes back without the scope the role cannot grant.
    expect(offeredScopes(html)).not.toContain("analytics:read");
    expect((await grantsOf(browser)).items).toHaveLength(0);
  });

  it("revoking through the form answers 303 with a notice, and the token then answers 401", async () => {
    const s = await makeStore(db);
    const browser = await sessionFor(db, s.ownerUserId, s.id);
    const { token, grant } = await createToken(browser, ["products:read"], { name: "Short-lived" });
    expect((await api(token, "products/list", {})).status).toBe(200);
    const before = await (await page(browser, "/settings/api")).text();
    expect(revokeButtonFor(before, grant.id)).toBe(true);

    expect((await postForm(browser, "/settings/api/revoke", { id: grant.id })).status).toBe(403); // no CSRF token
    expect((await api(token, "products/list", {})).status).toBe(200);

    const res = await postForm(browser, "/settings/api/revoke", { id: grant.id, csrf: browser.csrf });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/settings/api?revoked=1");
    expect((await api(token, "products/list", {})).status).toBe(401);

    const after = await (await page(browser, "/settings/api?revoked=1")).text();
    expect(after).toContain("Token revoked. It stops working on its next call.");
    expect(section(after, "grants")).toContain('class="badge revoked"');
    expect(revokeButtonFor(after, grant.id)).toBe(false);
  });

  it("Staff cannot revoke the Owner's grant: no button, and a forged POST gets an error page; an Admin sees it but cannot either", async () => {
    const s = await makeStore(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const { token, grant } = await createToken(owner, ["products:read"], { name: "Owner script" });
    const staff = await addMember(db, s, "staff");
    const staffBrowser = await sessionFor(db, staff.userId, s.id);
    const staffPage = await (await page(staffBrowser, "/settings/api")).text();
    expect(revokeButtonFor(staffPage, grant.id)).toBe(false);
    expect(staffPage).not.toContain("Owner script");

    const forged = await postForm(staffBrowser, "/settings/api/revoke", { id: grant.id, csrf: staffBrowser.csrf });
    expect(forged.status).toBe(404);
    expect(await forged.text()).toMatch(/class="alert" role="alert">API grant not found/);

    const admin = await addMember(db, s, "admin");
    const adminBrowser = await sessionFor(db, admin.userId, s.id);
    const own = await createToken(adminBrowser, ["products:read"], { name: "Admin script" });
    const adminPage = await (await page(adminBrowser, "/settings/api")).text();
    expect(adminPage).toContain("Owner script");
    expect(revokeButtonFor(adminPage, grant.id)).toBe(false);
    expect(revokeButtonFor(adminPage, own.grant.id)).toBe(true);
    const refused = await postForm(adminBrowser, "/settings/api/revoke", { id: grant.id, csrf: adminBrowser.csrf });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toMatch(/class="alert" role="alert">Your role does not allow revoking another member/);

    const garbage = await postForm(adminBrowser, "/settings/api/revoke", { id: "not-a-uuid", csrf: adminBrowser.csrf });
    expect(garbage.status).toBe(400);

    expect((await grantsOf(owner)).items.find((g) => g.id === grant.id)?.status).toBe("active");
    expect((await api(token, "products/list", {})).status).toBe(200);
    // The Owner (staff.write) does get a button for the Admin's grant.
    expect(revokeButtonFor(await (await page(owner, "/settings/api")).text(), own.grant.id)).toBe(true);
  });

  it("an Admin sees every member's grants (scope store); a Staff member sees only their own", async () => {
    const s = await makeStore(db);
    const staff = await addMember(db, s, "staff");
    const admin = await addMember(db, s, "admin");
    const staffBrowser = await sessionFor(db, staff.userId, s.id);
    const adminBrowser = await sessionFor(db, admin.userId, s.id);
    await createToken(staffBrowser, ["orders:read"], { name: "Staff orders export" });
    await createToken(await sessionFor(db, s.ownerUserId, s.id), ["analytics:read"], { name: "Owner dashboard" });

    const adminGrants = section(await (await page(adminBrowser, "/settings/api")).text(), "grants");
    expect(adminGrants).toContain("<th>Member</th>");
    expect(adminGrants).toContain("Staff orders export");
    expect(adminGrants).toContain(staff.email);
    expect(adminGrants).toContain("Owner dashboard");

    const staffGrants = section(await (await page(staffBrowser, "/settings/api")).text(), "grants");
    expect(staffGrants).toContain("Staff orders export");
    expect(staffGrants).not.toContain("Owner dashboard");
    expect(staffGrants).not.toContain("<th>Member</th>");
  });

  it("recent activity shows a call made with the token", async () => {
    const s = await makeStore(db);
    const browser = await sessionFor(db, s.ownerUserId, s.id);
    const before = section(await (await page(browser, "/settings/api")).text(), "activity");
    expect(before).not.toContain("Reporter");
    const { token } = await createToken(browser, ["products:read"], { name: "Reporter" });
    expect((await api(token, "products/list", {})).status).toBe(200);
    expect((await api(token, "products/list", {})).status).toBe(200);
    const html = await (await page(browser, "/settings/api")).text();
    const activity = section(html, "activity");
    expect(activity).toContain("Reporter");
    expect(activity).toContain("products.list");
    expect(activity).toMatch(/<td>Reporter<\/td><td class="mono">products\.list<\/td><td>read<\/td><td>Token<\/td><td class="num">2<\/td>/);
    // Last used is filled in on the grant.
    expect(section(html, "grants")).toMatch(/<time datetime="[^"]+">\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC<\/time>/);
  });
});
