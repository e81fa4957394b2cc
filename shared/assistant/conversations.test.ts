import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { makeStore, testDb } from "../../test/harness";
import { addMember, callerFor, failureText } from "../../test/procedures";
import { titleFrom } from "./conversations";

const db = testDb();
type Listed = { items: { id: string; title: string; messages: number }[] };

describe("a member's conversations with the store's assistant", () => {
  it("a title is the first message's first line, cut at a word past 80 characters", () => {
    expect(titleFrom("  What sold today?\nAnd yesterday?")).toBe("What sold today?");
    expect(titleFrom("Mark every Diwali kurta ten percent off and tell me which ones are running low on stock in the Mumbai warehouse")).toBe(
      "Mark every Diwali kurta ten percent off and tell me which ones are running low…",
    );
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 500 }), (text) => {
        const title = titleFrom(text);
        expect(title.length).toBeGreaterThan(0);
        expect(title.length).toBeLessThanOrEqual(81);
      }),
    );
  });

  it("each member lists, resumes and deletes only their own, Staff included", async () => {
    const store = await makeStore(db);
    const owner = callerFor(db, store.ownerUserId, store.id);
    const staff = await addMember(db, store, "staff");
    const asStaff = callerFor(db, staff.userId, store.id);
    const started = (await asStaff("assistant.start", { firstMessage: "List products" })) as { id: string; title: string };
    expect(started).toMatchObject({ title: "List products", messages: 0 });
    expect(((await asStaff("assistant.conversations")) as Listed).items.map((c) => c.title)).toEqual(["List products"]);
    expect(((await owner("assistant.conversations")) as Listed).items.map((c) => c.title)).toEqual(["Fixture conversation"]);
    // The Owner may not delete a Staff member's conversation: to them it does not exist.
    expect(await failureText(owner("assistant.delete", { id: started.id }))).toBe("NOT_FOUND");
    expect(await asStaff("assistant.delete", { id: started.id })).toEqual({ id: started.id, deleted: true, storeId: store.id });
    expect(((await asStaff("assistant.conversations")) as Listed).items).toEqual([]);
    expect(await failureText(asStaff("assistant.delete", { id: started.id }))).toBe("NOT_FOUND");
  });

  it("another store's conversation is not found; an empty or oversized first message is refused by its field", async () => {
    const a = await makeStore(db);
    const b = await makeStore(db);
    const inB = (await callerFor(db, b.ownerUserId, b.id)("assistant.start", { firstMessage: "Hello" })) as { id: string };
    const inA = callerFor(db, a.ownerUserId, a.id);
    expect(await failureText(inA("assistant.delete", { id: inB.id }))).toBe("NOT_FOUND");
    expect(await failureText(inA("assistant.start", { firstMessage: "   " }))).toBe("BAD_REQUEST firstMessage");
    expect(await failureText(inA("assistant.start", { firstMessage: "x".repeat(4001) }))).toBe("BAD_REQUEST firstMessage");
    expect(await failureText(inA("assistant.start", { firstMessage: "nul\u0000" }))).toBe("BAD_REQUEST firstMessage");
  });
});
