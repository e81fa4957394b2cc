import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
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
    const { id } = (await callerFor(db, store.ownerUserId, store.id)("assistant.start", { firstMessage: "What sold today?" })) as { id: string };
    const html = await (await page(owner, "/assistant")).text();
    expect(html.indexOf("What sold today?")).toBeGreaterThan(0);
    expect(html.indexOf("What sold today?")).toBeLessThan(html.indexOf("Fixture conversation"));
    expect((await postForm(owner, "/assistant/delete", { id })).status).toBe(403);
    const bindings = env as unknown as AdminBindings;
    const stub = conversationObject(bindings.ASSISTANT, store.id, id);
    expect(await stub.send({ kind: "member", userId: store.ownerUserId, storeId: store.id }, "list products")).toMatchObject({ ok: true });
    const deleted = await postForm(owner, "/assistant/delete", { csrf: owner.csrf, id });
    expect(deleted.status).toBe(303);
    expect(deleted.headers.get("location")).toBe("/assistant?deleted=1");
    const after = await (await page(owner, "/assistant?deleted=1")).text();
    expect(after).toContain("Conversation deleted.");
    expect(after).not.toContain("What sold today?");
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
