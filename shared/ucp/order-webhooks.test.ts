import { env } from "cloudflare:workers";
import { and, eq, gt } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createLogger } from "#shared/core/log";
import { outboxEvent } from "#shared/db/schema";
import { sendStoreUnit } from "#shared/db/unit";
import { withStore } from "#shared/db/with-store";
import type { RoutedEvent } from "#shared/events/routes";
import { routesOf } from "#shared/jobs/routing";
import { loadOrderView } from "#shared/orders/order-view";
import { paymentRequest } from "#shared/orders/payments";
import { applyPaymentStatus } from "#shared/orders/routines";
import { applyShipmentStatus } from "#shared/orders/shipments";
import { localPaymentId } from "#shared/payments/local-protocol";
import { storeGateway } from "#shared/payments/select";
import { providerServices } from "#shared/pipeline/providers";
import { checkoutRequest, askedOf } from "./checkout-input";
import { completeSession } from "./checkout-complete";
import { createSession } from "./checkout-sessions";
import { consumeUcpOrderEvent, consumeUcpOrderJob, UCP_ORDER_ROUTE, type UcpOrderDeps, type UcpOrderJob } from "./order-webhooks";
import { publishedProfile } from "./published-profile";
import { sessionOrderPath } from "./session-cart";
import { verifyMessage } from "./signatures";
import { newStoreKey, rotateKeyPlan } from "./store-keys";
import { receivers, type Reply } from "../../test/fakes/apps";
import { testDb } from "../../test/harness";
import { orderShop, placeTestOrder, TEST_GATEWAY } from "../../test/orders";
import { callerFor } from "../../test/procedures";
import { tracedWork } from "../../test/proxy";
import type { ShopStore } from "../../test/storefront";

/**
 * Order updates to the agent (issue 26 item 4) through the real Postgres: orders placed by completing UCP
 * checkout sessions, moved by the orders' own code (payment, shipping, delivery, refund, cancel); each outbox
 * event routed as the relay routes it, the {apps}-events and {apps}-jobs consumers run with a controlled clock,
 * and a local receiver standing for the agent's platform, whose requests are verified with the store's
 * published key as a platform verifies them.
 */
const db = testDb();
const ROOT = (env as unknown as { UCP_SIGNING_ROOT_SECRET: string }).UCP_SIGNING_ROOT_SECRET;
const AGENT = "https://agent.example.com/.well-known/ucp";
const address = { first_name: "Asha", last_name: "Rao", street_address: "12 MG Road", address_locality: "Pune", address_region: "IN-MH", postal_code: "411001", address_country: "IN" };

type Json = Record<string, any>;

interface Queued {
  job: UcpOrderJob;
  dueAt: Date;
}

/** The consumers' dependencies: a clock the test moves, a receiver per webhook URL, the {apps}-jobs queue as a recording. */
function agentDeps(replies: Record<string, Reply[]> = {}) {
  const queued: Queued[] = [];
  const sent: { job: UcpOrderJob; delaySeconds: number }[] = [];
  const deps: UcpOrderDeps = {
    db,
    log: createLogger({ test: true }, "error"),
    now: new Date(),
    fetch: async () => new Response(null),
    jobs: {
      async send(job, { delaySeconds }) {
        sent.push({ job, delaySeconds });
        queued.push({ job, dueAt: new Date(deps.now.getTime() + delaySeconds * 1000) });
      },
    },
    signing: { rootSecret: ROOT },
    allowLocalUrls: true,
    random: () => 0.5,
  };
  const net = receivers(() => deps.now, replies);
  deps.fetch = net.fetch;
  /** Runs the queued tries in due order, each at its due time. */
  const run = async () => {
    while (queued.length > 0) {
      queued.sort((a, b) => a.dueAt.getTime() - b.dueAt.getTime());
      const next = queued.shift()!;
      if (next.dueAt > deps.now) deps.now = next.dueAt;
      await consumeUcpOrderJob(next.job, deps);
    }
  };
  return { deps, net, sent, run };
}

type Agent = ReturnType<typeof agentDeps>;

/** The store's outbox events since `after` (of `kind`, when named), as the relay sends them on UCP_ORDER_ROUTE. */
async function routedSince(storeId: string, after: Date, kind?: string): Promise<RoutedEvent[]> {
  const rows = await withStore(db, storeId, (tx) =>
    tx
      .select()
      .from(outboxEvent)
      .where(and(eq(outboxEvent.storeId, tx.storeId), gt(outboxEvent.createdAt, after), kind ? eq(outboxEvent.kind, kind) : undefined)),
  );
  return rows.map((r) => ({ eventId: r.id, storeId: r.storeId, kind: r.kind, payload: r.payload, createdAt: r.createdAt.toISOString(), route: UCP_ORDER_ROUTE }));
}

/** The relay's step for the store's events since `after`: each routed to UCP_ORDER_ROUTE goes to the {apps}-events consumer. */
async function relay(s: ShopStore, agent: Agent, after: Date): Promise<RoutedEvent[]> {
  const routed = (await routedSince(s.id, after)).filter((r) => routesOf(r.kind, r.payload).some((x) => x.queue === "appEvents" && x.route === UCP_ORDER_ROUTE));
  for (const m of routed) await consumeUcpOrderEvent(m, agent.deps);
  await agent.run();
  return routed;
}

/** A store selling to agents, with a UCP signing key (as turning agentic checkout on makes one). */
async function agentShop(key = true) {
  const shop = await orderShop(db);
  await shop.sql("update store set agentic_checkout = true where id = $1", [shop.s.id]);
  if (key) {
    const made = await newStoreKey({ rootSecret: ROOT }, shop.s.id);
    await sendStoreUnit(db, shop.s.id, (q) => rotateKeyPlan(q, made), { readOnly: false });
  }
  return shop;
}

/** An order placed by completing a session for one unit of the shop's variant, its agent's webhook URL `hook` (none: undefined). */
async function sessionOrder(s: ShopStore, hook: string | undefined, host: string | null = null) {
  const asked = askedOf(
    checkoutRequest.parse({
      line_items: [{ item: { id: s.variantId }, quantity: 1 }],
      buyer: { email: "asha@example.com", first_name: "Asha" },
      fulfillment: { methods: [{ type: "shipping", destinations: [{ id: "home", ...address }] }] },
    }),
  );
  const created = await createSession(db, s.id, AGENT, asked, undefined, host);
  if (!created.ok) throw new Error("no session");
  const sessionId = created.checkout.id;
  const done = await completeSession({ db, storeId: s.id, rootSecret: ROOT, provider: "local", ip: null }, { url: AGENT, webhookUrl: hook }, sessionId);
  expect(done.ok && done.checkout.status).toBe("requires_escalation");
  const [row] = await withStore(db, s.id, (tx) => tx.$client.query("select order_id from ucp_checkout_session where id = $1", [sessionId]).then((r) => r.rows));
  return { sessionId, orderId: row!.order_id as string };
}

/** The buyer pays at the local gateway: the attempt pending, then captured with its payment id (refundable through the gateway). */
async function pay(s: ShopStore, orderId: string) {
  await withStore(db, s.id, async (tx) => {
    const order = (await loadOrderView(tx, orderId))!;
    const [attempt] = (await tx.$client.query("select id, attempt, idempotency_key, amount from payment_attempt where order_id = $1", [orderId])).rows;
    const sg = await storeGateway(TEST_GATEWAY, s.id);
    const created = await sg.gateway.createPayment(paymentRequest(order, { attempt: attempt.attempt, idempotencyKey: attempt.idempotency_key, amount: Number(attempt.amount) }, `https://${s.hostname}/api/checkout/${orderId}/confirm`));
    await applyPaymentStatus(tx, attempt.id, "pending", "gateway", { providerRef: created.providerRef });
    await applyPaymentStatus(tx, attempt.id, "captured", "webhook", { providerPaymentId: await localPaymentId(created.providerRef) });
  });
}

/** A request the receiver got, verified as the agent's platform verifies it: the signature with the store's published keys. */
async function verified(s: ShopStore, r: { url: string; headers: Headers; body: string }) {
  const profile = (await publishedProfile(db, s.id, `https://${s.hostname}`))!;
  const keyFor = async (kid: string) => profile.keys.find((k) => k.kid === kid) as Record<string, unknown> | undefined;
  return verifyMessage({ method: "POST", url: r.url, headers: r.headers, body: new TextEncoder().encode(r.body) }, keyFor);
}

const hookOf = (name: string) => `https://${name}-${crypto.randomUUID().slice(0, 8)}.agent.example.com/ucp/orders`;

/** An agent's order (its webhook at a fresh URL answering `replies`), paid; `since`: before the payment, for the relay. */
async function paidAgentOrder(name: string, replies: Reply[] = []) {
  const { s } = await agentShop();
  const hook = hookOf(name);
  const agent = agentDeps({ [hook]: replies });
  const { orderId } = await sessionOrder(s, hook);
  const since = new Date();
  await pay(s, orderId);
  return { s, hook, agent, orderId, since };
}
const bodies = (agent: Agent, url: string) => agent.net.to(url).map((r) => JSON.parse(r.body) as Json);

describe("order updates to the agent", () => {
  it("paid, shipped, delivered: one signed POST each of the full order, verified with the store's published key; a repeated message sends nothing more", async () => {
    const { s } = await agentShop();
    const hook = hookOf("paid");
    const agent = agentDeps();
    const start = new Date(Date.now() - 1000);
    const { sessionId, orderId } = await sessionOrder(s, hook);
    // Placed (unpaid): the agent follows its session; nothing is sent.
    expect(await relay(s, agent, start)).toEqual([]);
    expect(agent.net.requests).toHaveLength(0);

    let since = new Date();
    await pay(s, orderId);
    const [paid] = await relay(s, agent, since);
    expect(paid!.kind).toBe("order.paid");
    expect(agent.net.to(hook)).toHaveLength(1);
    const first = agent.net.to(hook)[0]!;
    expect(await verified(s, first)).toMatchObject({ ok: true });
    expect(first.headers.get("ucp-agent")).toBe(`profile="https://${s.hostname}/.well-known/ucp"`);
    expect(first.headers.get("content-type")).toBe("application/json");
    expect(first.headers.get("webhook-id")).toMatch(/^[0-9a-f-]{36}$/);
    expect(first.headers.get("webhook-timestamp")).toBe(String(Math.floor(Date.parse(paid!.createdAt) / 1000)));
    expect(first.headers.get("signature-input")).toMatch(/^sig1=\("@method" "@authority" "@path" "ucp-agent" "content-digest" "content-type"\);created=\d+;keyid="/);
    const body = JSON.parse(first.body) as Json;
    const permalink = `https://${s.hostname}${await sessionOrderPath(ROOT, s.id, sessionId, orderId)}`;
    expect(body).toMatchObject({ id: orderId, checkout_id: sessionId, permalink_url: permalink, currency: "INR", event_id: first.headers.get("webhook-id"), created_time: paid!.createdAt });
    expect(body["line_items"]).toEqual([expect.objectContaining({ id: "li_1", quantity: { original: 1, total: 1, fulfilled: 0 }, status: "processing" })]);
    expect(Object.keys(body)).toEqual(expect.arrayContaining(["ucp", "id", "checkout_id", "permalink_url", "line_items", "fulfillment", "currency", "totals"]));
    // A tampered body no longer verifies.
    expect(await verified(s, { ...first, body: first.body.replace('"INR"', '"USD"') })).toMatchObject({ ok: false, code: "digest_mismatch" });

    // The same message again (a queue redelivers, a relay replays): no second delivery, no second POST; the same try again: skipped.
    expect(await consumeUcpOrderEvent(paid!, agent.deps)).toEqual({ queued: 0 });
    expect(await consumeUcpOrderJob(agent.sent[0]!.job, agent.deps)).toEqual({ outcome: "skipped" });
    expect(agent.net.to(hook)).toHaveLength(1);

    // Shipped: the parcel booked with its tracking.
    const call = callerFor(db, s.ownerUserId, s.id, providerServices(env));
    const got = (await call("orders.get", { id: orderId })) as { parcels: { id: string }[] };
    since = new Date();
    const { shipmentId } = (await call("orders.fulfill", { orderId, parcelId: got.parcels[0]!.id, tracking: { awb: "DLV-778899", courierName: "Delhivery", trackingUrl: "https://track.example/DLV-778899" } })) as { shipmentId: string };
    expect((await relay(s, agent, since)).map((e) => e.kind)).toEqual(["order.fulfilled"]);
    const shipped = bodies(agent, hook)[1]!;
    expect(shipped["fulfillment"]["events"]).toEqual([
      expect.objectContaining({ type: "shipped", tracking_number: "DLV-778899", tracking_url: "https://track.example/DLV-778899", carrier: "Delhivery", line_items: [{ id: "li_1", quantity: 1 }] }),
    ]);
    expect(shipped["line_items"][0]["status"]).toBe("fulfilled");

    // In transit changes no order status: nothing sent. Delivered: one more.
    since = new Date();
    await withStore(db, s.id, (tx) => applyShipmentStatus(tx, shipmentId, "in_transit", "webhook"));
    expect(await relay(s, agent, since)).toEqual([]);
    since = new Date();
    await withStore(db, s.id, (tx) => applyShipmentStatus(tx, shipmentId, "delivered", "webhook"));
    expect((await relay(s, agent, since)).map((e) => e.kind)).toEqual(["order.delivered"]);
    const requests = agent.net.to(hook);
    expect(requests).toHaveLength(3);
    expect(bodies(agent, hook)[2]!["fulfillment"]["events"].map((e: Json) => e["type"])).toEqual(["shipped", "in_transit", "delivered"]);
    for (const r of requests) expect(await verified(s, r)).toMatchObject({ ok: true });
    // One update per change, each its own Webhook-Id.
    expect(new Set(requests.map((r) => r.headers.get("webhook-id"))).size).toBe(3);
    expect(agent.net.requests).toHaveLength(3);
  });

  it("names the domain the agent bought on (its session's), not the store's primary one", async () => {
    const { s } = await agentShop();
    const hook = hookOf("host");
    const agent = agentDeps();
    const host = `second-${crypto.randomUUID().slice(0, 8)}.example.test`;
    const { sessionId, orderId } = await sessionOrder(s, hook, host);
    const since = new Date();
    await pay(s, orderId);
    await relay(s, agent, since);
    const [sent] = agent.net.to(hook);
    expect(sent!.headers.get("ucp-agent")).toBe(`profile="https://${host}/.well-known/ucp"`);
    expect((JSON.parse(sent!.body) as Json)["permalink_url"]).toBe(`https://${host}${await sessionOrderPath(ROOT, s.id, sessionId, orderId)}`);
  });

  it("refunded, then cancelled: one more each, the refund and the cancellation as adjustments", async () => {
    const order = await paidAgentOrder("refund");
    const { s, hook, agent, orderId } = order;
    await relay(s, agent, order.since);
    let since: Date;
    const call = callerFor(db, s.ownerUserId, s.id, providerServices(env));
    since = new Date();
    await call("orders.refund", { orderId, reason: "Changed their mind" });
    expect((await relay(s, agent, since)).map((e) => e.kind)).toEqual(["order.refunded"]);
    since = new Date();
    await call("orders.cancel", { orderId });
    expect((await relay(s, agent, since)).map((e) => e.kind)).toEqual(["order.cancelled"]);
    const [, refunded, cancelled] = bodies(agent, hook);
    expect(agent.net.to(hook)).toHaveLength(3);
    expect(refunded!["adjustments"]).toEqual([expect.objectContaining({ type: "refund", status: "completed", description: "Changed their mind" })]);
    expect(cancelled!["adjustments"].map((a: Json) => a["type"])).toEqual(["refund", "cancellation"]);
    expect(cancelled!["line_items"][0]).toMatchObject({ quantity: { original: 1, total: 0, fulfilled: 0 }, status: "removed" });
  });

  it("a receiver answering 500 is tried again with the apps' backoff, with the same Webhook-Id, until it takes it", async () => {
    const { s, hook, agent, orderId, since } = await paidAgentOrder("flaky", [500, 503, 200]);
    const t0 = agent.deps.now.getTime();
    await relay(s, agent, since);
    const tries = agent.net.to(hook);
    expect(tries).toHaveLength(3);
    // 30 s, then 2 min after (the apps' delays; the jitter fixed at its middle).
    expect(agent.sent.map((q) => [q.job.attempt, q.delaySeconds])).toEqual([[1, 0], [2, 30], [3, 120]]);
    expect(tries.map((r) => (r.at.getTime() - t0) / 1000)).toEqual([0, 30, 150]);
    expect(new Set(tries.map((r) => r.headers.get("webhook-id"))).size).toBe(1);
    for (const r of tries) expect(await verified(s, r)).toMatchObject({ ok: true });
    const [row] = await withStore(db, s.id, (tx) => tx.$client.query("select status, attempts, last_status, delivered_at is not null as delivered from ucp_order_delivery where order_id = $1", [orderId]).then((r) => r.rows));
    expect(row).toEqual({ status: "delivered", attempts: 3, last_status: 200, delivered: true });
  });

  it("a failed update sent again (salesChannels.resendOrderUpdate): a new round through the same queues, with the order as it now stands and the same Webhook-Id", async () => {
    const { s, hook, agent, orderId, since } = await paidAgentOrder("resend", [500, 500, 500, 500, 500, 500, 200]);
    await relay(s, agent, since);
    const failedTries = agent.net.to(hook);
    expect(failedTries).toHaveLength(6);
    const call = callerFor(db, s.ownerUserId, s.id, providerServices(env));
    type Update = { id: string; orderId: string; eventKind: string; status: string; attempts: number };
    const listed = ((await call("salesChannels.orderUpdates", { status: "failed" })) as { items: Update[] }).items.filter((u) => u.orderId === orderId);
    expect(listed).toEqual([expect.objectContaining({ eventKind: "order.paid", status: "failed", attempts: 6 })]);
    const paidUpdate = listed[0]!.id;

    // Meanwhile the order ships (its own update goes through); the paid one, sent again, carries the shipment.
    const got = (await call("orders.get", { id: orderId })) as { parcels: { id: string }[] };
    let after = new Date();
    await call("orders.fulfill", { orderId, parcelId: got.parcels[0]!.id, tracking: { awb: "DLV-1234", courierName: "Delhivery" } });
    expect((await relay(s, agent, after)).map((e) => e.kind)).toEqual(["order.fulfilled"]);
    expect(agent.net.to(hook)).toHaveLength(7);

    after = new Date();
    expect(await call("salesChannels.resendOrderUpdate", { deliveryId: paidUpdate })).toMatchObject({ id: paidUpdate, status: "pending", attempts: 0 });
    const routed = await relay(s, agent, after);
    expect(routed.map((e) => e.kind)).toEqual(["ucp.order_update_resend_requested"]);
    const requests = agent.net.to(hook);
    expect(requests).toHaveLength(8);
    const resent = requests[7]!;
    expect(await verified(s, resent)).toMatchObject({ ok: true });
    expect(resent.headers.get("webhook-id")).toBe(failedTries[0]!.headers.get("webhook-id"));
    expect(resent.headers.get("webhook-id")).toBe(paidUpdate);
    const body = JSON.parse(resent.body) as Json;
    expect(body).toMatchObject({ id: orderId, event_id: paidUpdate });
    expect(body["line_items"][0]["status"]).toBe("fulfilled");
    expect(body["fulfillment"]["events"]).toEqual([expect.objectContaining({ type: "shipped", tracking_number: "DLV-1234" })]);
    const [row] = await withStore(db, s.id, (tx) => tx.$client.query("select status, attempts, last_status from ucp_order_delivery where id = $1", [paidUpdate]).then((r) => r.rows));
    expect(row).toEqual({ status: "delivered", attempts: 1, last_status: 200 });

    // The resend's message again (the queue repeats it): one round trip, nothing more is sent.
    const again = await tracedWork((t) => consumeUcpOrderEvent(routed[0]!, { ...agent.deps, db: t }));
    expect([again.result, again.trips.turns]).toEqual([{ queued: 0 }, 1]);
    await agent.run();
    expect(agent.net.to(hook)).toHaveLength(8);
  });

  it("nothing for an online store order, for a session whose agent gave no webhook URL, or across stores; a store without a key sends nothing unsigned", async () => {
    const { s, sql } = await agentShop();
    const other = await agentShop();
    const agent = agentDeps();
    const hook = hookOf("mine");
    const otherHook = hookOf("other");
    const since = new Date(Date.now() - 1000);
    // The online store's own order, paid.
    const online = await placeTestOrder(db, s);
    await pay(s, online.order.id);
    // A session whose agent's profile named no order webhook.
    const { orderId: silent } = await sessionOrder(s, undefined);
    await pay(s, silent);
    expect((await relay(s, agent, since)).map((e) => e.kind)).toEqual(["order.paid", "order.paid"]);
    expect(agent.net.requests).toHaveLength(0);
    // No delivery is even made for them.
    expect(await sql("select count(*)::int as n from ucp_order_delivery where order_id = any($1::uuid[])", [[online.order.id, silent]])).toEqual([{ n: 0 }]);

    // Another store's agent order goes to its own agent only; its event named as this store's finds nothing here.
    const { orderId: theirs } = await sessionOrder(other.s, otherHook);
    const { orderId: mine } = await sessionOrder(s, hook);
    const later = new Date();
    await pay(other.s, theirs);
    await pay(s, mine);
    const theirEvents = await relay(other.s, agent, later);
    await relay(s, agent, later);
    expect(agent.net.to(otherHook)).toHaveLength(1);
    expect(agent.net.to(hook)).toHaveLength(1);
    expect(bodies(agent, hook)[0]!["id"]).toBe(mine);
    expect(await consumeUcpOrderEvent({ ...theirEvents[0]!, eventId: crypto.randomUUID(), storeId: s.id }, agent.deps)).toEqual({ queued: 0 });
    expect(agent.net.requests).toHaveLength(2);

    // No signing key: the try fails with what to do, is kept for a retry, and nothing goes out.
    const keyless = await agentShop(false);
    const keylessHook = hookOf("keyless");
    const { orderId: unsigned } = await sessionOrder(keyless.s, keylessHook);
    const t = new Date();
    await pay(keyless.s, unsigned);
    const [event] = await routedSince(keyless.s.id, t, "order.paid");
    await consumeUcpOrderEvent(event!, agent.deps);
    const job = agent.sent.at(-1)!.job;
    expect(await consumeUcpOrderJob(job, agent.deps)).toEqual({ outcome: "pending" });
    expect(agent.net.to(keylessHook)).toHaveLength(0);
    const [row] = await keyless.sql<Json>("select status, attempts, last_error, next_attempt_at is not null as retry from ucp_order_delivery where order_id = $1", [unsigned]);
    expect(row).toEqual({ status: "pending", attempts: 1, last_error: expect.stringMatching(/no UCP signing key.*nothing is sent unsigned/), retry: true });
  });

  it("round trips: an event's delivery is made in one; a try is claimed (with everything the update is made of) and recorded in two; a duplicate try costs one", async () => {
    const { s, hook, agent, since } = await paidAgentOrder("trips");
    const [routed] = await routedSince(s.id, since, "order.paid");
    const fanned = await tracedWork((t) => consumeUcpOrderEvent(routed!, { ...agent.deps, db: t }));
    expect([fanned.result, fanned.trips.turns]).toEqual([{ queued: 1 }, 1]);
    const job = agent.sent[0]!.job;
    const tried = await tracedWork((t) => consumeUcpOrderJob(job, { ...agent.deps, db: t }));
    expect([tried.result, tried.trips.turns]).toEqual([{ outcome: "delivered" }, 2]);
    const duplicate = await tracedWork((t) => consumeUcpOrderJob(job, { ...agent.deps, db: t }));
    expect([duplicate.result, duplicate.trips.turns]).toEqual([{ outcome: "skipped" }, 1]);
    expect(agent.net.to(hook)).toHaveLength(1);
  });
});
