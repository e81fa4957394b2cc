import { describe, expect, it } from "vitest";
import { emit } from "#shared/db/outbox";
import { withStore } from "#shared/db/with-store";
import { createLogger } from "#shared/core/log";
import { localMailer } from "#shared/mail/local";
import { sendNotification } from "#shared/notifications/send";
import { makeStore, testDb, type TestStore } from "../../test/harness";
import { orderShop, placeTestOrder } from "../../test/orders";
import { callerFor } from "../../test/procedures";
import { MAX_ATTEMPTS, relayStores } from "./outbox";
import { recordingQueues } from "../../test/jobs";
import type { RoutedEvent } from "../events/routes";

/** The outbox relay against real Postgres, with queues that record what they were given (issue 12). */
const db = testDb();
/** A second connection, for holding a store's relay lock while the relay runs. */
const holder = testDb();
const log = createLogger({ test: true }, "error");

const recorder = recordingQueues;

const rows = (s: TestStore, text: string, values: unknown[] = []) => withStore(db, s.id, (tx) => tx.$client.query(text, values)).then((r) => r.rows);
/** Only this store's messages: other test files' stores may have rows due in the same database. */
const of = (s: TestStore, sent: RoutedEvent[]) => sent.filter((m) => m.storeId === s.id);
/** The same, on the notifications route only (every order event also goes to the apps queue). */
const mailOf = (s: TestStore, sent: RoutedEvent[]) => of(s, sent).filter((m) => m.route.startsWith("notification:"));
const later = (minutes: number) => new Date(Date.now() + minutes * 60_000);

describe("the outbox relay", () => {
  it("sends each kind to its routes once, in order, and marks the rows; a second pass sends nothing", async () => {
    const s = await makeStore(db);
    const orderId = crypto.randomUUID();
    const returnId = crypto.randomUUID();
    await withStore(db, s.id, async (tx) => {
      await emit(tx, "order.paid", { orderId });
      await emit(tx, "order.rto", { orderId });
      await emit(tx, "return.approved", { orderId, returnId });
      await emit(tx, "domain.verified", { domainId: crypto.randomUUID() });
    });
    const { sent, queues } = recorder();
    await relayStores(db, [s.id], queues, log, later(1));
    const mine = of(s, sent).filter((m) => m.eventId !== s.outboxEventId);
    expect(mine.map((m) => [m.kind, m.route])).toEqual([
      // One send per queue, each in the order the events were written.
      ["order.paid", "notification:payment_received"],
      ["return.approved", "notification:return_approved"],
      ["order.paid", "app"],
      // The same queue again for an agent's order update (shared/ucp/order-webhooks.ts), which its consumer sends only for a UCP session's order.
      ["order.paid", "ucp_order"],
      ["order.rto", "app"],
      ["return.approved", "app"],
      ["order.paid", "marketing"],
      ["domain.verified", "domain"],
    ]);
    expect(mine[1]!.payload).toEqual({ orderId, returnId });
    expect(await rows(s, "select count(*)::int as n from outbox_event where processed_at is null")).toEqual([{ n: 0 }]);
    const again = recorder();
    await relayStores(db, [s.id], again.queues, log, later(2));
    expect(of(s, again.sent)).toEqual([]);
  });

  it("a relay that dies after sending and before marking sends again, and the shopper still gets one message", async () => {
    const { s } = await orderShop(db);
    const placed = await placeTestOrder(db, s);
    await callerFor(db, s.ownerUserId, s.id)("orders.setStatus", { orderId: placed.order.id, action: "mark_paid" });
    const first = recorder();
    await relayStores(db, [s.id], first.queues, log, later(1));
    // As if the marking had never committed.
    await rows(s, "update outbox_event set processed_at = null where kind = 'order.paid'");
    const second = recorder();
    await relayStores(db, [s.id], second.queues, log, later(2));
    const paid = [...mailOf(s, first.sent), ...mailOf(s, second.sent)].filter((m) => m.kind === "order.paid");
    expect(paid).toHaveLength(2);
    const mail = { mailer: localMailer(db), fromDomain: "mail.test" };
    const outcomes = [];
    for (const m of [...paid, paid[0]!]) outcomes.push(await sendNotification(m, { db, log, mail }));
    expect(outcomes).toEqual(["sent", "duplicate", "duplicate"]);
    expect(await rows(s, "select recipient, subject, tag from mailbox_message where tag = 'payment_received'")).toEqual([
      { recipient: "asha@example.test", subject: `Payment received for order #${placed.order.number} · ${s.name}`, tag: "payment_received" },
    ]);
    expect(await rows(s, "select template, status from notification where event_id = $1", [paid[0]!.eventId])).toEqual([{ template: "payment_received", status: "sent" }]);
  });

  it("a row that cannot be sent waits with its error, holds the store's later rows, and dies after the last try; Retry sends it", async () => {
    const [s, other] = [await makeStore(db), await makeStore(db)];
    const orderId = crypto.randomUUID();
    for (const store of [s, other]) {
      await withStore(db, store.id, async (tx) => {
        await emit(tx, "order.paid", { orderId, poison: store.id === s.id });
        await emit(tx, "order.fulfilled", { orderId });
      });
    }
    const broken = recorder((m) => m.payload["poison"] === true);
    let now = later(1);
    for (let i = 0; i < MAX_ATTEMPTS; i++) {
      await relayStores(db, [s.id, other.id], broken.queues, log, now);
      now = new Date(now.getTime() + 4 * 3_600_000);
    }
    // The other store was never held up; this one sent nothing past its stuck row.
    expect(mailOf(other, broken.sent).map((m) => m.kind)).toEqual(["order.paid", "order.fulfilled"]);
    expect(of(s, broken.sent).filter((m) => m.kind.startsWith("order."))).toEqual([]);
    const [dead] = await rows(s, "select attempts, dead_at is not null as dead, last_error from outbox_event where kind = 'order.paid'");
    expect(dead).toEqual({ attempts: MAX_ATTEMPTS, dead: true, last_error: "queue refused order.paid" });
    // A dead row no longer holds the store: the next row goes.
    const after = recorder();
    await relayStores(db, [s.id], after.queues, log, now);
    expect(mailOf(s, after.sent).map((m) => m.kind)).toEqual(["order.fulfilled"]);
    const call = callerFor(db, s.ownerUserId, s.id);
    const listed = (await call("outbox.dead", {})) as { items: { id: string; kind: string; lastError: string; attempts: number }[] };
    expect(listed.items).toMatchObject([{ kind: "order.paid", lastError: "queue refused order.paid", attempts: MAX_ATTEMPTS }]);
    await call("outbox.retry", { id: listed.items[0]!.id });
    await rows(s, "update outbox_event set payload = payload - 'poison' where kind = 'order.paid'");
    const retried = recorder();
    await relayStores(db, [s.id], retried.queues, log, later(1));
    expect(mailOf(s, retried.sent).map((m) => m.kind)).toEqual(["order.paid"]);
    expect(((await call("outbox.dead", {})) as { total: number }).total).toBe(0);
  });

  it("a store another relay is working is skipped, not sent out of order", async () => {
    const s = await makeStore(db);
    await withStore(db, s.id, (tx) => emit(tx, "order.paid", { orderId: crypto.randomUUID() }));
    const { sent, queues } = recorder();
    await withStore(holder, s.id, async (tx) => {
      await tx.$client.query("select pg_advisory_xact_lock(hashtext($1))", [`outbox-relay:${s.id}`]);
      const report = await relayStores(db, [s.id], queues, log, later(1));
      expect(report.skipped).toBeGreaterThanOrEqual(1);
    });
    expect(of(s, sent)).toEqual([]);
  });
});

describe("the notifications consumer", () => {
  it("a busy mailer is retried later (the row keeps the error); a refused address fails once and is not retried", async () => {
    const { s } = await orderShop(db);
    const { order } = await placeTestOrder(db, s, { email: "bounce@example.test" });
    const eventId = await withStore(db, s.id, (tx) => emit(tx, "order.paid", { orderId: order.id }));
    const message: RoutedEvent = { eventId, storeId: s.id, kind: "order.paid", payload: { orderId: order.id }, createdAt: new Date().toISOString(), route: "notification:payment_received" };
    const busy = { mailer: localMailer(db, { busy: true }), fromDomain: "mail.test" };
    await expect(sendNotification(message, { db, log, mail: busy })).rejects.toMatchObject({ name: "RetryLater", delaySeconds: 2 });
    expect(await rows(s, "select status, attempts, last_error from notification where event_id = $1", [eventId])).toEqual([
      { status: "sending", attempts: 1, last_error: "the local mailbox was told to be busy" },
    ]);
    const refusing = { mailer: localMailer(db, { failFor: ["bounce@example.test"] }), fromDomain: "mail.test" };
    expect(await sendNotification(message, { db, log, mail: refusing })).toBe("failed");
    expect(await sendNotification(message, { db, log, mail: { mailer: localMailer(db), fromDomain: "mail.test" } })).toBe("duplicate");
    expect(await rows(s, "select status, attempts from notification where event_id = $1", [eventId])).toEqual([{ status: "failed", attempts: 2 }]);
    expect(await rows(s, "select count(*)::int as n from mailbox_message where tag = 'payment_received'")).toEqual([{ n: 0 }]);
  });
});

describe("a backlog", () => {
  it("a store with more rows than one batch is drained in one pass, in order", async () => {
    const s = await makeStore(db);
    await withStore(db, s.id, async (tx) => {
      await tx.$client.query(
        `insert into outbox_event (store_id, kind, payload) select $1, 'order.paid', jsonb_build_object('orderId', gen_random_uuid(), 'n', n)
         from generate_series(1, 250) as n order by n`,
        [tx.storeId],
      );
    });
    const { sent, queues } = recorder();
    const report = await relayStores(db, [s.id], queues, log, later(1));
    const mine = mailOf(s, sent).filter((m) => m.kind === "order.paid");
    expect(mine.map((m) => m.payload["n"])).toEqual(Array.from({ length: 250 }, (_, i) => i + 1));
    expect(report.sent).toBeGreaterThanOrEqual(250);
  });
});
