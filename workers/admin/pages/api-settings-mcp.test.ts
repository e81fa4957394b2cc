import { afterEach, describe, expect, it, vi } from "vitest";
import { withStore } from "#shared/db/with-store";
import worker from "../../admin/index";
import { call } from "../../../test/call";
import { makeStore, testDb } from "../../../test/harness";
import { addMember } from "../../../test/procedures";
import { ADMIN, createToken, page, postForm, rpc, rpcJson, sessionFor } from "../../../test/admin";
import { section } from "./api-settings-test-helpers";

/** Settings → MCP & API: the MCP URL, the store's AI-client settings, and connected AI clients. */

const db = testDb();

afterEach(() => vi.restoreAllMocks());

describe("Settings → MCP & API", () => {
  it("shows the store's MCP URL with a Copy button and how to connect", async () => {
    const s = await makeStore(db);
    const browser = await sessionFor(db, s.ownerUserId, s.id);
    const res = await call(worker, "https://admin.test/settings/api", { headers: { cookie: browser.cookie }, redirect: "manual" });
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain(`id="mcp-url" readonly="" value="https://admin.test/api/mcp/${s.slug}"`);
    expect(html).toMatch(/<button type="button" id="copy-mcp-url" data-copy="mcp-url"/);
    expect(html).toContain("navigator.clipboard.writeText");
    expect(html).toContain("Paste this URL into Claude, Cursor, the MCP Inspector or any MCP client");
    expect(html).toContain("never beyond your role");
    // It comes before everything else on the page.
    expect(html.indexOf("Connect an AI client")).toBeLessThan(html.indexOf("AI client settings"));
    expect(html.indexOf("AI client settings")).toBeLessThan(html.indexOf("Create a token"));

    // Every member sees it, with this admin's own origin.
    const staff = await addMember(db, s, "staff");
    const theirs = await (await page(await sessionFor(db, staff.userId, s.id), "/settings/api")).text();
    expect(theirs).toContain(`value="${ADMIN}/api/mcp/${s.slug}"`);
  });

  it("the Owner saves the three AI-client settings; unticked boxes mean off", async () => {
    const s = await makeStore(db);
    const browser = await sessionFor(db, s.ownerUserId, s.id);
    const before = section(await (await page(browser, "/settings/api")).text(), "mcp-settings");
    expect(before).toContain('action="/settings/api/mcp"');
    expect(before).toContain(`name="csrf" value="${browser.csrf}"`);
    for (const label of ["Let clients read customer details", "Allow AI clients to make changes", "Changes need approval"]) {
      expect(before).toContain(label);
    }
    expect(before).toMatch(/name="readCustomerDetails" value="on"(?! checked)/);
    expect(before).toMatch(/name="changesNeedApproval" value="on" checked=""/);
    expect(await rpcJson(await rpc(browser, "mcpSettings/get"))).toEqual({ readCustomerDetails: false, allowChanges: false, changesNeedApproval: true });

    const res = await postForm(browser, "/settings/api/mcp", { csrf: browser.csrf, readCustomerDetails: "on", allowChanges: "on" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/settings/api?mcp=saved");
    expect(await rpcJson(await rpc(browser, "mcpSettings/get"))).toEqual({ readCustomerDetails: true, allowChanges: true, changesNeedApproval: false });

    const after = await (await page(browser, "/settings/api?mcp=saved")).text();
    expect(after).toContain("AI client settings saved.");
    const form = section(after, "mcp-settings");
    expect(form).toMatch(/name="readCustomerDetails" value="on" checked=""/);
    expect(form).toMatch(/name="allowChanges" value="on" checked=""/);
    expect(form).not.toMatch(/name="changesNeedApproval" value="on" checked=""/);

    // Nothing ticked: all three off.
    expect((await postForm(browser, "/settings/api/mcp", { csrf: browser.csrf })).status).toBe(303);
    expect(await rpcJson(await rpc(browser, "mcpSettings/get"))).toEqual({ readCustomerDetails: false, allowChanges: false, changesNeedApproval: false });
    const events = await withStore(db, s.id, (tx) =>
      tx.$client.query<{ payload: unknown }>("select payload from outbox_event where kind = 'store.mcp_settings_updated' order by created_at, id"),
    );
    expect(events.rows.map((r) => r.payload)).toEqual([
      { fields: ["readCustomerDetails", "allowChanges", "changesNeedApproval"] },
      { fields: ["readCustomerDetails", "allowChanges"] },
    ]);
  });

  it("a Staff member sees no settings form (the page still answers 200) and a forged POST gets the 403 page", async () => {
    const s = await makeStore(db);
    const staff = await addMember(db, s, "staff");
    const browser = await sessionFor(db, staff.userId, s.id);
    const res = await page(browser, "/settings/api");
    expect(res.status).toBe(200);
    const settings = section(await res.text(), "mcp-settings");
    expect(settings).toContain("Only Owners and Admins can see and change these.");
    expect(settings).not.toContain("<form");
    expect(settings).not.toContain('action="/settings/api/mcp"');

    const forged = await postForm(browser, "/settings/api/mcp", { csrf: browser.csrf, allowChanges: "on" });
    expect(forged.status).toBe(403);
    expect(await forged.text()).toMatch(/class="alert" role="alert">Your role does not allow/);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    expect(await rpcJson(await rpc(owner, "mcpSettings/get"))).toMatchObject({ allowChanges: false });
  });

  it("an Admin gets the form too", async () => {
    const s = await makeStore(db);
    const admin = await addMember(db, s, "admin");
    const browser = await sessionFor(db, admin.userId, s.id);
    expect(section(await (await page(browser, "/settings/api")).text(), "mcp-settings")).toContain('action="/settings/api/mcp"');
    expect((await postForm(browser, "/settings/api/mcp", { csrf: browser.csrf, allowChanges: "on", changesNeedApproval: "on" })).status).toBe(303);
    expect(await rpcJson(await rpc(browser, "mcpSettings/get"))).toEqual({ readCustomerDetails: false, allowChanges: true, changesNeedApproval: true });
  });

  it("refuses a missing, forged or cross-site CSRF token on the settings form, and changes nothing", async () => {
    const s = await makeStore(db);
    const browser = await sessionFor(db, s.ownerUserId, s.id);
    const fields = { readCustomerDetails: "on", allowChanges: "on" };
    expect((await postForm(browser, "/settings/api/mcp", fields)).status).toBe(403);
    expect((await postForm(browser, "/settings/api/mcp", { ...fields, csrf: "0".repeat(64) })).status).toBe(403);
    const other = await sessionFor(db, s.ownerUserId, s.id);
    expect((await postForm(browser, "/settings/api/mcp", { ...fields, csrf: other.csrf })).status).toBe(403);
    expect((await postForm(browser, "/settings/api/mcp", { ...fields, csrf: browser.csrf }, { origin: "https://evil.test" })).status).toBe(403);
    expect(
      (await postForm(browser, "/settings/api/mcp", { ...fields, csrf: browser.csrf }, { "sec-fetch-site": "cross-site" })).status,
    ).toBe(403);
    expect(await rpcJson(await rpc(browser, "mcpSettings/get"))).toEqual({ readCustomerDetails: false, allowChanges: false, changesNeedApproval: true });
  });

  it("lists AI-client connections under Connected AI clients and script tokens under Script tokens", async () => {
    const s = await makeStore(db);
    const browser = await sessionFor(db, s.ownerUserId, s.id);
    const empty = section(await (await page(browser, "/settings/api")).text(), "grants");
    expect(empty).toContain("Connected AI clients");
    expect(empty).toContain("No AI clients connected yet.");

    const grantId = await withStore(db, s.id, async (tx) => {
      const { rows } = await tx.$client.query<{ id: string }>(
        `insert into api_grant (store_id, kind, member_id, name, areas, client_id, client_name)
         values ($1, 'oauth', $2, 'Claude', $3, 'client-123', 'Claude Desktop') returning id`,
        [s.id, s.memberId, ["products:read", "orders:read"]],
      );
      return rows[0]!.id;
    });
    await createToken(browser, ["content:read"], { name: "Nightly export" });

    const html = section(await (await page(browser, "/settings/api")).text(), "grants");
    const clients = html.slice(html.indexOf('id="ai-clients"'), html.indexOf('id="script-tokens"'));
    const tokens = html.slice(html.indexOf('id="script-tokens"'));
    expect(clients).toContain("Connected AI clients");
    expect(clients).toContain("Claude Desktop");
    expect(clients).toContain("products:read, orders:read");
    expect(clients).toContain(s.ownerEmail);
    expect(clients).toContain('class="badge active"');
    expect(clients).toContain(`name="id" value="${grantId}"`);
    expect(clients).toContain('aria-label="Revoke Claude Desktop"');
    expect(clients).not.toContain("Nightly export");
    expect(clients).not.toContain("No AI clients connected yet.");
    expect(tokens).toContain("Script tokens");
    expect(tokens).toContain("Nightly export");
    expect(tokens).not.toContain("Claude Desktop");

    // Revoking the connection works as for a token.
    const res = await postForm(browser, "/settings/api/revoke", { id: grantId, csrf: browser.csrf });
    expect(res.status).toBe(303);
    const after = section(await (await page(browser, "/settings/api")).text(), "grants");
    expect(after.slice(after.indexOf('id="ai-clients"'), after.indexOf('id="script-tokens"'))).toContain('class="badge revoked"');
  });
});
