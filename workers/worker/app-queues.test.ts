import { env } from "cloudflare:workers";
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { routedForApps } from "../../test/fakes/apps";
import { WORK_QUEUES } from "#shared/events/routes";
import { UCP_ORDER_ROUTE } from "#shared/ucp/order-webhooks";
import { makeStore, testDb } from "../../test/harness";
import type { WorkerBindings } from "./env";
import worker from "./index";

/** The Worker's queue() reaches the app consumers: handled messages are acked one by one, bad ones retried. */
const db = testDb();
const bindings = env as unknown as WorkerBindings;
const message = (body: unknown) => ({ id: crypto.randomUUID(), timestamp: new Date(), attempts: 1, body });

afterEach(() => vi.restoreAllMocks());

async function run(queue: string, bodies: unknown[], vars: Record<string, string | undefined> = {}) {
  const logs: string[] = [];
  vi.spyOn(console, "error").mockImplementation((line: unknown) => void logs.push(String(line)));
  const batch = createMessageBatch(queue, bodies.map(message));
  const ctx = createExecutionContext();
  await worker.queue(batch, { ...bindings, ...vars } as WorkerBindings, ctx);
  return { batch, logs, result: await getQueueResult(batch, ctx) };
}

describe("app queues in the worker", () => {
  it("{apps}-events: an event of a store without apps is acked; a malformed message is retried (then dead-lettered)", async () => {
    const store = await makeStore(db);
    expect(await routedForApps(db, store.id, store.outboxEventId)).toBeNull(); // store.created is not for apps
    const event = { eventId: crypto.randomUUID(), storeId: store.id, kind: "order.paid", payload: {}, createdAt: new Date().toISOString(), route: "app" };
    const { batch, result } = await run(WORK_QUEUES.appEvents.queue, [event, { kind: "order.paid" }]);
    expect(result.explicitAcks).toEqual([batch.messages[0]!.id]);
    expect(result.retryMessages.map((m: { msgId: string }) => m.msgId)).toEqual([batch.messages[1]!.id]);
  });

  it("{apps}-jobs: a try of a delivery that no longer exists is acked without sending anything", async () => {
    const store = await makeStore(db);
    const job = { storeId: store.id, deliveryId: crypto.randomUUID(), round: 1, attempt: 1 };
    const { batch, result } = await run(WORK_QUEUES.appJobs.queue, [job]);
    expect(result.explicitAcks).toEqual([batch.messages[0]!.id]);
    expect(result.retryMessages).toEqual([]);
  });

  it("an agent's order updates ride the same queues: an event of an order no agent waits on and a try of a gone delivery are acked; without UCP_SIGNING_ROOT_SECRET a try is retried, the variable named", async () => {
    const store = await makeStore(db);
    const event = { eventId: crypto.randomUUID(), storeId: store.id, kind: "order.paid", payload: { orderId: crypto.randomUUID() }, createdAt: new Date().toISOString(), route: UCP_ORDER_ROUTE };
    const events = await run(WORK_QUEUES.appEvents.queue, [event, { ...event, payload: {} }]);
    expect(events.result.explicitAcks).toEqual([events.batch.messages[0]!.id]);
    expect(events.result.retryMessages.map((m: { msgId: string }) => m.msgId)).toEqual([events.batch.messages[1]!.id]);
    const job = { to: UCP_ORDER_ROUTE, storeId: store.id, deliveryId: crypto.randomUUID(), orderId: crypto.randomUUID(), attempt: 1 };
    const tries = await run(WORK_QUEUES.appJobs.queue, [job]);
    expect(tries.result.explicitAcks).toEqual([tries.batch.messages[0]!.id]);
    const unconfigured = await run(WORK_QUEUES.appJobs.queue, [job], { UCP_SIGNING_ROOT_SECRET: undefined });
    expect(unconfigured.result.retryMessages.map((m: { msgId: string }) => m.msgId)).toEqual([unconfigured.batch.messages[0]!.id]);
    expect(unconfigured.logs.join("\n")).toMatch(/UCP_SIGNING_ROOT_SECRET: is required/);
  });

  it("without APP_WEBHOOK_ROOT_SECRET nothing is consumed: the batch is retried and the variable named in the log", async () => {
    const { result, logs } = await run(WORK_QUEUES.appJobs.queue, [{}], { APP_WEBHOOK_ROOT_SECRET: undefined });
    expect(result.retryBatch.retry).toBe(true);
    expect(result.explicitAcks).toEqual([]);
    expect(logs.join("\n")).toMatch(/apps\.not_configured.*APP_WEBHOOK_ROOT_SECRET: is required/);
  });
});
