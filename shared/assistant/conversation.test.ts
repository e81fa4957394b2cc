import { describe, expect, it } from "vitest";
import { createLogger } from "#shared/core/log";
import { chatModelFor } from "#shared/model/select";
import type { ChatModel } from "#shared/model/protocol";
import type { Principal } from "#shared/pipeline/principal";
import { makeStore, testDb, type TestStore } from "../../test/harness";
import { callerFor } from "../../test/procedures";
import { converse, type ConverseDeps, type Transcript, type TranscriptEntry } from "./conversation";

const db = testDb();
const log = createLogger({ test: true }, "error");

/** A transcript held in memory: the runtime's storage, whose own test is the Durable Object's. */
function memory(): Transcript & { entries: TranscriptEntry[] } {
  const entries: TranscriptEntry[] = [];
  return { entries, read: () => [...entries], append: (more) => void entries.push(...more) };
}

async function conversationOf(store: TestStore, first = "Hello") {
  const principal: Principal = { kind: "member", userId: store.ownerUserId, storeId: store.id };
  const { id } = (await callerFor(db, store.ownerUserId, store.id)("assistant.start", { firstMessage: first })) as { id: string };
  const deps: ConverseDeps = { db, principal, log, model: (local) => chatModelFor({ provider: "local" }, { local }) };
  return { id, deps, usage: () => callerFor(db, store.ownerUserId, store.id)("assistant.usage") as Promise<{ modelCalls: number; inputTokens: number }> };
}

describe("a conversation with the store's assistant, turn after turn", () => {
  it("stores each turn's messages with the cards of its tool calls; the next turn's model reads them; one usage record per turn", async () => {
    const store = await makeStore(db);
    const { id, deps, usage } = await conversationOf(store);
    const transcript = memory();
    const written: string[] = [];
    const first = await converse({ ...deps, onText: (d) => written.push(d) }, id, "list products", transcript);
    expect(first.answer).toMatch(/^One product: Fixture/);
    // The answer's words reached the runtime as the model wrote them (the local model streams over its HTTP shape).
    expect(written.length).toBeGreaterThan(3);
    expect(written.join("")).toBe(first.answer);
    expect(first.cards).toEqual([expect.objectContaining({ tool: "listProducts", isError: false })]);
    expect(transcript.entries.map((e) => e.message.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(transcript.entries[2]!.card).toMatchObject({ tool: "listProducts" });
    expect(transcript.entries.some((e) => e.message.role === "system")).toBe(false);
    const seen: number[] = [];
    const counting: ConverseDeps = { ...deps, model: (local) => {
      const inner = chatModelFor({ provider: "local" }, { local });
      return (messages, tools) => {
        seen.push(messages.length);
        return inner(messages, tools);
      };
    } };
    await converse(counting, id, "what sold today?", transcript);
    // The instructions, the first turn's four messages and the new question.
    expect(seen[0]).toBe(1 + 4 + 1);
    expect(transcript.entries).toHaveLength(8);
    expect(await usage()).toMatchObject({ modelCalls: 4 });
    const row = (await callerFor(db, store.ownerUserId, store.id)("assistant.conversations")) as { items: { id: string; messages: number }[] };
    expect(row.items.find((c) => c.id === id)?.messages).toBe(8);
  });

  it("a model that fails part way stores nothing of the turn, and what it used is still counted", async () => {
    const store = await makeStore(db);
    const { id, deps, usage } = await conversationOf(store);
    const transcript = memory();
    let calls = 0;
    const failing: ConverseDeps = { ...deps, model: (local) => {
      const inner: ChatModel = chatModelFor({ provider: "local" }, { local });
      return (messages, tools) => (++calls === 2 ? Promise.reject(new Error("model down")) : inner(messages, tools));
    } };
    await expect(converse(failing, id, "list products", transcript)).rejects.toThrow("model down");
    expect(transcript.entries).toEqual([]);
    expect(await usage()).toMatchObject({ modelCalls: 1 });
  });
});
