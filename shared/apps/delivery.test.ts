import { describe, expect, it } from "vitest";
import { appsStore } from "../../test/apps";
import { testDb } from "../../test/harness";
import docs from "../../docs/apps.md?raw";
import { consumeAppJob } from "./attempt";
import { consumeAppEvent } from "./fanout";
import { receivers, routedForApps, runQueuedJobs, testDeps } from "../../test/fakes/apps";
import { verifyCommerceWebhook } from "./verify-recipe";
import recipe from "./verify-recipe.ts?raw";

/**
 * The {apps}-events and {apps}-jobs consumers against real Postgres, with a controlled clock, the
 * receivers' endpoints captured in place of the network and the jobs queue recorded.
 */
const db = testDb();

const A = "https://a.example.com/hooks";
const B = "https://b.example.com/hooks";
const C = "https://c.example.com/hooks";
const D = "https://d.example.com/hooks";

describe("fan-out: one delivery per subscribed active app", () => {
  it("POSTs the event once to each app that wants it, skipping unsubscribed and disabled apps", async () => {
    const s = await appsStore(db);
    const a = await s.createApp(A, ["order.*"]);
    const b = await s.createApp(B, ["order.paid", "refund.*"]);
    const c = await s.createApp(C, ["product.*"]);
    const d = await s.createApp(D, ["*"]);
    await s.call("apps.update", { id: d.app.id, active: false });
    const orderId = crypto.randomUUID();
    const eventId = await s.emit("order.paid", { orderId, number: 1001 });

    const routed = await routedForApps(db, s.store.id, eventId);
    expect(routed).toMatchObject({ eventId, kind: "order.paid", route: "app" });
    const start = new Date();
    const net = receivers(() => deps.now);
    const deps = testDeps(db, net.fetch, start);
    expect(await consumeAppEvent(routed, deps)).toEqual({ queued: 2 });
    // One {apps}-jobs message per app, due now: a slow app never holds the other.
    expect(deps.jobs.sent.map((q) => [q.job.attempt, q.delaySeconds])).toEqual([
      [1, 0],
      [1, 0],
    ]);
    await runQueuedJobs(deps);

    expect(net.to(A)).toHaveLength(1);
    expect(net.to(B)).toHaveLength(1);
    expect(net.to(C)).toHaveLength(0);
    expect(net.to(D)).toHaveLength(0);
    const [toA] = net.to(A);
    expect(JSON.parse(toA!.body)).toEqual({ id: eventId, type: "order.paid", createdAt: routed!.createdAt, storeId: s.store.id, data: { orderId, number: 1001 } });
    const [delivered] = await s.deliveries(a.app.id);
    expect(delivered).toMatchObject({ eventId, eventKind: "order.paid", status: "delivered", attempts: 1, lastStatus: 200, lastError: null });
    expect(toA!.headers.get("x-commerce-event")).toBe("order.paid");
    expect(toA!.headers.get("x-commerce-delivery")).toBe(delivered!.id);
    expect(toA!.headers.get("x-commerce-timestamp")).toBe(String(Math.floor(start.getTime() / 1000)));
    expect(toA!.headers.get("x-commerce-signature")).toMatch(/^v1=[0-9a-f]{64}$/);
    expect(toA!.headers.get("content-type")).toBe("application/json");
    expect(await s.deliveries(c.app.id)).toEqual([]);
    expect(await s.deliveries(d.app.id)).toEqual([]);
    expect((await s.deliveries(b.app.id))[0]).toMatchObject({ status: "delivered" });
  });

  it("the documented recipe verifies a delivery, and rejects another app's secret, a changed body and a stale timestamp", async () => {
    const s = await appsStore(db);
    const a = await s.createApp(A, ["order.*"]);
    const b = await s.createApp(B, ["order.*"]);
    const net = receivers(() => deps.now);
    const deps = testDeps(db, net.fetch);
    await consumeAppEvent(await routedForApps(db, s.store.id, await s.emit("order.placed", { orderId: crypto.randomUUID() })), deps);
    await runQueuedJobs(deps);
    const [req] = net.to(A);
    const at = req!.at.getTime();
    expect(await verifyCommerceWebhook(a.secret, req!.headers, req!.body, at)).toBe(true);
    expect(await verifyCommerceWebhook(a.secret, req!.headers, req!.body, at + 299_000)).toBe(true);
    expect(await verifyCommerceWebhook(a.secret, req!.headers, req!.body, at + 301_000)).toBe(false);
    expect(await verifyCommerceWebhook(a.secret, req!.headers, req!.body, at - 301_000)).toBe(false);
    expect(await verifyCommerceWebhook(b.secret, req!.headers, req!.body, at)).toBe(false);
    expect(await verifyCommerceWebhook(a.secret, req!.headers, req!.body.replace("order.placed", "order.paid"), at)).toBe(false);
    const replayed = new Headers(req!.headers);
    replayed.set("x-commerce-timestamp", String(Math.floor(at / 1000) + 1));
    expect(await verifyCommerceWebhook(a.secret, replayed, req!.body, at)).toBe(false);
  });

  it("docs/apps.md shows exactly the recipe these tests run", () => {
    expect(docs).toContain("```ts\n" + recipe.trim() + "\n```");
  });

  it("a duplicate event message and a duplicate job message send nothing twice", async () => {
    const s = await appsStore(db);
    const a = await s.createApp(A, ["shipment.*"]);
    const routed = await routedForApps(db, s.store.id, await s.emit("shipment.delivered", { shipmentId: crypto.randomUUID() }));
    const net = receivers(() => deps.now);
    const deps = testDeps(db, net.fetch);
    // Twice before any try: the second copy queues the same untried delivery again (the first may have died before queueing).
    await consumeAppEvent(routed, deps);
    await consumeAppEvent(routed, deps);
    const firstJob = deps.jobs.sent[0]!.job;
    expect(deps.jobs.sent.map((q) => q.job)).toEqual([firstJob, firstJob]);
    // Both copies at once: one claims the try, the other finds it taken.
    const outcomes = await Promise.all(deps.jobs.pending.splice(0).map((q) => consumeAppJob(q.job, deps)));
    expect(outcomes.map((o) => o.outcome).sort()).toEqual(["delivered", "skipped"]);
    expect(net.to(A)).toHaveLength(1);
    // Once tried, neither copy does anything.
    expect(await consumeAppEvent(routed, deps)).toEqual({ queued: 0 });
    expect(await consumeAppJob(firstJob, deps)).toEqual({ outcome: "skipped" });
    expect(net.to(A)).toHaveLength(1);
    expect(await s.deliveries(a.app.id)).toHaveLength(1);
  });

  it("kinds that are not public are acknowledged and reach no app, even one subscribed to *", async () => {
    const s = await appsStore(db);
    await s.createApp(A, ["*"]);
    const staffEvent = await s.emit("staff.invited", { email: "x@example.test" });
    expect(await routedForApps(db, s.store.id, staffEvent)).toBeNull();
    const net = receivers(() => deps.now);
    const deps = testDeps(db, net.fetch);
    const forged = { eventId: staffEvent, storeId: s.store.id, kind: "staff.invited", payload: {}, createdAt: new Date().toISOString(), route: "app" };
    expect(await consumeAppEvent(forged, deps)).toEqual({ queued: 0 });
    await expect(consumeAppEvent({ ...forged, storeId: "not-a-uuid" }, deps)).rejects.toThrow();
    expect(net.requests).toEqual([]);
  });
});
