import { auth } from "@modelcontextprotocol/sdk/client/auth.js";
import { describe, expect, it } from "vitest";
import { makeStore, testDb } from "../../test/harness";
import { ownerOf, page, rpc, sessionFor } from "../../test/admin";
import { adminFetch, mcpUrl, MemoryOAuthClient } from "../../test/oauth";
import { expectSecureHtml } from "../../test/security";

/** The admin's answers carry the security headers of shared/http/security-headers.ts (issue 20, item 8). */
const db = testDb();

describe("security headers in the admin", () => {
  it("every page, signed in or not, refuses framing and inline code outside the listed hashes", async () => {
    const { browser } = await ownerOf(db);
    await expectSecureHtml(await page(null, "/login"), "none");
    await expectSecureHtml(await page(browser, "/"), "none");
    await expectSecureHtml(await page(browser, "/orders"), "none");
    // The MCP & API page copies secrets with an inline script: its hash is in the policy.
    const api = await expectSecureHtml(await page(browser, "/settings/api"), "none");
    expect(api).toContain("<script>");
    await expectSecureHtml(await page(browser, "/no-such-page"), "none");
  });

  it("the OAuth consent page cannot be framed (clickjacking a grant)", async () => {
    const store = await makeStore(db);
    const client = new MemoryOAuthClient("http://127.0.0.1:33418/callback");
    await auth(client, { serverUrl: mcpUrl(store.slug), fetchFn: adminFetch });
    const browser = await sessionFor(db, store.ownerUserId, store.id);
    const consent = await adminFetch(client.authorizationUrl!.toString(), { redirect: "manual", headers: { cookie: browser.cookie } });
    expect(consent.status).toBe(200);
    expect(await expectSecureHtml(consent, "none")).toContain("Connect Test MCP client");
  });

  it("JSON answers are not sniffed and carry no page policy", async () => {
    const { browser } = await ownerOf(db);
    const res = await rpc(browser, "staff/me");
    expect(res.status).toBe(200);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("content-security-policy")).toBeNull();
  });
});
