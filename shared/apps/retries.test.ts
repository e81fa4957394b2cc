import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { appDelivery } from "#shared/db/schema";
import { withStore } from "#shared/db/with-store";
import { appsStore } from "../../test/apps";
import { testDb } from "../../test/harness";
import { failureMessage } from "../../test/procedures";
import { consumeAppJob } from "./attempt";
import { MAX_ATTEMPTS, RETRY_DELAYS_SECONDS } from "./backoff";
import { APP_REDELIVERY_KIND } from "./events";
import { consumeAppEvent } from "./fanout";
import { receivers, routedForApps, runQueuedJobs, testDeps } from "../../test/fakes/apps";
import { verifyCommerceWebhook } from "./verify-recipe";

/** Failed tries, retries through {apps}-jobs, redelivery, abandoned tries and secret rotation. */
const db = testDb();

const A = "https://a.example.com/hooks";
const B = "https://b.example.com/hooks";

describe("retries", () => {
  it("a failing endpoint is retried through {apps}-jobs with growing delays and ends failed; the other app is not held", async () => {
    const s = await appsStore(db);
    const a = await s.createApp(A, ["refund.*"]);
    await s.createApp(B, ["refund.*"]);
    const net = receivers(() => deps.now, { [A]: [500] });
    const deps = testDeps(db, net.fetch);
    const start = deps.now;
    await consumeAppEvent(await routedForApps(db, s.store.id, await s.emit("refund.failed", { refundId: crypto.randomUUID() })), deps);
    await runQueuedJobs(deps);

    expect(net.to(B)).toHaveLength(1);
    expect(net.to(B)[0]!.at).toEqual(start);
    expect(net.to(A)).toHaveLength(MAX_ATTEMPTS);
    const retries = deps.jobs.sent.filter((q) => q.job.attempt > 1);
    expect(retries.map((q) => q.job.attempt)).toEqual([2, 3, 4, 5, 6]);
    // random() = 0.5 is no jitter: exactly 30 s, 2 min, 10 min, 1 h, 6 h, each after the try before.
    expect(retries.map((q) => q.delaySeconds)).toEqual([...RETRY_DELAYS_SECONDS]);
    const gaps = net.to(A).slice(1).map((r, i) => (r.at.getTime() - net.to(A)[i]!.at.getTime()) / 1000);
    expect(gaps).toEqual([...RETRY_DELAYS_SECONDS]);
    const [failed] = await s.deliveries(a.app.id);
    expect(failed).toMatchObject({ status: "failed", attempts: MAX_ATTEMPTS, lastStatus: 500, nextAttemptAt: null });
    expect(failed!.lastError).toMatch(/^HTTP 500/);
    const { items } = (await s.call("apps.list", {})) as { items: { id: string; failedDeliveries: number; pendingDeliveries: number }[] };
    expect(items.find((x) => x.id === a.app.id)).toMatchObject({ failedDeliveries: 1, pendingDeliveries: 0 });
  });

  it("jitter keeps each delay within ±10 % and the delays still grow", async () => {
    const { retryDelaySeconds } = await import("./backoff");
    for (const r of [0, 0.999]) {
      const delays = RETRY_DELAYS_SECONDS.map((_, i) => retryDelaySeconds(i + 1, () => r)!);
      delays.forEach((d, i) => expect(Math.abs(d - RETRY_DELAYS_SECONDS[i]!)).toBeLessThanOrEqual(RETRY_DELAYS_SECONDS[i]! * 0.1 + 1));
      expect([...delays].sort((x, y) => x - y)).toEqual(delays);
    }
    expect(retryDelaySeconds(MAX_ATTEMPTS)).toBeNull();
  });

  it("no answer in time, no connection and a redirect are failed tries; a later 2xx delivers", async () => {
    const s = await appsStore(db);
    const a = await s.createApp(A, ["customer.*"]);
    const replies = { [A]: ["hang" as const, 302, 204] };
    let refuse = true;
    const net = receivers(() => deps.now, replies);
    const deps = testDeps(db, async (url, init) => {
      if (refuse) {
        refuse = false;
        throw new TypeError("Network connection lost.");
      }
      return net.fetch(url, init);
    });
    deps.timeoutMs = 50;
    await consumeAppEvent(await routedForApps(db, s.store.id, await s.emit("customer.created", { customerId: crypto.randomUUID() })), deps);
    const errors: (string | null)[] = [];
    for (let i = 0; i < 4; i++) {
      await runQueuedJobs(deps, 1);
      errors.push((await s.deliveries(a.app.id))[0]!.lastError);
    }
    expect(errors[0]).toMatch(/^Could not connect: Network connection lost/);
    expect(errors[1]).toBe("No answer within 0.05 s");
    expect(errors[2]).toMatch(/^HTTP 302 redirects are not followed/);
    expect(await s.deliveries(a.app.id)).toMatchObject([{ status: "delivered", attempts: 4, lastStatus: 204, lastError: null }]);
    expect(deps.jobs.pending).toEqual([]);
  });
});

describe("redelivery", () => {
  it("sends a failed delivery again through the outbox, once, with a fresh round of tries", async () => {
    const s = await appsStore(db);
    const a = await s.createApp(A, ["order.*"]);
    const net = receivers(() => deps.now, { [A]: [503, 503, 503, 503, 503, 503, 200] });
    const deps = testDeps(db, net.fetch);
    const eventId = await s.emit("order.cancelled", { orderId: crypto.randomUUID() });
    await consumeAppEvent(await routedForApps(db, s.store.id, eventId), deps);
    await runQueuedJobs(deps);
    const [failed] = await s.deliveries(a.app.id);
    expect(failed).toMatchObject({ status: "failed", round: 1, attempts: 6 });

    const again = (await s.call("apps.redeliver", { deliveryId: failed!.id })) as { status: string; round: number; attempts: number };
    expect(again).toMatchObject({ status: "pending", round: 2, attempts: 0 });
    // Still being tried: a second redeliver is refused, naming the delivery.
    expect(await failureMessage(s.call("apps.redeliver", { deliveryId: failed!.id }))).toMatch(/^CONFLICT .*deliveryId: This delivery is still being tried/);
    const requested = await withStore(db, s.store.id, (tx) => tx.$client.query<{ id: string; payload: Record<string, unknown> }>("select id, payload from outbox_event where kind = $1", [APP_REDELIVERY_KIND]));
    expect(requested.rows).toHaveLength(1);
    expect(requested.rows[0]!.payload).toEqual({ deliveryId: failed!.id, round: 2, appId: a.app.id });
    const routed = await routedForApps(db, s.store.id, requested.rows[0]!.id);
    expect(routed).toMatchObject({ kind: APP_REDELIVERY_KIND, route: "app" });
    expect(await consumeAppEvent(routed, deps)).toEqual({ queued: 1 });
    await runQueuedJobs(deps);
    expect(await consumeAppEvent(routed, deps)).toEqual({ queued: 0 });
    await runQueuedJobs(deps);

    expect(net.to(A)).toHaveLength(7);
    expect(net.to(A)[6]!.headers.get("x-commerce-delivery")).toBe(failed!.id);
    expect(JSON.parse(net.to(A)[6]!.body)).toMatchObject({ id: eventId, type: "order.cancelled" });
    expect(await s.deliveries(a.app.id)).toMatchObject([{ id: failed!.id, status: "delivered", round: 2, attempts: 1, lastStatus: 200 }]);
  });

  it("a disabled app's pending delivery fails at its next try, and redelivery waits until it is enabled", async () => {
    const s = await appsStore(db);
    const a = await s.createApp(A, ["inventory.*"]);
    const net = receivers(() => deps.now, { [A]: [500, 200] });
    const deps = testDeps(db, net.fetch);
    await consumeAppEvent(await routedForApps(db, s.store.id, await s.emit("inventory.adjusted", { variantId: crypto.randomUUID() })), deps);
    await runQueuedJobs(deps, 1);
    await s.call("apps.update", { id: a.app.id, active: false });
    await runQueuedJobs(deps);
    const [row] = await s.deliveries(a.app.id);
    expect(row).toMatchObject({ status: "failed", attempts: 2, lastError: "The app was disabled before this try." });
    expect(net.to(A)).toHaveLength(1);
    expect(await failureMessage(s.call("apps.redeliver", { deliveryId: row!.id }))).toMatch(/CONFLICT .*deliveryId: The app is disabled/);
    await s.call("apps.update", { id: a.app.id, active: true });
    expect(await s.call("apps.redeliver", { deliveryId: row!.id })).toMatchObject({ status: "pending", round: 2 });
  });
});

describe("claims", () => {
  it("a try abandoned mid-flight is taken over by the message's retry after a minute, never by an early duplicate", async () => {
    const s = await appsStore(db);
    const a = await s.createApp(A, ["product.*"]);
    const net = receivers(() => deps.now);
    const deps = testDeps(db, net.fetch);
    await consumeAppEvent(await routedForApps(db, s.store.id, await s.emit("product.updated", { productId: crypto.randomUUID() })), deps);
    const job = deps.jobs.pending.shift()!.job;
    // The Worker claimed try 1 and died before recording it.
    const claimedAt = deps.now;
    await withStore(db, s.store.id, (tx) =>
      tx.update(appDelivery).set({ attempts: 1, claimedAt }).where(and(eq(appDelivery.storeId, s.store.id), eq(appDelivery.id, job.deliveryId))),
    );
    deps.now = new Date(claimedAt.getTime() + 30_000);
    expect(await consumeAppJob(job, deps)).toEqual({ outcome: "skipped" });
    expect(net.requests).toHaveLength(0);
    deps.now = new Date(claimedAt.getTime() + 61_000);
    expect(await consumeAppJob(job, deps)).toEqual({ outcome: "delivered" });
    expect(net.to(A)).toHaveLength(1);
    expect((await s.deliveries(a.app.id))[0]).toMatchObject({ status: "delivered", attempts: 1 });
  });

  it("a try recorded but whose next try was never queued is queued again by the message's retry", async () => {
    const s = await appsStore(db);
    const a = await s.createApp(A, ["product.*"]);
    const net = receivers(() => deps.now, { [A]: [500, 200] });
    const deps = testDeps(db, net.fetch);
    await consumeAppEvent(await routedForApps(db, s.store.id, await s.emit("product.created", { productId: crypto.randomUUID() })), deps);
    const job = deps.jobs.pending.shift()!.job;
    await consumeAppJob(job, deps);
    // Queueing try 2 "failed": the queue retries message 1, which queues try 2 again at its due time.
    deps.jobs.pending.length = 0;
    deps.now = new Date(deps.now.getTime() + 5_000);
    expect(await consumeAppJob(job, deps)).toEqual({ outcome: "requeued" });
    expect(deps.jobs.pending.map((q) => [q.job.attempt, q.delaySeconds])).toEqual([[2, RETRY_DELAYS_SECONDS[0] - 5]]);
    await runQueuedJobs(deps);
    expect(net.to(A)).toHaveLength(2);
    expect((await s.deliveries(a.app.id))[0]).toMatchObject({ status: "delivered", attempts: 2 });
  });
});

describe("signing secrets at send time", () => {
  it("after a rotation both secrets sign for 24 hours; keepPrevious false stops the old one at once", async () => {
    const s = await appsStore(db);
    const first = await s.createApp(A, ["return.*"]);
    const net = receivers(() => deps.now);
    const deps = testDeps(db, net.fetch);
    const send = async () => {
      await consumeAppEvent(await routedForApps(db, s.store.id, await s.emit("return.requested", { returnId: crypto.randomUUID() })), deps);
      await runQueuedJobs(deps);
      return net.to(A).at(-1)!;
    };
    const second = (await s.call("apps.rotateSecret", { id: first.app.id })) as { secret: string; app: { secretHint: string } };
    expect(second.secret).not.toBe(first.secret);
    expect(second.app.secretHint).toBe(second.secret.slice(-4));
    let req = await send();
    expect(req.headers.get("x-commerce-signature")).toMatch(/^v1=[0-9a-f]{64}, v1=[0-9a-f]{64}$/);
    expect(await verifyCommerceWebhook(second.secret, req.headers, req.body, req.at.getTime())).toBe(true);
    expect(await verifyCommerceWebhook(first.secret, req.headers, req.body, req.at.getTime())).toBe(true);
    deps.now = new Date(deps.now.getTime() + 25 * 3_600_000);
    req = await send();
    expect(await verifyCommerceWebhook(first.secret, req.headers, req.body, req.at.getTime())).toBe(false);
    const third = (await s.call("apps.rotateSecret", { id: first.app.id, keepPrevious: false })) as { secret: string };
    deps.now = new Date();
    req = await send();
    expect(req.headers.get("x-commerce-signature")).toMatch(/^v1=[0-9a-f]{64}$/);
    expect(await verifyCommerceWebhook(third.secret, req.headers, req.body, req.at.getTime())).toBe(true);
    expect(await verifyCommerceWebhook(second.secret, req.headers, req.body, req.at.getTime())).toBe(false);
  });

  it("a changed APP_WEBHOOK_ROOT_SECRET or a URL the policy refuses fails the try with the reason, sending nothing", async () => {
    const s = await appsStore(db);
    const a = await s.createApp(A, ["order.*"]);
    const local = await s.createApp("http://localhost:9999/hook", ["order.*"]);
    const net = receivers(() => deps.now);
    const deps = testDeps(db, net.fetch);
    deps.config = { rootSecret: "another-root-secret-of-32-characters-x", allowLocalUrls: false };
    await consumeAppEvent(await routedForApps(db, s.store.id, await s.emit("order.placed", { orderId: crypto.randomUUID() })), deps);
    await runQueuedJobs(deps);
    expect(net.requests).toEqual([]);
    expect((await s.deliveries(a.app.id))[0]).toMatchObject({ status: "failed", attempts: 1 });
    expect((await s.deliveries(a.app.id))[0]!.lastError).toMatch(/APP_WEBHOOK_ROOT_SECRET changed/);
    expect((await s.deliveries(local.app.id))[0]!.lastError).toMatch(/^URL refused: Only https URLs/);
  });
});
