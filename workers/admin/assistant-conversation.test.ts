import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import type { Principal } from "#shared/pipeline/principal";
import { makeStore, testDb, type TestStore } from "../../test/harness";
import { callerFor } from "../../test/procedures";
import { conversationObject } from "./assistant-conversation";
import type { AdminBindings } from "./env";

const db = testDb();
const bindings = env as unknown as AdminBindings;

/** A new conversation of the store's Owner and its Durable Object. */
async function conversation(store: TestStore) {
  const { id } = (await callerFor(db, store.ownerUserId, store.id)("assistant.start", { firstMessage: "Hello" })) as { id: string };
  const stub = conversationObject(bindings.ASSISTANT, store.id, id);
  const principal: Principal = { kind: "member", userId: store.ownerUserId, storeId: store.id };
  return { id, stub, principal };
}

describe("a conversation's Durable Object (the local model, real Postgres)", () => {
  it("answers a message, keeps the transcript across calls (its own SQLite), and forgets it when cleared", async () => {
    const store = await makeStore(db);
    const { id, stub, principal } = await conversation(store);
    const sent = await stub.send(principal, "list products");
    expect(sent).toMatchObject({ ok: true, answer: expect.stringMatching(/^One product: Fixture/) });
    const kept = await stub.transcript();
    expect(kept.map((e) => e.message.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(kept[2]!.card).toMatchObject({ tool: "listProducts", isError: false });
    await stub.send(principal, "what sold today?");
    expect(await stub.transcript()).toHaveLength(8);
    await stub.clear();
    expect(await stub.transcript()).toEqual([]);
  });

  it("refusals come back as values with their code: another member's conversation, a spent budget; one turn at a time", async () => {
    const store = await makeStore(db);
    const other = await makeStore(db);
    const { id, stub, principal } = await conversation(store);
    const stranger: Principal = { kind: "member", userId: other.ownerUserId, storeId: other.id };
    expect(await stub.send(stranger, "list products")).toMatchObject({ ok: false, code: "NOT_FOUND" });
    const [a, b] = await Promise.all([
      stub.send(principal, "list products"),
      stub.send(principal, "list products"),
    ]);
    expect([a.ok, b.ok].sort()).toEqual([false, true]);
    expect([a, b].find((r) => !r.ok)).toMatchObject({ code: "CONFLICT" });
    await withStore(db, store.id, (tx) => tx.$client.query("update store set assistant_daily_tokens = 1 where id = $1", [store.id]));
    expect(await stub.send(principal, "list products")).toMatchObject({ ok: false, code: "TOO_MANY_REQUESTS" });
    expect(await stub.transcript()).toHaveLength(4);
  });

  it("counts the member's messages before any model call: the eleventh in a minute is refused with what to do, and not stored", async () => {
    const store = await makeStore(db);
    const { stub, principal } = await conversation(store);
    const answers = [];
    for (let i = 0; i < 11; i++) answers.push(await stub.send(principal, "hello"));
    expect(answers.slice(0, 10).every((a) => a.ok)).toBe(true);
    expect(answers[10]).toMatchObject({ ok: false, code: "TOO_MANY_REQUESTS", message: expect.stringContaining("assistant messages per minute from one member") });
    expect(await stub.transcript()).toHaveLength(20);
  });
});
