import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { emit } from "#shared/db/outbox";
import { domainRouteReceipt, storeDomain } from "#shared/db/schema";
import { withStore } from "#shared/db/with-store";
import type { RoutedEvent } from "#shared/events/routes";
import { createLogger } from "#shared/core/log";
import { resolveHost, writeHostEntry, type HostsKv } from "#shared/storefront/hosts";
import { makeStore, testDb, type TestStore } from "../../test/harness";
import { logsOf } from "../../test/logs";
import { callerFor, outboxPayloads } from "../../test/procedures";
import type { LocalKv } from "./local-kv";
import { routeDomainEvent } from "./route";
import type { DomainRouter } from "./router";
import { localRouter } from "./router-local";
import { domainState, routedEvent } from "../../test/fakes/domains";

/**
 * The {domains}-route consumer against real Postgres, the local router and the HOSTS namespace, fed the
 * RoutedEvents the relay would send for the outbox rows the job and the procedures write.
 */
const db = testDb();
const kv = (env as unknown as { HOSTS: LocalKv & HostsKv }).HOSTS;
const quiet = createLogger({ test: true }, "error");
const T = new Date("2001-06-01T00:00:00Z");
const neverLooked = async (): Promise<string | null> => {
  throw new Error("the HOSTS entry should have answered");
};

/** The local router, counting the calls that reach it. */
function countingRouter(inner: DomainRouter = localRouter(kv)) {
  const calls: string[] = [];
  const router: DomainRouter = {
    provider: inner.provider,
    find: (h) => (calls.push(`find ${h}`), inner.find(h)),
    create: (h) => (calls.push(`create ${h}`), inner.create(h)),
    remove: (id) => (calls.push(`remove ${id}`), inner.remove(id)),
  };
  return { router, calls, inner };
}

const consume = (event: RoutedEvent, router: DomainRouter) => routeDomainEvent(event, { db, router, hosts: kv, log: quiet });

/**
 * A domain of `store` as the verify job leaves it: verified, with domain.verified in the outbox. (Not through
 * the job itself: verify.test.ts runs it with a controlled clock over every due domain of the database.)
 */
async function verified(store: TestStore, hostname = `routed-${store.slug}.example.com`): Promise<{ id: string; hostname: string }> {
  return withStore(db, store.id, async (tx) => {
    const [row] = await tx.insert(storeDomain).values({ storeId: tx.storeId, hostname, status: "verified", verifiedAt: T }).returning({ id: storeDomain.id });
    await emit(tx, "domain.verified", { domainId: row!.id, hostname });
    return { id: row!.id, hostname };
  });
}

const receipts = (storeId: string, eventId: string) =>
  withStore(db, storeId, (tx) => tx.select({ outcome: domainRouteReceipt.outcome, routerId: domainRouteReceipt.routerId }).from(domainRouteReceipt).where(eq(domainRouteReceipt.eventId, eventId)));

describe("{domains}-route", () => {
  it("routes a verified domain, then unroutes it when removed; each duplicate delivery changes nothing", async () => {
    const s = await makeStore(db);
    const d = await verified(s);
    await writeHostEntry(kv, d.hostname, null); // the storefront cached "no store" while it was pending
    const { router, calls, inner } = countingRouter();

    const onVerified = await routedEvent(db, s.id, "domain.verified");
    await consume(onVerified, router);
    const made = await inner.find(d.hostname);
    expect(made).toMatchObject({ hostname: d.hostname, status: "active" });
    const routedRow = await domainState(db, s.id, d.id);
    expect(routedRow).toMatchObject({ routerId: made!.id, routerStatus: "active", routerSslStatus: "active" });
    expect(await resolveHost(kv, d.hostname, neverLooked)).toEqual({ storeId: s.id, cached: true });
    expect(await receipts(s.id, onVerified.eventId)).toEqual([{ outcome: "routed", routerId: made!.id }]);

    calls.length = 0;
    await consume(onVerified, router);
    expect(calls).toEqual([]);
    expect(await domainState(db, s.id, d.id)).toEqual(routedRow);
    expect(await receipts(s.id, onVerified.eventId)).toHaveLength(1);

    await callerFor(db, s.ownerUserId, s.id)("domains.remove", { id: d.id });
    expect(await outboxPayloads(db, s.id, "domain.removed")).toEqual([
      { domainId: d.id, hostname: d.hostname, routerId: made!.id, status: "verified", verifiedAt: T.toISOString() },
    ]);
    const onRemoved = await routedEvent(db, s.id, "domain.removed");
    await writeHostEntry(kv, d.hostname, s.id); // as if a storefront had cached it again
    await consume(onRemoved, router);
    expect(calls).toEqual([`remove ${made!.id}`]);
    expect(await inner.find(d.hostname)).toBeNull();
    expect(await resolveHost(kv, d.hostname, neverLooked)).toEqual({ storeId: null, cached: true });
    expect(await receipts(s.id, onRemoved.eventId)).toEqual([{ outcome: "unrouted", routerId: made!.id }]);

    calls.length = 0;
    await consume(onRemoved, router);
    expect(calls).toEqual([]);
  });

  it("a domain removed before its route was made: nothing is created, and the removal finds nothing to delete", async () => {
    const s = await makeStore(db);
    const d = await verified(s);
    const { router, calls, inner } = countingRouter();
    await callerFor(db, s.ownerUserId, s.id)("domains.remove", { id: d.id });
    const onVerified = await routedEvent(db, s.id, "domain.verified");
    await consume(onVerified, router);
    expect(calls).toEqual([]);
    expect(await receipts(s.id, onVerified.eventId)).toEqual([{ outcome: "skipped", routerId: null }]);
    await consume(await routedEvent(db, s.id, "domain.removed"), router);
    expect(calls).toEqual([`find ${d.hostname}`]);
    expect(await inner.find(d.hostname)).toBeNull();
  });

  it("a domain removed while its route was being made: the route is undone, and the late removal finds it by hostname", async () => {
    const s = await makeStore(db);
    const d = await verified(s);
    const { router: base, inner } = countingRouter();
    const removing: DomainRouter = {
      ...base,
      async create(hostname) {
        const made = await base.create(hostname);
        await callerFor(db, s.ownerUserId, s.id)("domains.remove", { id: d.id });
        return made;
      },
    };
    await consume(await routedEvent(db, s.id, "domain.verified"), removing);
    expect(await inner.find(d.hostname)).toBeNull();
    expect(await domainState(db, s.id, d.id)).toBeNull();
    const onRemoved = await routedEvent(db, s.id, "domain.removed");
    expect(onRemoved.payload).toMatchObject({ routerId: null });
    await consume(onRemoved, base);
    expect(await resolveHost(kv, d.hostname, neverLooked)).toEqual({ storeId: null, cached: true });
  });

  it("a late removal leaves alone a hostname another store has verified since", async () => {
    const a = await makeStore(db);
    const b = await makeStore(db);
    const hostname = `moving-${a.slug}.example.com`;
    const { router, inner } = countingRouter();
    const da = await verified(a, hostname);
    await consume(await routedEvent(db, a.id, "domain.verified"), router);
    const first = await inner.find(hostname);
    await callerFor(db, a.ownerUserId, a.id)("domains.remove", { id: da.id });

    const dbb = await verified(b, hostname);
    await consume(await routedEvent(db, b.id, "domain.verified"), router);
    expect(await domainState(db, b.id, dbb.id)).toMatchObject({ routerId: first!.id }); // the route it found, not a second one

    await consume(await routedEvent(db, a.id, "domain.removed"), router);
    expect(await inner.find(hostname)).toEqual(first);
    expect(await resolveHost(kv, hostname, neverLooked)).toEqual({ storeId: b.id, cached: true });
  });

  it("a removed claim that never verified touches neither the router nor the HOSTS entry, even while another store verifies the hostname", async () => {
    const a = await makeStore(db);
    const b = await makeStore(db);
    const hostname = `claimed-${b.slug}.example.com`;
    const { router: base, calls, inner } = countingRouter();
    const claim = (await callerFor(db, b.ownerUserId, b.id)("domains.add", { hostname })) as { id: string };
    await callerFor(db, b.ownerUserId, b.id)("domains.remove", { id: claim.id });
    expect(await outboxPayloads(db, b.id, "domain.removed")).toEqual([{ domainId: claim.id, hostname, routerId: null, status: "pending", verifiedAt: null }]);
    // Store A's claim of the same hostname verifies, is routed and named by the entry while B's removal is handled.
    let winner: { id: string } | undefined;
    const aWins = async () => {
      if (winner) return;
      winner = await verified(a, hostname);
      await consume(await routedEvent(db, a.id, "domain.verified"), inner);
    };
    const racing: DomainRouter = {
      ...base,
      find: async (h) => (await aWins(), base.find(h)),
      remove: async (id) => (await aWins(), base.remove(id)),
    };
    const onRemoved = await routedEvent(db, b.id, "domain.removed");
    await consume(onRemoved, racing);
    expect(calls).toEqual([]);
    await aWins();
    const route = await inner.find(hostname);
    expect(route).toMatchObject({ hostname, status: "active" });
    expect(await domainState(db, a.id, winner!.id)).toMatchObject({ status: "verified", routerId: route!.id });
    expect(await resolveHost(kv, hostname, neverLooked)).toEqual({ storeId: a.id, cached: true });
    expect(await receipts(b.id, onRemoved.eventId)).toEqual([{ outcome: "skipped", routerId: null }]);
  });

  it("a verified domain's removal names in the HOSTS entry the store that verified the hostname while the route was being deleted", async () => {
    const a = await makeStore(db);
    const b = await makeStore(db);
    const hostname = `handed-${a.slug}.example.com`;
    const { router: base, inner } = countingRouter();
    const da = await verified(a, hostname);
    await consume(await routedEvent(db, a.id, "domain.verified"), inner);
    await callerFor(db, a.ownerUserId, a.id)("domains.remove", { id: da.id });
    let taken = false;
    const racing: DomainRouter = {
      ...base,
      async remove(id) {
        await base.remove(id);
        if (!taken) await verified(b, hostname); // B's claim verifies just after the holder was read
        taken = true;
      },
    };
    await consume(await routedEvent(db, a.id, "domain.removed"), racing);
    expect(taken).toBe(true);
    expect(await resolveHost(kv, hostname, neverLooked)).toEqual({ storeId: b.id, cached: true });
  });

  it("a HOSTS write that fails is logged, not retried: the route and its receipt are committed", async () => {
    const s = await makeStore(db);
    const d = await verified(s);
    const { router, inner } = countingRouter();
    const broken: HostsKv = { get: (key, type) => kv.get(key, type), put: () => Promise.reject(new Error("KV unavailable")) };
    const event = await routedEvent(db, s.id, "domain.verified");
    const logs = await logsOf(() => routeDomainEvent(event, { db, router, hosts: broken, log: createLogger({ test: true }, "warn") }));
    expect(logs.lines.find((l) => l.msg === "storefront.hosts_write_failed")).toMatchObject({ level: "warn", error: "KV unavailable" });
    expect(await receipts(s.id, event.eventId)).toEqual([{ outcome: "routed", routerId: (await inner.find(d.hostname))!.id }]);
  });

  it("acknowledges the other domain kinds without touching the router", async () => {
    const s = await makeStore(db);
    const { router, calls } = countingRouter();
    for (const kind of ["domain.added", "domain.failed", "domain.primary_changed"]) {
      await consume({ eventId: crypto.randomUUID(), storeId: s.id, kind, payload: { domainId: crypto.randomUUID(), hostname: "x.example.com" }, createdAt: T.toISOString(), route: "domain" }, router);
    }
    expect(calls).toEqual([]);
  });
});
