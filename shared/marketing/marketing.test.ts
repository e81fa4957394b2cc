import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import type { RoutedEvent } from "#shared/events/routes";
import { routesOf } from "#shared/jobs/routing";
import { marketingTick } from "#shared/jobs/marketing-tick";
import { createLogger } from "#shared/core/log";
import { localMailer, type LocalMailBehaviour } from "#shared/mail/local";
import { applyPaymentStatus } from "#shared/orders/routines";
import { testDb } from "../../test/harness";
import { jobContext } from "../../test/jobs";
import { orderShop, placeTestOrder } from "../../test/orders";
import { addMember, callerFor, failureText, type Caller } from "../../test/procedures";
import type { ShopStore } from "../../test/storefront";
import { enrolFromEvent } from "./enrol";
import { emailLinkSecretFromEnv } from "../mail/links";
import { sendMarketingBatch, type SendOrder } from "./send";

/**
 * Marketing against real Postgres (issue 12): campaigns and automations through the tick with a controlled
 * clock, the send consumer with the local mailbox, and the rule above all: a customer without consent is
 * never sent marketing, neither when the message is queued nor when it is sent.
 */
const db = testDb();
const log = createLogger({ test: true }, "error");
const MINUTE = 60_000;
const secret = emailLinkSecretFromEnv(env as unknown as Record<string, unknown>);

interface Shop {
  s: ShopStore;
  call: Caller;
  sql: <R = Record<string, unknown>>(text: string, values?: unknown[]) => Promise<R[]>;
  /** Runs the tick at `at` for this store only; answers the hand-overs it made. */
  tick(at: Date, queueFails?: boolean): Promise<SendOrder[]>;
  /** Sends hand-overs as the queue consumer would. */
  send(orders: SendOrder[], mail?: LocalMailBehaviour): Promise<void>;
  mailbox(): Promise<{ recipient: string; subject: string; text_body: string; tag: string }[]>;
  customer(email: string, acceptsMarketing: boolean, firstName?: string): Promise<string>;
}

async function shop(): Promise<Shop> {
  const { s, sql } = await orderShop(db);
  await sql("update inventory_level set on_hand = 50");
  const call = callerFor(db, s.ownerUserId, s.id);
  return {
    s,
    call,
    sql,
    async tick(at, queueFails = false) {
      const handed: SendOrder[] = [];
      const queue = {
        async sendBatch(messages: { body: SendOrder }[]) {
          if (queueFails) throw new Error("queue unavailable (test)");
          handed.push(...messages.map((m) => m.body));
        },
      };
      const ctx = { ...jobContext(db, at), env: { ...env, MARKETING_SEND: queue }, job: "{marketing}-tick" as const };
      await marketingTick(ctx, [s.id]);
      return handed;
    },
    async send(orders, mail = {}) {
      for (const order of orders) await sendMarketingBatch(order, { db, log, mail: { mailer: localMailer(db, mail), fromDomain: "mail.localhost" }, linkSecret: secret });
    },
    mailbox: () => sql("select recipient, subject, text_body, tag from mailbox_message where tag <> 'fixture' order by created_at, recipient"),
    async customer(email, acceptsMarketing, firstName) {
      const c = (await call("customers.create", { email, acceptsMarketing, ...(firstName ? { firstName } : {}) })) as { id: string };
      return c.id;
    },
  };
}

/** An order by `email` whose payment the gateway captured. */
async function paidOrder(sh: Shop, email: string, at = new Date()) {
  const placed = await placeTestOrder(db, sh.s, { email, at });
  await withStore(db, sh.s.id, (tx) => applyPaymentStatus(tx, placed.attempt.id, "captured", "webhook", { providerPaymentId: `pay_${crypto.randomUUID()}` }));
  return placed.order;
}

/** The relayed message of the store's outbox event of `kind` for the order, as the relay would send it. */
async function relayed(sh: Shop, kind: string, orderId: string): Promise<RoutedEvent> {
  const [row] = await sh.sql<{ id: string; payload: Record<string, unknown>; created_at: Date }>(
    "select id, payload, created_at from outbox_event where kind = $1 and payload->>'orderId' = $2",
    [kind, orderId],
  );
  return { eventId: row!.id, storeId: sh.s.id, kind, payload: row!.payload, createdAt: row!.created_at.toISOString(), route: "marketing" };
}

const campaign = (sh: Shop, input: Record<string, unknown>) =>
  sh.call("campaigns.create", { name: "Diwali", subject: "Hello {{first_name}}", body: "Our Diwali sale starts now at {{store_name}}.\n\nSee {{store_url}}", audience: "subscribers", ...input }) as Promise<{ id: string; status: string }>;

describe("campaigns", () => {
  it("start when due and reach each consenting customer of the audience once; never one without consent", async () => {
    const sh = await shop();
    await sh.customer("a@example.test", true, "Asha");
    await sh.customer("b@example.test", true, "Bela");
    await sh.customer("c@example.test", false, "Chitra");
    await sh.call("customers.create", { phone: "+919876543210", acceptsMarketing: true });
    await paidOrder(sh, "a@example.test");
    const t0 = Date.now();
    const k = await campaign(sh, { startsAt: new Date(t0 + 60 * MINUTE).toISOString() });
    expect(k.status).toBe("scheduled");

    expect(await sh.tick(new Date(t0))).toEqual([]);
    const handed = await sh.tick(new Date(t0 + 61 * MINUTE));
    expect(handed).toHaveLength(1);
    expect(handed[0]!.messageIds).toHaveLength(2);
    expect(await sh.sql("select recipient, status from marketing_message where campaign_id = $1 order by recipient", [k.id])).toEqual([
      { recipient: "a@example.test", status: "queued" },
      { recipient: "b@example.test", status: "queued" },
    ]);

    // Bela withdraws consent after the message was queued: it is skipped at the moment of sending.
    const bela = (await sh.sql<{ id: string }>("select id from customer where email = 'b@example.test'"))[0]!.id;
    await sh.call("customers.update", { id: bela, acceptsMarketing: false });
    await sh.send(handed);
    await sh.send(handed); // the queue delivers the hand-over twice
    const mail = await sh.mailbox();
    expect(mail.map((m) => [m.recipient, m.subject, m.tag])).toEqual([["a@example.test", "Hello Asha", "campaign"]]);
    expect(mail[0]!.text_body).toContain(`Our Diwali sale starts now at ${sh.s.name}.`);
    expect(mail[0]!.text_body).toMatch(new RegExp(`See https://${sh.s.hostname}`));
    expect(mail[0]!.text_body).toMatch(new RegExp(`Unsubscribe: https://${sh.s.hostname}/unsubscribe/[0-9a-f-]{36}\\?k=[0-9a-f]{64}`));

    // A lapsed claim is taken again by a later tick; what was decided stays decided.
    expect(await sh.tick(new Date(t0 + 70 * MINUTE))).toEqual([]);
    const done = (await sh.call("campaigns.get", { id: k.id })) as Record<string, unknown>;
    expect(done).toMatchObject({ status: "sent", recipients: 2, sent: 1, skipped: 1, failed: 0, queued: 0 });
    expect(await sh.sql("select reason from marketing_message where recipient = 'b@example.test'")).toEqual([{ reason: "no marketing consent" }]);
  });

  it("a customer deleted after their message was queued is not emailed; the hand-over still sends the others", async () => {
    const sh = await shop();
    await sh.customer("a@example.test", true, "Asha");
    const gone = await sh.customer("d@example.test", true, "Divya");
    const k = await campaign(sh, {});
    const handed = await sh.tick(new Date(Date.now() + MINUTE));
    expect(handed[0]!.messageIds).toHaveLength(2);
    await sh.call("customers.delete", { id: gone });
    await sh.send(handed);
    expect((await sh.mailbox()).map((m) => m.recipient)).toEqual(["a@example.test"]);
    // The campaign counts them out, and is finished by the next tick as ever.
    expect(await sh.call("campaigns.get", { id: k.id })).toMatchObject({ status: "sending", recipients: 1, sent: 1, skipped: 0, failed: 0, queued: 0 });
    await sh.tick(new Date(Date.now() + 2 * MINUTE));
    expect(await sh.call("campaigns.get", { id: k.id })).toMatchObject({ status: "sent", recipients: 1, sent: 1 });
  });

  it("audiences: buyers are consenting customers with a paid order, non_buyers the others", async () => {
    const sh = await shop();
    await sh.customer("buyer@x.test", true);
    await sh.customer("looker@x.test", true);
    await sh.customer("quiet-buyer@x.test", false);
    await paidOrder(sh, "buyer@x.test");
    await paidOrder(sh, "quiet-buyer@x.test");
    await placeTestOrder(db, sh.s, { email: "looker@x.test" }); // placed, never paid
    const buyers = await campaign(sh, { audience: "buyers" });
    const others = await campaign(sh, { audience: "non_buyers" });
    await sh.tick(new Date(Date.now() + MINUTE));
    const to = async (id: string) => (await sh.sql<{ recipient: string }>("select recipient from marketing_message where campaign_id = $1", [id])).map((r) => r.recipient);
    expect(await to(buyers.id)).toEqual(["buyer@x.test"]);
    expect(await to(others.id)).toEqual(["looker@x.test"]);
  });

  it("a refused address fails that message only; a busy provider leaves the rest queued for a later tick", async () => {
    const sh = await shop();
    for (const n of [1, 2, 3]) await sh.customer(`p${n}@example.test`, true);
    const k = await campaign(sh, {});
    const at = Date.now() + MINUTE;
    const handed = await sh.tick(new Date(at));
    await sh.send(handed, { failFor: ["p1@example.test"], busy: false });
    expect(await sh.sql("select recipient, status from marketing_message where campaign_id = $1 order by recipient", [k.id])).toEqual([
      { recipient: "p1@example.test", status: "failed" },
      { recipient: "p2@example.test", status: "sent" },
      { recipient: "p3@example.test", status: "sent" },
    ]);

    const sh2 = await shop();
    for (const n of [1, 2]) await sh2.customer(`q${n}@example.test`, true);
    const k2 = await campaign(sh2, {});
    await sh2.send(await sh2.tick(new Date(at)), { busy: true });
    expect((await sh2.sql<{ status: string }>("select status from marketing_message where campaign_id = $1", [k2.id])).map((r) => r.status)).toEqual(["queued", "queued"]);
    // The message the provider turned away is free again after its Retry-After; the one never tried keeps its claim.
    const retried = await sh2.tick(new Date(at + MINUTE));
    expect(retried.flatMap((h) => h.messageIds)).toHaveLength(1);
    await sh2.send(retried);
    expect(await sh2.call("campaigns.get", { id: k2.id })).toMatchObject({ status: "sending", sent: 1, queued: 1 });
    await sh2.send(await sh2.tick(new Date(at + 6 * MINUTE)));
    expect(await sh2.call("campaigns.get", { id: k2.id })).toMatchObject({ status: "sending", sent: 2 });
    await sh2.tick(new Date(at + 7 * MINUTE));
    expect(await sh2.call("campaigns.get", { id: k2.id })).toMatchObject({ status: "sent", sent: 2, failed: 0 });
  });

  it("cancel: a scheduled campaign never starts, a sending one sends nothing more; only scheduled ones change", async () => {
    const sh = await shop();
    await sh.customer("x@example.test", true);
    const later = await campaign(sh, { startsAt: new Date(Date.now() + 86_400_000).toISOString() });
    await sh.call("campaigns.update", { id: later.id, subject: "New subject {{first_name}}" });
    await sh.call("campaigns.cancel", { id: later.id });
    expect(await failureText(sh.call("campaigns.cancel", { id: later.id }))).toBe("CONFLICT");
    const now = await campaign(sh, {});
    const handed = await sh.tick(new Date(Date.now() + MINUTE));
    expect(await failureText(sh.call("campaigns.update", { id: now.id, name: "Too late" }))).toBe("CONFLICT");
    await sh.call("campaigns.cancel", { id: now.id });
    await sh.send(handed);
    expect(await sh.mailbox()).toEqual([]);
    expect(await sh.call("campaigns.get", { id: now.id })).toMatchObject({ status: "cancelled", recipients: 1, skipped: 1, sent: 0 });
    expect(await sh.sql("select count(*)::int as n from marketing_message where campaign_id = $1", [later.id])).toEqual([{ n: 0 }]);
  });

  it("input: unknown placeholders and bad audiences are 400 naming the field; Staff may read but not send", async () => {
    const sh = await shop();
    expect(await failureText(campaign(sh, { body: "Hi {{name}}" }))).toBe("BAD_REQUEST body");
    expect(await failureText(campaign(sh, { audience: "everyone" }))).toBe("BAD_REQUEST audience");
    expect(await failureText(campaign(sh, { startsAt: "tomorrow" }))).toBe("BAD_REQUEST startsAt");
    expect(await failureText(sh.call("campaigns.get", { id: crypto.randomUUID() }))).toBe("NOT_FOUND");
    const staff = await addMember(db, sh.s, "staff");
    const asStaff = callerFor(db, staff.userId, sh.s.id);
    expect(await failureText(asStaff("campaigns.list", {}))).toBe("ok");
    expect(await failureText(asStaff("campaigns.create", { name: "x", subject: "x", body: "x", audience: "subscribers" }))).toBe("FORBIDDEN");
    expect(await failureText(asStaff("automations.update", { kind: "first_order_thanks", enabled: true }))).toBe("FORBIDDEN");
  });

  it("one store whose hand-over fails is recorded for its merchant; the other stores' campaigns go on", async () => {
    const shops = [await shop(), await shop(), await shop()];
    for (const sh of shops) {
      await sh.customer("z@example.test", true);
      await campaign(sh, {});
    }
    const at = new Date(Date.now() + MINUTE);
    const handed = [await shops[0]!.tick(at), await shops[1]!.tick(at, true), await shops[2]!.tick(at)];
    expect(handed.map((h) => h.length)).toEqual([1, 0, 1]);
    expect(await shops[1]!.sql("select job, error from job_failure where job = '{marketing}-tick'")).toEqual([{ job: "{marketing}-tick", error: "queue unavailable (test)" }]);
    expect(await shops[0]!.sql("select job from job_failure where job = '{marketing}-tick'")).toEqual([]);
    // The failed store's claim lapses and a later tick hands its message over.
    expect(await shops[1]!.tick(new Date(at.getTime() + 6 * MINUTE))).toHaveLength(1);
  });
});

describe("automations", () => {
  it("abandoned checkout: enrols an unpaid online order once, waits its delay, then one email to a consenting customer", async () => {
    const sh = await shop();
    expect(routesOf("order.placed", {})).toContainEqual({ queue: "marketing", route: "marketing" });
    await sh.call("automations.update", { kind: "abandoned_checkout", enabled: true, delayMinutes: 60 });
    await sh.customer("gone@example.test", true, "Gita");
    const t0 = new Date();
    const placed = (await placeTestOrder(db, sh.s, { email: "gone@example.test", at: t0 })).order;
    const message = await relayed(sh, "order.placed", placed.id);
    expect(await enrolFromEvent(message, { db, log })).toBe("enrolled");
    expect(await enrolFromEvent(message, { db, log })).toBe("duplicate");
    expect(await sh.tick(new Date(t0.getTime() + 30 * MINUTE))).toEqual([]);
    await sh.send(await sh.tick(new Date(t0.getTime() + 61 * MINUTE)));
    const mail = await sh.mailbox();
    expect(mail.map((m) => [m.recipient, m.tag])).toEqual([["gone@example.test", "abandoned_checkout"]]);
    expect(mail[0]!.subject).toBe(`Still thinking it over? Your order #${placed.number} at ${sh.s.name}`);
    expect(mail[0]!.text_body).toMatch(/^Hi Gita,/);
    expect(await sh.call("automations.list", {})).toContainEqual(expect.objectContaining({ kind: "abandoned_checkout", enabled: true, enrolled: 1, sent: 1 }));
  });

  it("abandoned checkout is skipped when the order (or a later one) was paid, without consent, or after it was turned off", async () => {
    const sh = await shop();
    await sh.call("automations.update", { kind: "abandoned_checkout", enabled: true, delayMinutes: 60 });
    await sh.customer("payer@example.test", true);
    await sh.customer("later@example.test", true);
    await sh.customer("noconsent@example.test", false);
    const t0 = new Date();
    const paid = await paidOrder(sh, "payer@example.test", t0);
    const first = (await placeTestOrder(db, sh.s, { email: "later@example.test", at: t0 })).order;
    await paidOrder(sh, "later@example.test", new Date(t0.getTime() + MINUTE));
    const quiet = (await placeTestOrder(db, sh.s, { email: "noconsent@example.test", at: t0 })).order;
    const transfer = (await placeTestOrder(db, sh.s, { email: "payer@example.test", paymentMethod: "manual_transfer", at: t0 })).order;
    for (const o of [paid, first, quiet]) expect(await enrolFromEvent(await relayed(sh, "order.placed", o.id), { db, log })).toBe("enrolled");
    expect(await enrolFromEvent(await relayed(sh, "order.placed", transfer.id), { db, log })).toBe("ignored");
    await sh.send(await sh.tick(new Date(t0.getTime() + 61 * MINUTE)));
    expect(await sh.mailbox()).toEqual([]);
    expect(await sh.sql("select email, status, reason from marketing_enrolment where email <> 'buyer@example.test' order by email")).toEqual([
      { email: "later@example.test", status: "skipped", reason: "converted" },
      { email: "noconsent@example.test", status: "skipped", reason: "no_consent" },
      { email: "payer@example.test", status: "skipped", reason: "converted" },
    ]);

    await sh.call("automations.update", { kind: "abandoned_checkout", enabled: false });
    const off = (await placeTestOrder(db, sh.s, { email: "later@example.test", at: t0 })).order;
    expect(await enrolFromEvent(await relayed(sh, "order.placed", off.id), { db, log })).toBe("ignored");
  });

  it("first-order thank-you: the first paid order of an email only", async () => {
    const sh = await shop();
    await sh.call("automations.update", { kind: "first_order_thanks", enabled: true });
    await sh.customer("new@example.test", true, "Nia");
    const t0 = Date.now();
    const first = await paidOrder(sh, "new@example.test", new Date(t0 - 10 * MINUTE));
    const second = await paidOrder(sh, "new@example.test", new Date(t0 - 5 * MINUTE));
    expect(await enrolFromEvent(await relayed(sh, "order.paid", second.id), { db, log })).toBe("ignored");
    const message = await relayed(sh, "order.paid", first.id);
    expect(await enrolFromEvent(message, { db, log })).toBe("enrolled");
    expect(await enrolFromEvent(message, { db, log })).toBe("duplicate");
    const handed = await sh.tick(new Date(t0 + MINUTE));
    await sh.send(handed);
    await sh.send(handed);
    expect((await sh.mailbox()).map((m) => [m.recipient, m.subject])).toEqual([["new@example.test", `Thank you for your first order at ${sh.s.name}`]]);
  });
});

describe("consent at checkout (double opt-in, decision 0021)", () => {
  const who = "select email, first_name, last_name, city, accepts_marketing, marketing_consent, marketing_consent_source from customer where email_lower = $1";
  const requests = (sh: Shop) => sh.sql("select payload->>'customerId' as id from outbox_event where kind = 'customer.consent_requested' order by seq");

  it("every buyer is a customer; ticking the box only asks, and a campaign never reaches a request that is not confirmed", async () => {
    const sh = await shop();
    await placeTestOrder(db, sh.s, { email: "Fresh@Example.test" });
    expect(await sh.sql(who, ["fresh@example.test"])).toEqual([
      { email: "fresh@example.test", first_name: "Asha", last_name: "Rao", city: "Pune", accepts_marketing: false, marketing_consent: "none", marketing_consent_source: null },
    ]);
    // What the merchant keeps on file is theirs: a later checkout under another name only asks for consent.
    await sh.sql("update customer set city = 'Mumbai' where email_lower = 'fresh@example.test'");
    await placeTestOrder(db, sh.s, { email: "fresh@example.test", name: "Farah Khan Ali", acceptsMarketing: true });
    expect(await sh.sql(who, ["fresh@example.test"])).toEqual([
      { email: "fresh@example.test", first_name: "Asha", last_name: "Rao", city: "Mumbai", accepts_marketing: false, marketing_consent: "pending", marketing_consent_source: "checkout" },
    ]);
    // A new buyer who ticks the box is pending too.
    await placeTestOrder(db, sh.s, { email: "new@example.test", acceptsMarketing: true });
    await sh.customer("sure@example.test", true, "Sur");
    await campaign(sh, {});
    await sh.send(await sh.tick(new Date(Date.now() + MINUTE)));
    expect((await sh.mailbox()).map((m) => m.recipient)).toEqual(["sure@example.test"]);
    // Not ticking never withdraws; one event per real change.
    await placeTestOrder(db, sh.s, { email: "fresh@example.test" });
    expect(await sh.sql(who, ["fresh@example.test"])).toMatchObject([{ marketing_consent: "pending" }]);
    expect(await sh.sql("select kind, payload->>'source' as source, payload->'fields' as fields from outbox_event where kind like 'customer.%' order by seq")).toEqual([
      { kind: "customer.created", source: "checkout", fields: null },
      { kind: "customer.updated", source: "checkout", fields: ["marketingConsent"] },
      { kind: "customer.consent_requested", source: null, fields: null },
      { kind: "customer.created", source: "checkout", fields: null },
      { kind: "customer.consent_requested", source: null, fields: null },
      { kind: "customer.created", source: null, fields: null },
    ]);
  });

  it("a stranger's ticked checkout changes nothing on a confirmed or withdrawn customer: no name, no request, no email", async () => {
    const sh = await shop();
    const known = await sh.customer("known@example.test", true, "Kavya");
    const gone = await sh.customer("gone@example.test", true, "Gita");
    await sh.call("customers.update", { id: gone, acceptsMarketing: false });
    for (const email of ["known@example.test", "gone@example.test"]) {
      await placeTestOrder(db, sh.s, { email, name: "Mallory Stranger", phone: "+919999999999", acceptsMarketing: true });
    }
    expect(await sh.sql("select first_name, phone, marketing_consent, marketing_consent_source from customer where id = any($1::uuid[]) order by email", [[known, gone]])).toEqual([
      { first_name: "Gita", phone: null, marketing_consent: "withdrawn", marketing_consent_source: "staff" },
      { first_name: "Kavya", phone: null, marketing_consent: "confirmed", marketing_consent_source: "staff" },
    ]);
    expect(await requests(sh)).toEqual([]);
    expect(await sh.sql("select kind from outbox_event where kind like 'customer.%' and payload->>'source' = 'checkout'")).toEqual([]);
    // The campaign greets the confirmed customer by the name on file.
    await campaign(sh, {});
    await sh.send(await sh.tick(new Date(Date.now() + MINUTE)));
    expect((await sh.mailbox()).map((m) => [m.recipient, m.subject])).toEqual([["known@example.test", "Hello Kavya"]]);
  });

  it("an unanswered request is asked again at most once a day", async () => {
    const sh = await shop();
    for (let i = 0; i < 2; i++) await placeTestOrder(db, sh.s, { email: "loop@example.test", acceptsMarketing: true });
    expect(await requests(sh)).toHaveLength(1);
    await sh.sql("update customer set marketing_consent_requested_at = now() - interval '25 hours'");
    await placeTestOrder(db, sh.s, { email: "loop@example.test", acceptsMarketing: true });
    expect(await requests(sh)).toHaveLength(2);
    expect(await sh.sql("select r.state, r.source from marketing_consent_record r join customer c on c.id = r.customer_id where c.email_lower = 'loop@example.test' order by r.recorded_at")).toEqual([
      { state: "pending", source: "checkout" },
      { state: "pending", source: "checkout" },
    ]);
  });

  it("consent written straight to the row (an import, the seed) is confirmed and recorded, and reaches campaigns", async () => {
    const sh = await shop();
    await sh.sql("insert into customer (store_id, email, first_name, accepts_marketing, marketing_consent_source) values ($1, 'imported@example.test', 'Ira', true, 'import')", [sh.s.id]);
    expect(await sh.sql("select marketing_consent from customer where email_lower = 'imported@example.test'")).toEqual([{ marketing_consent: "confirmed" }]);
    expect(await sh.sql("select r.state, r.source from marketing_consent_record r join customer c on c.id = r.customer_id where c.email_lower = 'imported@example.test'")).toEqual([
      { state: "confirmed", source: "import" },
    ]);
    await campaign(sh, {});
    await sh.send(await sh.tick(new Date(Date.now() + MINUTE)));
    expect((await sh.mailbox()).map((m) => m.recipient)).toEqual(["imported@example.test"]);
  });
});
