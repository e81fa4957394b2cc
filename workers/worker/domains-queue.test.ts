import { env } from "cloudflare:workers";
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { emit } from "#shared/db/outbox";
import { storeDomain } from "#shared/db/schema";
import { withStore } from "#shared/db/with-store";
import { retryDelay } from "#shared/jobs/domains-consumer";
import { RouterError } from "#shared/domains/router";
import { localRouter } from "#shared/domains/router-local";
import type { LocalKv } from "#shared/domains/local-kv";
import { routedEvent } from "../../test/fakes/domains";
import { WORK_QUEUES } from "#shared/events/routes";
import { makeStore, testDb } from "../../test/harness";
import { logsOf } from "../../test/logs";
import type { WorkerBindings } from "./env";
import worker from "./index";

/** The domains queue through the Worker's queue(): one message at a time, acknowledged or retried. */
const db = testDb();
const kv = (env as unknown as { HOSTS: LocalKv }).HOSTS;
const message = (body: unknown, attempts = 1) => ({ id: crypto.randomUUID(), timestamp: new Date(), attempts, body });

async function verifiedEvent() {
  const s = await makeStore(db);
  const hostname = `queued-${s.slug}.example.com`;
  await withStore(db, s.id, async (tx) => {
    const [row] = await tx.insert(storeDomain).values({ storeId: tx.storeId, hostname, status: "verified", verifiedAt: new Date() }).returning({ id: storeDomain.id });
    await emit(tx, "domain.verified", { domainId: row!.id, hostname });
  });
  return { hostname, event: await routedEvent(db, s.id, "domain.verified") };
}

async function deliver(messages: ReturnType<typeof message>[], bindings: object = env) {
  const batch = createMessageBatch(WORK_QUEUES.domains.queue, messages);
  const ctx = createExecutionContext();
  const logs = await logsOf(() => worker.queue(batch, bindings as WorkerBindings, ctx));
  return { result: await getQueueResult(batch, ctx), logs };
}

describe("the domains queue", () => {
  it("acknowledges what it handled (other kinds included) and retries a body that is not a routed event", async () => {
    const { hostname, event } = await verifiedEvent();
    const routed = message(event);
    const other = message({ ...event, eventId: crypto.randomUUID(), kind: "domain.added" });
    const junk = message({ kind: "domain.verified" });
    const { result } = await deliver([routed, other, junk]);
    expect(result.explicitAcks.sort()).toEqual([routed.id, other.id].sort());
    expect(result.retryMessages.map((m: { msgId: string }) => m.msgId)).toEqual([junk.id]);
    expect(await localRouter(kv).find(hostname)).toMatchObject({ hostname });
  });

  it("retries when the router fails, and a wrong router configuration holds the whole batch", async () => {
    const { hostname, event } = await verifiedEvent();
    const failing = { ...env, LOCAL_ROUTER_BEHAVIOUR: '{"failCreate":"unavailable"}' };
    const first = message(event, 3);
    const { result, logs } = await deliver([first], failing);
    expect(result.explicitAcks).toEqual([]);
    expect(result.retryMessages).toMatchObject([{ msgId: first.id }]);
    expect(logs.lines.find((l) => l.msg === "domains.route_failed")).toMatchObject({ level: "error", messageId: first.id });
    expect(await localRouter(kv).find(hostname)).toBeNull();

    const unconfigured = { ...env, DOMAIN_ROUTER: "cloudflare" };
    const held = await deliver([message(event)], unconfigured);
    expect(held.result.retryMessages).toHaveLength(1);
    expect(held.logs.lines.find((l) => l.msg === "domains.route_unconfigured")?.error).toMatch(/CLOUDFLARE_ZONE_ID/);

    const retried = await deliver([message(event, 4)]);
    expect(retried.result.explicitAcks).toHaveLength(1);
    expect(await localRouter(kv).find(hostname)).toMatchObject({ hostname });
  });
});

describe("a failed message's next try", () => {
  it("waits the router's Retry-After (1 s to 1 h), else a minute per attempt up to 10", () => {
    expect(retryDelay(new RouterError("cloudflare", "rate_limited", "429", { retryAfterSeconds: 30 }), 1)).toBe(30);
    expect(retryDelay(new RouterError("cloudflare", "rate_limited", "429", { retryAfterSeconds: 0 }), 1)).toBe(1);
    expect(retryDelay(new RouterError("cloudflare", "rate_limited", "429", { retryAfterSeconds: 86_400 }), 1)).toBe(3_600);
    expect(retryDelay(new Error("database down"), 3)).toBe(180);
    expect(retryDelay(new Error("database down"), 50)).toBe(600);
  });
});
