import { describe, expect, it } from "vitest";
import { ADMIN, ownerOf, PASSWORD, person, postForm, rpc, signIn } from "../../test/admin";
import { call } from "../../test/call";
import { testDb } from "../../test/harness";
import { samplePath, unguarded, unsafeRoutes } from "../../test/same-site";
import { app } from "./app";
import worker from "./index";

/**
 * The admin's same-site rule (CSRF) is middleware, not a line each handler remembers: every route that
 * changes something has the guard of shared/http/csrf.ts in front of it, but for the bearer doors, which
 * carry no cookie. A route added later without it fails here.
 */
const db = testDb();

/** The doors other sites' clients call with a bearer token (MCP checks Origin itself). */
const BEARER_DOORS = [
  "POST /api/v1/:router/:procedure",
  "POST /api/oauth/register",
  "POST /api/oauth/token",
  "POST /api/oauth/revoke",
  "POST /api/mcp/:slug",
  "DELETE /api/mcp/:slug",
];

describe("the admin's same-site guard", () => {
  it("stands in front of every route that changes something, but the bearer doors", async () => {
    const routes = await unsafeRoutes(app);
    expect(routes.length).toBeGreaterThan(25);
    expect(unguarded(routes).sort()).toEqual([...BEARER_DOORS].sort());
  });

  it("refuses a cross-site request to each of them before its handler (403, whoever is signed in or not)", async () => {
    const { browser } = await ownerOf(db);
    for (const { method, path } of (await unsafeRoutes(app)).filter((r) => r.guarded)) {
      for (const cookie of [undefined, browser.cookie]) {
        const res = await call(worker, `${ADMIN}${samplePath(path)}`, {
          method,
          headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "cross-site", ...(cookie ? { cookie } : {}) },
          body: new URLSearchParams({ csrf: browser.csrf }).toString(),
          redirect: "manual",
        });
        expect(res.status, `${method} ${path}`).toBe(403);
        expect(await res.text(), `${method} ${path}`).toContain("Cross-site request refused. Use the admin from its own address.");
      }
    }
  });

  it("lets the site's own posts through: sign-in, a page's form, the RPC door", async () => {
    const p = await person(db);
    expect((await signIn(p.email, PASSWORD)).status).toBe(303);
    const { browser } = await ownerOf(db);
    const saved = await postForm(browser, "/links", { csrf: browser.csrf, action: "create", slug: "same-site", target: "/", utm_source: "a", utm_medium: "b", utm_campaign: "c" }, { "sec-fetch-site": "same-origin" });
    expect(saved.status).toBe(303);
    expect((await rpc(browser, "store/current", {}, { "sec-fetch-site": "same-origin" })).status).toBe(200);
  });

  it("the session-form prologue still refuses a same-site post without the session's token (403)", async () => {
    const { browser } = await ownerOf(db);
    for (const path of ["/settings", "/settings/apps", "/settings/api/tokens", "/ai/approvals/approve", "/select-store", "/logout", "/oauth/authorize", "/links"]) {
      const res = await postForm(browser, path, { csrf: "not-the-token" }, { "sec-fetch-site": "same-origin" });
      expect(res.status, path).toBe(403);
      expect(await res.text(), path).toContain("Cross-site request refused.");
    }
  });
});
