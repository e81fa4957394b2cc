import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { consumeAppJob } from "#shared/apps/attempt";
import { consumeAppEvent } from "#shared/apps/fanout";
import { newAppSecret } from "#shared/apps/secrets";
import { receivers, routedForApps, testDeps, TEST_ROOT_SECRET } from "../../test/fakes/apps";
import { Database } from "#shared/db/database";
import { emit } from "#shared/db/outbox";
import { withStore } from "#shared/db/with-store";
import { localDns, setLocalDnsEntry } from "#shared/domains/dns-local";
import type { LocalKv } from "#shared/domains/local-kv";
import { routeDomainEvent } from "#shared/domains/route";
import { localRouter } from "#shared/domains/router-local";
import { domainAt, routedEvent } from "../../test/fakes/domains";
import { verifyStore } from "#shared/jobs/domains-verify";
import type { RoutedEvent } from "#shared/events/routes";
import { pruneCutoffs, pruneStore } from "#shared/jobs/activity-prune";
import { marketingTick } from "#shared/jobs/marketing-tick";
import { forEachStore } from "#shared/jobs/per-store";
import { createLogger } from "#shared/core/log";
import { emailLinkSecretFromEnv } from "#shared/mail/links";
import { localMailer, type LocalMailBehaviour } from "#shared/mail/local";
import { enrolFromEvent } from "#shared/marketing/enrol";
import { sendMarketingBatch, type SendOrder } from "#shared/marketing/send";
import { sendNotification } from "#shared/notifications/send";
import { sendRestockAlerts } from "#shared/restock/alerts";
import type { HostsKv } from "#shared/storefront/hosts";
import { makeStore, testDb, type TestStore } from "../../test/harness";
import { jobContext } from "../../test/jobs";
import { tracedWork } from "../../test/proxy";

/**
 * Round trips of each store's unit of work in the worker's jobs and queue consumers, counted by the local
 * proxy for a traced database (the goal: at most two per store; outside calls, such as the mailer, an
 * app's endpoint, DNS or the domain router, are no round trips to the database). Each consumer or job
 * runs for one store as its own tests run it; its setup and the local mailbox use an untraced database.
 */
const db = testDb();
const bindings = env as unknown as { DATABASE_URL: string; DB_WS_PROXY: string; HOSTS: LocalKv & HostsKv };
const log = createLogger({ test: true }, "error");
const linkSecret = emailLinkSecretFromEnv(env as unknown as Record<string, unknown>);
const MINUTE = 60_000;


const sqlIn = <R = Record<string, unknown>>(s: TestStore, text: string, values: unknown[] = []) =>
  withStore(db, s.id, (tx) => tx.$client.query(text, values)).then((r) => r.rows as R[]);

const mail = (behaviour: LocalMailBehaviour = {}) => ({ mailer: localMailer(db, behaviour), fromDomain: "mail.test" });

/** The store's fixture order (test/harness.ts makeStore). */
const fixtureOrder = async (s: TestStore) => (await sqlIn<{ id: string; number: number }>(s, "select id, number from shop_order"))[0]!;

describe("round trips: the notifications consumer", () => {
  it("a message is sent in two round trips, a duplicate delivery costs one, a refused address two", async () => {
    const s = await makeStore(db);
    const order = await fixtureOrder(s);
    const eventId = await withStore(db, s.id, (tx) => emit(tx, "order.paid", { orderId: order.id }));
    const message: RoutedEvent = { eventId, storeId: s.id, kind: "order.paid", payload: { orderId: order.id }, createdAt: new Date().toISOString(), route: "notification:payment_received" };
    const sent = await tracedWork((t) => sendNotification(message, { db: t, log, mail: mail(), linkSecret }));
    expect(sent.result).toBe("sent");
    expect(sent.trips.turns).toBe(2);
    expect(await sqlIn(s, "select status, attempts from notification where event_id = $1", [eventId])).toEqual([{ status: "sent", attempts: 1 }]);
    const again = await tracedWork((t) => sendNotification(message, { db: t, log, mail: mail(), linkSecret }));
    expect([again.result, again.trips.turns]).toEqual(["duplicate", 1]);

    const refusedId = await withStore(db, s.id, (tx) => emit(tx, "order.cancelled", { orderId: order.id }));
    const refused = await tracedWork((t) =>
      sendNotification({ ...message, eventId: refusedId, kind: "order.cancelled", route: "notification:order_cancelled" }, { db: t, log, mail: mail({ failFor: ["buyer@example.test"] }) }),
    );
    expect([refused.result, refused.trips.turns]).toEqual(["failed", 2]);
  });

  it("the local mailbox keeps a message in one round trip", async () => {
    const s = await makeStore(db);
    const { result, trips } = await tracedWork((t) =>
      localMailer(t).send({ storeId: s.id, from: "Shop <orders@mail.test>", to: "a@example.test", subject: "Hi", text: "Hi", html: "<p>Hi</p>", idempotencyKey: `rt:${s.id}`, tag: "test" }),
    );
    expect(result.providerId).toMatch(/^local_/);
    expect(trips.turns).toBe(1);
  });
});

describe("races between the two round trips: what another delivery finished meanwhile is left alone", () => {
  it("a notification another delivery sent while this one was at the mailer keeps that delivery's record", async () => {
    const s = await makeStore(db);
    const order = await fixtureOrder(s);
    const eventId = await withStore(db, s.id, (tx) => emit(tx, "order.paid", { orderId: order.id }));
    const message: RoutedEvent = { eventId, storeId: s.id, kind: "order.paid", payload: { orderId: order.id }, createdAt: new Date().toISOString(), route: "notification:payment_received" };
    const inner = localMailer(db);
    const racing = {
      provider: inner.provider,
      async send(m: Parameters<typeof inner.send>[0]) {
        await sqlIn(s, "insert into notification (store_id, event_id, template, recipient, subject, attempts, status, provider_id) values ($1, $2, 'payment_received', 'x@example.test', 'Other', 1, 'sent', 'other')", [
          s.id,
          eventId,
        ]);
        return inner.send(m);
      },
    };
    expect(await sendNotification(message, { db, log, mail: { mailer: racing, fromDomain: "mail.test" } })).toBe("sent");
    expect(await sqlIn(s, "select status, attempts, provider_id, subject from notification where event_id = $1", [eventId])).toEqual([
      { status: "sent", attempts: 1, provider_id: "other", subject: "Other" },
    ]);
  });

  it("a back-in-stock subscription another delivery alerted meanwhile is counted skipped and its record kept", async () => {
    const s = await makeStore(db);
    const [variant] = await sqlIn<{ id: string }>(s, "select id from product_variant");
    await sqlIn(s, "update product set status = 'active'");
    const [sub] = await sqlIn<{ id: string }>(s, "insert into restock_subscription (store_id, variant_id, email) values ($1, $2, 'r@example.test') returning id", [s.id, variant!.id]);
    const inner = localMailer(db);
    const racing = {
      provider: inner.provider,
      async send(m: Parameters<typeof inner.send>[0]) {
        await sqlIn(s, "update restock_subscription set status = 'sent', notified_at = now() where id = $1", [sub!.id]);
        await sqlIn(s, "insert into notification (store_id, event_id, template, recipient, subject, attempts, status) values ($1, $2, 'back_in_stock', 'r@example.test', 'Other', 1, 'sent')", [
          s.id,
          sub!.id,
        ]);
        return inner.send(m);
      },
    };
    const message: RoutedEvent = { eventId: crypto.randomUUID(), storeId: s.id, kind: "inventory.restocked", payload: { variantId: variant!.id }, createdAt: new Date().toISOString(), route: "restock" };
    expect(await sendRestockAlerts(message, { db, log, mail: { mailer: racing, fromDomain: "mail.test" } })).toEqual({ sent: 0, failed: 0, retry: 0, skipped: 1 });
    expect(await sqlIn(s, "select status, attempts, subject from notification where event_id = $1", [sub!.id])).toEqual([{ status: "sent", attempts: 1, subject: "Other" }]);
    expect(await sqlIn(s, "select status, event_id from restock_subscription where id = $1", [sub!.id])).toEqual([{ status: "sent", event_id: null }]);
  });

  it("a domain removed while its DNS was looked up is skipped: no check recorded, no event", async () => {
    const s = await makeStore(db);
    const now = new Date();
    const d = await domainAt(db, s.id, `race-${s.slug}.example.com`, new Date(now.getTime() - 5 * MINUTE));
    await setLocalDnsEntry(bindings.HOSTS, d.record.name, { txt: [d.record.value] });
    const inner = localDns(bindings.HOSTS);
    const racing = {
      provider: inner.provider,
      async txt(name: string) {
        await sqlIn(s, "delete from store_domain where id = $1", [d.id]);
        return inner.txt(name);
      },
    };
    expect(await verifyStore({ db, now }, s.id, racing)).toEqual({ checked: 0, verified: 0, failed: 0, taken: 0, pending: 0, skipped: 1 });
    expect(await sqlIn(s, "select count(*)::int as n from domain_check where domain_id = $1", [d.id])).toEqual([{ n: 0 }]);
    expect(await sqlIn(s, "select count(*)::int as n from outbox_event where kind = 'domain.verified'")).toEqual([{ n: 0 }]);
  });
});

describe("round trips: back-in-stock alerts", () => {
  it("a restock alerts every waiting subscriber in two round trips; a second delivery reads once and sends nobody", async () => {
    const s = await makeStore(db);
    const [variant] = await sqlIn<{ id: string }>(s, "select id from product_variant");
    await sqlIn(s, "update product set status = 'active'");
    await sqlIn(s, "update inventory_level set on_hand = 0");
    for (const email of ["a@example.test", "b@example.test"]) await sqlIn(s, "insert into restock_subscription (store_id, variant_id, email) values ($1, $2, $3)", [s.id, variant!.id, email]);
    await sqlIn(s, "update inventory_level set on_hand = 3");
    const message: RoutedEvent = { eventId: crypto.randomUUID(), storeId: s.id, kind: "inventory.restocked", payload: { variantId: variant!.id }, createdAt: new Date().toISOString(), route: "restock" };
    const first = await tracedWork((t) => sendRestockAlerts(message, { db: t, log, mail: mail() }));
    expect(first.result).toEqual({ sent: 2, failed: 0, retry: 0, skipped: 0 });
    expect(first.trips.turns).toBe(2);
    const again = await tracedWork((t) => sendRestockAlerts(message, { db: t, log, mail: mail() }));
    expect(again.result).toEqual({ sent: 0, failed: 0, retry: 0, skipped: 0 });
    expect(again.trips.turns).toBe(1);
  });
  it("a return's restock reads the returned variants in the same unit: still two round trips", async () => {
    const s = await makeStore(db);
    const [variant] = await sqlIn<{ id: string }>(s, "select id from product_variant");
    const [ret] = await sqlIn<{ id: string }>(s, "select id from order_return");
    await sqlIn(s, "update product set status = 'active'");
    await sqlIn(s, "insert into restock_subscription (store_id, variant_id, email) values ($1, $2, 'back@example.test')", [s.id, variant!.id]);
    const message: RoutedEvent = { eventId: crypto.randomUUID(), storeId: s.id, kind: "return.received", payload: { returnId: ret!.id, restocked: true }, createdAt: new Date().toISOString(), route: "restock" };
    const { result, trips } = await tracedWork((t) => sendRestockAlerts(message, { db: t, log, mail: mail() }));
    expect(result).toEqual({ sent: 1, failed: 0, retry: 0, skipped: 0 });
    expect(trips.turns).toBe(2);
  });
});

describe("round trips: marketing", () => {
  it("the tick is one round trip per store; its hand-over is sent in two; an enrolment is one", async () => {
    const s = await makeStore(db);
    for (const email of ["p1@example.test", "p2@example.test"]) await sqlIn(s, "insert into customer (store_id, email, first_name, accepts_marketing) values ($1, $2, 'P', true)", [s.id, email]);
    const at = new Date(Date.now() + MINUTE);
    await sqlIn(s, "insert into campaign (store_id, name, subject, body, audience, starts_at) values ($1, 'RT', 'Hello {{first_name}}', 'Hi from {{store_name}}', 'subscribers', $2)", [
      s.id,
      new Date(at.getTime() - MINUTE),
    ]);
    const handed: SendOrder[] = [];
    const queue = { sendBatch: async (messages: { body: SendOrder }[]) => void handed.push(...messages.map((m) => m.body)) };
    const tick = await tracedWork((t) => marketingTick({ ...jobContext(t, at), env: { ...env, MARKETING_SEND: queue }, job: "{marketing}-tick" }, [s.id]));
    expect(tick.result).toMatchObject({ stores: 1, failedStores: 0, campaignsStarted: 1, messagesCreated: 2, handedOver: 2 });
    expect(tick.trips.turns).toBe(1);

    expect(handed).toHaveLength(1);
    const send = await tracedWork((t) => sendMarketingBatch(handed[0]!, { db: t, log, mail: { mailer: localMailer(db), fromDomain: "mail.localhost" }, linkSecret }));
    expect(send.result).toMatchObject({ sent: 2, skipped: 0, gone: 0 });
    expect(send.trips.turns).toBe(2);
    const again = await tracedWork((t) => sendMarketingBatch(handed[0]!, { db: t, log, mail: { mailer: localMailer(db), fromDomain: "mail.localhost" }, linkSecret }));
    expect(again.result).toMatchObject({ sent: 0, gone: 2 });
    expect(again.trips.turns).toBe(1);

    await sqlIn(s, "insert into marketing_automation (store_id, kind, enabled, delay_minutes, subject, body) values ($1, 'abandoned_checkout', true, 60, 'Back?', 'Hi')", [s.id]);
    const order = await fixtureOrder(s);
    const placed: RoutedEvent = { eventId: crypto.randomUUID(), storeId: s.id, kind: "order.placed", payload: { orderId: order.id }, createdAt: new Date().toISOString(), route: "marketing" };
    const enrolled = await tracedWork((t) => enrolFromEvent(placed, { db: t, log }));
    expect([enrolled.result, enrolled.trips.turns]).toEqual(["enrolled", 1]);
  });
});

describe("round trips: app webhooks", () => {
  it("an event fans out in one round trip; a try is claimed and recorded in two; a duplicate try costs one", async () => {
    const s = await makeStore(db);
    const appId = crypto.randomUUID();
    const { record, hint } = await newAppSecret(TEST_ROOT_SECRET, appId, 1);
    await sqlIn(s, "insert into store_app (id, store_id, name, url, events, secret_version, secret_salt, secret_hash, secret_hint) values ($1, $2, 'RT', $3, $4, $5, $6, $7, $8)", [
      appId,
      s.id,
      "https://rt.example.com/hooks",
      ["order.*"],
      record.version,
      record.salt,
      record.hash,
      hint,
    ]);
    const eventId = await withStore(db, s.id, (tx) => emit(tx, "order.paid", { orderId: crypto.randomUUID() }));
    const routed = (await routedForApps(db, s.id, eventId))!;
    const net = receivers(() => new Date());
    const deps = testDeps(db, net.fetch);
    const fanned = await tracedWork((t) => consumeAppEvent(routed, { ...deps, db: t }));
    expect([fanned.result, fanned.trips.turns]).toEqual([{ queued: 1 }, 1]);
    const job = deps.jobs.sent[0]!.job;
    const tried = await tracedWork((t) => consumeAppJob(job, { ...deps, db: t }));
    expect([tried.result, tried.trips.turns]).toEqual([{ outcome: "delivered" }, 2]);
    expect(net.requests).toHaveLength(1);
    const duplicate = await tracedWork((t) => consumeAppJob(job, { ...deps, db: t }));
    expect([duplicate.result, duplicate.trips.turns]).toEqual([{ outcome: "skipped" }, 1]);
  });
});

describe("round trips: custom domains", () => {
  it("a store's due domains are checked in two round trips; routing and unrouting take two each, a duplicate one", async () => {
    const s = await makeStore(db);
    const now = new Date();
    const d = await domainAt(db, s.id, `rt-${s.slug}.example.com`, new Date(now.getTime() - 5 * MINUTE));
    await setLocalDnsEntry(bindings.HOSTS, d.record.name, { txt: [d.record.value] });
    const checked = await tracedWork((t) => verifyStore({ db: t, now }, s.id, localDns(bindings.HOSTS)));
    expect(checked.result).toMatchObject({ checked: 1, verified: 1, skipped: 0 });
    expect(checked.trips.turns).toBe(2);
    // A claim on a hostname another store has just verified fails in the same two round trips, unlooked-up.
    const rival = await makeStore(db);
    const claim = await domainAt(db, rival.id, d.hostname, new Date(now.getTime() - 5 * MINUTE));
    const taken = await tracedWork((t) => verifyStore({ db: t, now }, rival.id, localDns(bindings.HOSTS)));
    expect([taken.result, taken.trips.turns]).toEqual([{ checked: 0, verified: 0, failed: 0, taken: 1, pending: 0, skipped: 0 }, 2]);
    expect(await sqlIn(rival, "select status, failed_reason from store_domain where id = $1", [claim.id])).toEqual([{ status: "failed", failed_reason: "taken" }]);

    const deps = (t: Database) => ({ db: t, router: localRouter(bindings.HOSTS), hosts: bindings.HOSTS, log });
    const onVerified = await routedEvent(db, s.id, "domain.verified");
    expect((await tracedWork((t) => routeDomainEvent(onVerified, deps(t)))).trips.turns).toBe(2);
    expect((await sqlIn<{ router_id: string | null }>(s, "select router_id from store_domain where id = $1", [d.id]))[0]!.router_id).not.toBeNull();
    expect((await tracedWork((t) => routeDomainEvent(onVerified, deps(t)))).trips.turns).toBe(1);

    await withStore(db, s.id, async (tx) => {
      const { rows } = await tx.$client.query<{ router_id: string }>("delete from store_domain where store_id = $1 and id = $2 returning router_id", [tx.storeId, d.id]);
      await emit(tx, "domain.removed", { domainId: d.id, hostname: d.hostname, routerId: rows[0]!.router_id });
    });
    const onRemoved = await routedEvent(db, s.id, "domain.removed");
    expect((await tracedWork((t) => routeDomainEvent(onRemoved, deps(t)))).trips.turns).toBe(2);
    expect(await sqlIn(s, "select outcome from domain_route_receipt where event_id = $1", [onRemoved.eventId])).toEqual([{ outcome: "unrouted" }]);

    // A removed claim that never verified: its receipt alone, in one round trip.
    await withStore(db, rival.id, async (tx) => {
      await tx.$client.query("delete from store_domain where store_id = $1 and id = $2", [tx.storeId, claim.id]);
      await emit(tx, "domain.removed", { domainId: claim.id, hostname: claim.hostname, routerId: null, status: "failed", verifiedAt: null });
    });
    const onClaimRemoved = await routedEvent(db, rival.id, "domain.removed");
    expect((await tracedWork((t) => routeDomainEvent(onClaimRemoved, deps(t)))).trips.turns).toBe(1);
    expect(await sqlIn(rival, "select outcome from domain_route_receipt where event_id = $1", [onClaimRemoved.eventId])).toEqual([{ outcome: "skipped" }]);
  });
});

describe("round trips: bookkeeping", () => {
  it("a store's old API activity, sent outbox rows and Idempotency-Keys are pruned in one round trip", async () => {
    const s = await makeStore(db);
    const [grant] = await sqlIn<{ id: string }>(s, "select id from api_grant");
    await sqlIn(s, "insert into api_activity (store_id, grant_id, procedure, kind, via, bucket_start, last_at) values ($1, $2, 'products.list', 'read', 'token', $3, $3)", [
      s.id,
      grant!.id,
      new Date(Date.now() - 100 * 86_400_000),
    ]);
    await sqlIn(s, "update idempotency_key set created_at = $1", [new Date(Date.now() - 2 * 86_400_000)]);
    const pruned = await tracedWork((t) => pruneStore(t, s.id, pruneCutoffs(new Date())));
    expect([pruned.result, pruned.trips.turns]).toEqual([{ deleted: 1, outboxDeleted: 0, keysDeleted: 1 }, 1]);
  });

  it("a job's failure in a store is recorded for its merchant in one round trip", async () => {
    const s = await makeStore(db);
    const failed = await tracedWork((t) =>
      forEachStore({ ...jobContext(t, new Date()), job: "{marketing}-tick" }, [s.id], async () => {
        throw new Error("the store's work failed (test)");
      }),
    );
    expect(failed.result).toMatchObject({ stores: 1, failedStores: 1 });
    expect(failed.trips.turns).toBe(1);
    expect(await sqlIn(s, "select error from job_failure where job = '{marketing}-tick'")).toEqual([{ error: "the store's work failed (test)" }]);
  });
});
