import { describe, expect, it } from "vitest";
import { ADMIN, sessionFor } from "../../test/admin";
import { call } from "../../test/call";
import { makeStore, testDb } from "../../test/harness";
import worker from "./index";

/**
 * Nudges (issue 12; decision 0012 item 5): a commit that wrote outbox rows sends one message to the nudge
 * queue, after the answer, so the relay runs at once instead of at its next 5 s tick. Reads, refusals and
 * rolled-back changes send none. The queue is the Worker's OUTBOX_NUDGE binding, recorded here.
 */
const db = testDb();

function recorder() {
  const sent: unknown[] = [];
  return { sent, queue: { send: async (body: unknown) => void sent.push(body) } };
}

async function rpcWith(queue: object, cookie: string, path: string, input: unknown) {
  const res = await call(
    worker,
    `${ADMIN}/api/rpc/${path}`,
    { method: "POST", headers: { "content-type": "application/json", origin: ADMIN, cookie }, body: JSON.stringify({ json: input }) },
    { OUTBOX_NUDGE: queue },
  );
  return res.status;
}

describe("outbox nudges", () => {
  it("one per committed change that wrote events; none for a read, a refused input or a change that rolled back", async () => {
    const s = await makeStore(db);
    const { cookie } = await sessionFor(db, s.ownerUserId, s.id);
    const { sent, queue } = recorder();
    expect(await rpcWith(queue, cookie, "products/list", {})).toBe(200);
    expect(sent).toEqual([]);
    expect(await rpcWith(queue, cookie, "products/create", { title: "" })).toBe(400);
    expect(sent).toEqual([]);
    // A duplicate handle fails inside the transaction, after nothing else: rolled back, no nudge.
    expect(await rpcWith(queue, cookie, "products/create", { title: "Fixture", handle: "fixture", variants: [{ priceMinor: 100 }] })).toBe(409);
    expect(sent).toEqual([]);
    expect(await rpcWith(queue, cookie, "products/create", { title: "Lamp", handle: "lamp", variants: [{ priceMinor: 100 }] })).toBe(200);
    expect(sent).toEqual([{ storeId: s.id }]);
  });

  it("a nudge queue that fails never fails the committed change", async () => {
    const s = await makeStore(db);
    const { cookie } = await sessionFor(db, s.ownerUserId, s.id);
    const broken = { send: async () => Promise.reject(new Error("queue down (test)")) };
    expect(await rpcWith(broken, cookie, "products/create", { title: "Desk", handle: "desk", variants: [{ priceMinor: 100 }] })).toBe(200);
  });
});
