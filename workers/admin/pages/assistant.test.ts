import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { conversationObject } from "../assistant-conversation";
import type { AdminBindings } from "../env";
import { makeStore, testDb } from "../../../test/harness";
import { page, postForm, sessionFor } from "../../../test/admin";
import { addMember, callerFor } from "../../../test/procedures";

const db = testDb();

/** The store's assistant in the admin (issue 24 item 1): each member's own conversations, listed and deletable without JavaScript. */
describe("/assistant", () => {
  it("lists the member's own conversations, newest first, and deletes one with the session's CSRF token", async () => {
    const store = await makeStore(db);
    const owner = await sessionFor(db, store.ownerUserId, store.id);
    const { id } = (await callerFor(db, store.ownerUserId, store.id)("assistant.start", { firstMessage: "Which kurtas sell best?" })) as { id: string };
    const html = await (await page(owner, "/assistant")).text();
    expect(html.indexOf("Which kurtas sell best?")).toBeGreaterThan(0);
    expect(html.indexOf("Which kurtas sell best?")).toBeLessThan(html.indexOf("Fixture conversation"));
    expect((await postForm(owner, "/assistant/delete", { id })).status).toBe(403);
    const bindings = env as unknown as AdminBindings;
    const stub = conversationObject(bindings.ASSISTANT, store.id, id);
    expect(await stub.send({ kind: "member", userId: store.ownerUserId, storeId: store.id }, "list products")).toMatchObject({ ok: true });
    const deleted = await postForm(owner, "/assistant/delete", { csrf: owner.csrf, id });
    expect(deleted.status).toBe(303);
    expect(deleted.headers.get("location")).toBe("/assistant?deleted=1");
    const after = await (await page(owner, "/assistant?deleted=1")).text();
    expect(after).toContain("Conversation deleted.");
    expect(after).not.toContain("Which kurtas sell best?");
    // Its messages went with it (after the answer: the next read finds them gone).
    expect(await stub.transcript()).toEqual([]);
  });

  it("another member's conversation is neither listed nor deletable: 404 with what happened", async () => {
    const store = await makeStore(db);
    const staff = await addMember(db, store, "staff");
    const theirs = (await callerFor(db, staff.userId, store.id)("assistant.start", { firstMessage: "Staff question" })) as { id: string };
    const owner = await sessionFor(db, store.ownerUserId, store.id);
    expect(await (await page(owner, "/assistant")).text()).not.toContain("Staff question");
    const refused = await postForm(owner, "/assistant/delete", { csrf: owner.csrf, id: theirs.id });
    expect(refused.status).toBe(404);
    expect(await refused.text()).toContain("not found");
    expect(await (await page(await sessionFor(db, staff.userId, store.id), "/assistant")).text()).toContain("Staff question");
    expect((await postForm(owner, "/assistant/delete", { csrf: owner.csrf, id: "not-a-uuid" })).status).toBe(404);
  });
});

/** The conversation's page without JavaScript: ask, read the answer and the cards, approve a proposal inline. */
describe("/assistant/<id>", () => {
  it("asking starts a conversation whose page shows the question, the tool's card and the answer naming the store's products", async () => {
    const store = await makeStore(db);
    const owner = await sessionFor(db, store.ownerUserId, store.id);
    const asked = await postForm(owner, "/assistant/new", { csrf: owner.csrf, message: "list products" });
    expect(asked.status).toBe(303);
    const location = asked.headers.get("location")!;
    expect(location).toMatch(/^\/assistant\/[0-9a-f-]{36}#transcript$/);
    const html = await (await page(owner, location.replace("#transcript", ""))).text();
    expect(html).toContain("<h1>list products</h1>");
    expect(html).toContain('data-tool-card="products"');
    expect(html).toMatch(/<a href="\/products\/[0-9a-f-]{36}">Fixture<\/a>/);
    expect(html).toMatch(/One product: Fixture \(₹/);
    // Another member of the store, or another store's Owner, gets the 404 page for it.
    const staff = await sessionFor(db, (await addMember(db, store, "staff")).userId, store.id);
    expect((await page(staff, location.replace("#transcript", ""))).status).toBe(404);
    expect((await postForm(staff, location.replace("#transcript", ""), { csrf: staff.csrf, message: "list products" })).status).toBe(404);
  });

  it("'change the price of Fixture to ₹899': the proposal's card with its diff, nothing changed until Approve, then the new price; Reject changes nothing", async () => {
    const store = await makeStore(db);
    const owner = await sessionFor(db, store.ownerUserId, store.id);
    await withStore(db, store.id, (tx) => tx.$client.query("update store set mcp_allow_changes = true where id = $1", [store.id]));
    const asked = await postForm(owner, "/assistant/new", { csrf: owner.csrf, message: "change the price of Fixture to ₹899" });
    const path = asked.headers.get("location")!.replace("#transcript", "");
    const html = await (await page(owner, path)).text();
    expect(html).toContain('data-tool-card="proposal"');
    expect(html).toContain("Nothing changes until you approve it.");
    const approvalId = /name="id" value="([0-9a-f-]{36})"/.exec(html)![1]!;
    const prices = () => withStore(db, store.id, (tx) => tx.$client.query<{ p: string }>("select distinct price_minor::text as p from product_variant")).then((r) => r.rows.map((x) => x.p));
    expect(await prices()).not.toContain("89900");
    const approved = await postForm(owner, `${path}/approve`, { csrf: owner.csrf, id: approvalId });
    expect(approved.status).toBe(200);
    const after = await approved.text();
    expect(after).toContain("Approved: the change was made.");
    // The card now says so too, and offers no Approve.
    expect(after).toContain('data-proposal-state="approved"');
    expect(after).not.toContain(`value="${approvalId}"`);
    expect(await prices()).toEqual(["89900"]);
    // A second proposal, rejected: the price stays.
    await postForm(owner, path, { csrf: owner.csrf, message: "change the price of Fixture to ₹100" });
    const again = await (await page(owner, path)).text();
    const second = [...again.matchAll(/name="id" value="([0-9a-f-]{36})"/g)].map((m) => m[1]).find((v) => v !== approvalId)!;
    expect(await (await postForm(owner, `${path}/reject`, { csrf: owner.csrf, id: second })).text()).toContain("Rejected: nothing was changed.");
    expect(await prices()).toEqual(["89900"]);
  });

  it("the message limit and the budget answer in the conversation with what to do", async () => {
    const store = await makeStore(db);
    const owner = await sessionFor(db, store.ownerUserId, store.id);
    const asked = await postForm(owner, "/assistant/new", { csrf: owner.csrf, message: "list products" });
    const path = asked.headers.get("location")!.replace("#transcript", "");
    await withStore(db, store.id, (tx) => tx.$client.query("update store set assistant_daily_tokens = 1 where id = $1", [store.id]));
    const spent = await postForm(owner, path, { csrf: owner.csrf, message: "list products" });
    expect(spent.status).toBe(429);
    expect(await spent.text()).toContain("raise the budget in Settings");
    expect((await postForm(owner, path, { csrf: owner.csrf, message: "" })).status).toBe(400);
  });
});

describe("/assistant/<id>/stream", () => {
  it("streams the answer's words as server-sent events, then the whole answer; the page carries the form's stream address and its script", async () => {
    const store = await makeStore(db);
    const owner = await sessionFor(db, store.ownerUserId, store.id);
    const path = (await postForm(owner, "/assistant/new", { csrf: owner.csrf, message: "list products" })).headers.get("location")!.replace("#transcript", "");
    const html = await (await page(owner, path)).text();
    expect(html).toContain(`data-stream="${path}/stream"`);
    expect(html).toContain('querySelector("form[data-stream]")');
    const res = await postForm(owner, `${path}/stream`, { csrf: owner.csrf, message: "what sold today?" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const events = (await res.text())
      .split("\n\n")
      .filter(Boolean)
      .map((e) => ({ name: /^event: (.*)$/m.exec(e)![1], data: JSON.parse(/^data: (.*)$/m.exec(e)![1]!) as unknown }));
    const text = events.filter((e) => e.name === "text").map((e) => e.data as string);
    const done = events.at(-1)!;
    expect(done.name).toBe("done");
    expect(text.length).toBeGreaterThan(3);
    expect(text.join("")).toBe((done.data as { answer: string }).answer);
    expect((done.data as { answer: string }).answer).toMatch(/^Today \(\d{4}-\d{2}-\d{2}\): \d+ orders?, sales ₹/);
    // Without the session's CSRF token, or for another member, nothing is streamed.
    expect((await postForm(owner, `${path}/stream`, { message: "hi" })).status).toBe(403);
    const staff = await sessionFor(db, (await addMember(db, store, "staff")).userId, store.id);
    expect((await postForm(staff, `${path}/stream`, { csrf: staff.csrf, message: "hi" })).status).toBe(404);
  });
});

describe("/assistant/<id> under a crowd and hostile input", () => {
  it("60 concurrent messages to one conversation, odd ids and a huge message: one turn at a time, the rest refused with what to do, never a 5xx", async () => {
    const store = await makeStore(db);
    const owner = await sessionFor(db, store.ownerUserId, store.id);
    const path = (await postForm(owner, "/assistant/new", { csrf: owner.csrf, message: "list products" })).headers.get("location")!.replace("#transcript", "");
    const statuses = await Promise.all(Array.from({ length: 60 }, () => postForm(owner, path, { csrf: owner.csrf, message: "list products" }).then((r) => r.status)));
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    expect(new Set(statuses).size).toBeGreaterThan(0);
    for (const s of statuses) expect([303, 409, 429]).toContain(s);
    expect(statuses.filter((s) => s === 303).length).toBeLessThanOrEqual(9);
    for (const odd of ["/assistant/%00", "/assistant/..%2F..%2Fsettings", `/assistant/${"a".repeat(5000)}`, "/assistant/00000000-0000-0000-0000-000000000000"]) {
      expect((await page(owner, odd)).status, odd).toBe(404);
    }
    expect((await postForm(owner, path, { csrf: owner.csrf, message: "x".repeat(100_000) })).status).toBe(400);
    expect((await postForm(owner, path, { csrf: owner.csrf, message: "nul\u0000" })).status).toBeLessThan(500);
  });
});
