import { describe, expect, it } from "vitest";
import { callAssistantTool } from "#shared/assistant/assistant-calls";
import { createLogger } from "#shared/core/log";
import { withStore } from "#shared/db/with-store";
import { resolveCaller } from "#shared/pipeline/run";
import { makeStore, testDb } from "../../../test/harness";
import { addMember } from "../../../test/procedures";
import { page, postForm, rpc, rpcJson, sessionFor, type Browser, type RpcError } from "../../../test/admin";
import { connectMcpClient, toolResult } from "../../../test/oauth";

const db = testDb();

const resultOf = toolResult;

const section = (html: string, id: string) => {
  const start = html.indexOf(`<section id="${id}"`);
  return start < 0 ? "" : html.slice(start, html.indexOf("</section>", start));
};

interface Product {
  id: string;
  title: string;
  vendor: string | null;
}

const productOf = async (browser: Browser, id: string) => rpcJson<Product>(await rpc(browser, "products/get", { id }));

interface Approval {
  id: string;
  state: string;
  error: string | null;
}
/** One proposal as aiApprovals.list answers it to `browser` (every test store also holds the Owner's "Fixture proposal"). */
const approvalOf = async (browser: Browser, id: string) =>
  (await rpcJson<{ items: Approval[] }>(await rpc(browser, "aiApprovals/list", {}))).items.find((a) => a.id === id);

/** A store whose AI clients may propose changes, a connected client, the fixture product, and a proposal helper. */
async function setUp(options: { role?: "owner" | "admin" | "staff" } = {}) {
  const store = await makeStore(db);
  const owner = await sessionFor(db, store.ownerUserId, store.id);
  expect((await rpc(owner, "store/update", { mcpAllowChanges: true })).status).toBe(200);
  const connected = await connectMcpClient(db, { areas: ["products:write"], store, ...(options.role ? { role: options.role } : {}) });
  const product = (resultOf(await connected.client.callTool({ name: "listProducts", arguments: {} })) as { items: Product[] }).items[0]!;
  const propose = async (args: Record<string, unknown>) => {
    const res = await connected.client.callTool({ name: "updateProduct", arguments: { id: product.id, ...args } });
    expect(res.isError).toBeFalsy();
    const proposed = resultOf(res);
    expect(proposed).toMatchObject({ status: "pending" });
    return String(proposed["approvalId"]);
  };
  return { ...connected, owner, product, propose };
}

describe("AI approvals page", () => {
  it("shows the empty state, and the nav link to every member; another member's proposal read-only", async () => {
    const store = await makeStore(db);
    const staff = await sessionFor(db, (await addMember(db, store, "staff")).userId, store.id);
    const res = await page(staff, "/ai/approvals");
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const html = await res.text();
    expect(html).toContain('href="/ai/approvals"');
    expect(html).toContain("only they can approve or reject it, and everyone else sees it here read-only");
    // The store's fixture proposal is the Owner's: Staff see it, without the buttons, and nothing waits for them.
    expect(section(html, "pending")).toContain("Nothing is waiting.");
    expect(section(html, "others")).toContain("Fixture proposal");
    expect(section(html, "others")).not.toContain("<form");
    await withStore(db, store.id, (tx) => tx.$client.query("delete from ai_approval where store_id = $1", [store.id]));
    expect(await (await page(staff, "/ai/approvals")).text()).toContain("No proposals yet. When an AI client connected over MCP proposes a change, it waits here for you.");
    expect((await page(null, "/ai/approvals")).status).toBe(302);
  });

  it("lists a pending proposal with its summary and diff; approve once (303, the product changes), twice is 409", async () => {
    const { browser, product, propose } = await setUp();
    expect(product.title).toBe("Fixture");
    const id = await propose({ title: "Renamed <b>" });

    const html = await (await page(browser, "/ai/approvals")).text();
    const pending = section(html, "pending");
    expect(pending).toContain("Waiting for you");
    expect(pending).toContain("Update product &quot;Fixture&quot;: title &quot;Fixture&quot; → &quot;Renamed &lt;b&gt;&quot;.");
    expect(pending).not.toContain("<b>");
    expect(pending).toContain("updateProduct");
    expect(pending).toContain('<th scope="row">Title</th><td data-label="Now">Fixture</td><td data-label="Proposed">Renamed &lt;b&gt;</td>');
    expect(pending).toContain(`name="id" value="${id}"`);
    expect(pending).toContain('action="/ai/approvals/approve"');
    expect(pending).toContain('action="/ai/approvals/reject"');
    expect(pending).toMatch(/\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/);
    expect(section(html, "others")).not.toContain(`value="${id}"`);

    const approved = await postForm(browser, "/ai/approvals/approve", { id, csrf: browser.csrf });
    expect(approved.status).toBe(303);
    expect(approved.headers.get("location")).toBe("/ai/approvals?done=approved");
    expect((await productOf(browser, product.id)).title).toBe("Renamed <b>");

    const after = await (await page(browser, "/ai/approvals?done=approved")).text();
    expect(after).toContain("Approved: the change has been made.");
    expect(section(after, "pending")).not.toContain(`value="${id}"`);
    expect(section(after, "decided")).toMatch(/<span class="badge approved">approved<\/span>/);

    const twice = await postForm(browser, "/ai/approvals/approve", { id, csrf: browser.csrf });
    expect(twice.status).toBe(409);
    const twiceHtml = await twice.text();
    expect(twiceHtml).toContain('role="alert"');
    expect(twiceHtml).toContain("This proposal is approved; it can be decided only once, while pending.");
  });

  it("rejecting shows the proposal under Recent decisions with its reason; nothing changes", async () => {
    const { browser, product, propose } = await setUp();
    const id = await propose({ vendor: "Someone else" });
    const res = await postForm(browser, "/ai/approvals/reject", { id, csrf: browser.csrf, reason: "Not <now>" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/ai/approvals?done=rejected");
    expect((await productOf(browser, product.id)).vendor).not.toBe("Someone else");
    const html = await (await page(browser, "/ai/approvals?done=rejected")).text();
    expect(html).toContain("Rejected: nothing was changed.");
    expect(section(html, "pending")).not.toContain(`value="${id}"`);
    const decided = section(html, "decided");
    expect(decided).toContain("Recent decisions");
    expect(decided).toContain('<span class="badge rejected">rejected</span>');
    expect(decided).toContain("Not &lt;now&gt;");
    expect(await approvalOf(browser, id)).toMatchObject({ state: "rejected", error: "Not <now>" });
    // Already decided: rejecting again is a conflict.
    expect((await postForm(browser, "/ai/approvals/reject", { id, csrf: browser.csrf })).status).toBe(409);
  });

  it("shows a failed approval's error (the connection was revoked since)", async () => {
    const { browser, product, propose } = await setUp();
    const id = await propose({ title: "Never" });
    const grants = await rpcJson<{ items: { id: string; kind: string }[] }>(await rpc(browser, "apiGrants/list", {}));
    expect((await rpc(browser, "apiGrants/revoke", { id: grants.items.find((g) => g.kind === "oauth")!.id })).status).toBe(200);
    const res = await postForm(browser, "/ai/approvals/approve", { id, csrf: browser.csrf });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/ai/approvals?done=failed&id=${id}`);
    const html = await (await page(browser, res.headers.get("location")!)).text();
    expect(html).toContain("Approved, but the change could not be made: The AI client&#39;s connection was revoked or has expired.");
    expect((await productOf(browser, product.id)).title).toBe("Fixture");
    expect(section(html, "decided")).toContain('<span class="badge failed">failed</span>');
  });

  it("refuses a missing, forged or cross-site CSRF token (403) and decides nothing", async () => {
    const { browser, product, propose } = await setUp();
    const id = await propose({ title: "Sneaky" });
    expect((await postForm(browser, "/ai/approvals/approve", { id })).status).toBe(403);
    expect((await postForm(browser, "/ai/approvals/approve", { id, csrf: "0".repeat(64) })).status).toBe(403);
    const other = await sessionFor(db, (await makeStore(db)).ownerUserId, null);
    expect((await postForm(browser, "/ai/approvals/reject", { id, csrf: other.csrf })).status).toBe(403);
    expect((await postForm(browser, "/ai/approvals/approve", { id, csrf: browser.csrf }, { origin: "https://evil.test" })).status).toBe(403);
    expect((await postForm(browser, "/ai/approvals/reject", { id, csrf: browser.csrf }, { "sec-fetch-site": "cross-site" })).status).toBe(403);
    expect(await approvalOf(browser, id)).toMatchObject({ state: "pending" });
    expect((await productOf(browser, product.id)).title).toBe("Fixture");
  });

  it("answers 400 for an id that is not a proposal's, and 404 for one of another store", async () => {
    const { browser } = await setUp();
    const bad = await postForm(browser, "/ai/approvals/approve", { id: "nope", csrf: browser.csrf });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("That is not a proposal of this store.");
    const elsewhere = await setUp();
    const theirs = await elsewhere.propose({ title: "Elsewhere" });
    expect((await postForm(browser, "/ai/approvals/approve", { id: theirs, csrf: browser.csrf })).status).toBe(404);
    expect(await approvalOf(elsewhere.browser, theirs)).toMatchObject({ state: "pending" });
  });

  it("only the member who connected the client decides: another Admin and the Owner see it read-only and are refused, at the page and the RPC", async () => {
    const { browser, store, owner, product, propose } = await setUp({ role: "admin" });
    const id = await propose({ title: "Renamed" });
    const mine = await (await page(browser, "/ai/approvals")).text();
    expect(section(mine, "pending")).toContain(`value="${id}"`);
    expect(section(mine, "others")).not.toContain(id);
    const listedToMember = (await rpcJson<{ items: { id: string; yours: boolean }[] }>(await rpc(browser, "aiApprovals/list", {}))).items;
    expect(listedToMember.find((a) => a.id === id)).toMatchObject({ yours: true });

    const otherAdmin = await sessionFor(db, (await addMember(db, store, "admin")).userId, store.id);
    for (const other of [otherAdmin, owner]) {
      const theirs = await (await page(other, "/ai/approvals")).text();
      // Seen, with the change it would make, but without the buttons.
      expect(section(theirs, "pending")).not.toContain(id);
      const readOnly = section(theirs, "others");
      expect(readOnly).toContain("Waiting for other members");
      expect(readOnly).toContain(`id="p-${id}"`);
      expect(readOnly).toContain('<td data-label="Now">Fixture</td><td data-label="Proposed">Renamed</td>');
      expect(readOnly).not.toContain('action="/ai/approvals/approve"');
      expect(readOnly).not.toContain('action="/ai/approvals/reject"');
      const listed = (await rpcJson<{ items: { id: string; yours: boolean; state: string }[] }>(await rpc(other, "aiApprovals/list", {}))).items;
      expect(listed.find((a) => a.id === id)).toMatchObject({ yours: false, state: "pending" });

      const forged = await postForm(other, "/ai/approvals/approve", { id, csrf: other.csrf });
      expect(forged.status).toBe(403);
      expect(await forged.text()).toContain("Only the member who connected the AI client can decide on this proposal");
      expect((await postForm(other, "/ai/approvals/reject", { id, csrf: other.csrf })).status).toBe(403);
      for (const op of ["aiApprovals/approve", "aiApprovals/reject"]) {
        const res = await rpc(other, op, { id });
        expect(res.status, op).toBe(403);
        expect((await rpcJson<RpcError>(res)).data?.reason, op).toBe("not_your_proposal");
      }
    }
    expect(await approvalOf(browser, id)).toMatchObject({ state: "pending" });
    expect((await productOf(browser, product.id)).title).toBe("Fixture");
    // The home page counts what waits for you: the member's, not the Owner's.
    const count = (html: string) => /data-figure="approvals"><strong>(\d+)<\/strong>/.exec(html)?.[1];
    expect(count(await (await page(browser, "/")).text())).toBe("1");

    const approved = await postForm(browser, "/ai/approvals/approve", { id, csrf: browser.csrf });
    expect(approved.status).toBe(303);
    expect((await productOf(owner, product.id)).title).toBe("Renamed");
  });

  it("a removed member's pending proposals expire; the others still see them, and nobody can decide them", async () => {
    const { browser, owner, product, propose } = await setUp({ role: "admin" });
    const id = await propose({ title: "Orphan" });
    const me = await rpcJson<{ member: { id: string } }>(await rpc(browser, "staff/me", {}));
    expect((await rpc(owner, "staff/remove", { memberId: me.member.id })).status).toBe(200);
    const listed = (await rpcJson<{ items: { id: string; state: string; yours: boolean; grantId: string | null }[] }>(await rpc(owner, "aiApprovals/list", {}))).items;
    expect(listed.find((a) => a.id === id)).toMatchObject({ state: "expired", yours: false, grantId: null });
    const html = await (await page(owner, "/ai/approvals")).text();
    expect(section(html, "decided")).toContain('<span class="badge expired">expired</span>');
    expect(section(html, "others")).not.toContain(id);
    const refused = await rpc(owner, "aiApprovals/approve", { id });
    expect(refused.status).toBe(409);
    expect((await rpcJson<RpcError>(refused)).data).toMatchObject({ state: "expired" });
    expect((await productOf(owner, product.id)).title).toBe("Fixture");
    // The store's own fixture proposal (the Owner's) is untouched.
    expect((await rpcJson<{ items: { summary: string; state: string }[] }>(await rpc(owner, "aiApprovals/list", { state: "pending" }))).items.map((a) => a.summary)).toEqual(["Fixture proposal"]);
  });
});

describe("AI approvals: the store's assistant", () => {
  it("a proposal from a member's conversation waits for that member here too, saying where it came from; approving it here makes the change", async () => {
    const store = await makeStore(db);
    await withStore(db, store.id, (tx) => tx.$client.query("update store set mcp_allow_changes = true where id = $1", [store.id]));
    const principal = { kind: "member" as const, userId: store.ownerUserId, storeId: store.id };
    const caller = await resolveCaller(db, principal, "assistant");
    const owner = await sessionFor(db, store.ownerUserId, store.id);
    const product = (await withStore(db, store.id, (tx) => tx.$client.query<{ id: string }>("select id from product limit 1"))).rows[0]!.id;
    const proposed = await callAssistantTool({ db, principal, log: createLogger({ test: true }, "error") }, caller, "updateProduct", { id: product, vendor: "Asha Looms" });
    const { approvalId } = proposed.data as { approvalId: string };
    const pending = section(await (await page(owner, "/ai/approvals")).text(), "pending");
    expect(pending).toContain("From the store&#39;s assistant");
    expect((await postForm(owner, "/ai/approvals/approve", { csrf: owner.csrf, id: approvalId })).status).toBe(303);
    expect((await productOf(owner, product)).vendor).toBe("Asha Looms");
  });
});
