import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import type { RoutedEvent } from "#shared/events/routes";
import { routesOf } from "#shared/jobs/routing";
import { createLogger } from "#shared/core/log";
import { localMailer } from "#shared/mail/local";
import { emailLinkSecretFromEnv } from "#shared/mail/links";
import { sendNotification } from "#shared/notifications/send";
import { call } from "../../test/call";
import { makeStore, testDb, type TestStore } from "../../test/harness";
import { placeTestOrder } from "../../test/orders";
import { newTrace, tripsOf } from "../../test/proxy";
import { callerFor } from "../../test/procedures";
import { makeShop, type ShopStore } from "../../test/storefront";
import worker from "./index";

/**
 * Double opt-in (issue 20 item 4; decision 0021): a ticked checkout asks, the confirmation email carries a
 * signed link, its page's GET asks and its POST confirms; only then is the consent confirmed.
 */
const db = testDb();
const log = createLogger({ test: true }, "error");
const linkSecret = emailLinkSecretFromEnv(env as unknown as Record<string, unknown>);
const mail = { mailer: localMailer(db), fromDomain: "mail.localhost" };
const proxy = (env as unknown as { DB_WS_PROXY: string }).DB_WS_PROXY;

const sql = <R,>(s: TestStore, text: string, values: unknown[] = []) => withStore(db, s.id, (tx) => tx.$client.query(text, values)).then((r) => r.rows as R[]);

const page = async (host: string, path: string, init: RequestInit = {}) => {
  const res = await call(worker, `http://storefront.test${path}`, { ...init, headers: { host, ...(init.headers as Record<string, string>) } });
  return { status: res.status, headers: res.headers, html: await res.text() };
};

const consentOf = (s: TestStore, email: string) =>
  sql<{ id: string; accepts_marketing: boolean; marketing_consent: string; marketing_consent_source: string | null }>(
    s,
    "select id, accepts_marketing, marketing_consent, marketing_consent_source from customer where email_lower = $1",
    [email],
  ).then((rows) => rows[0]!);

/** The store's consent request events, relayed to their notification route as the relay would. */
async function requests(s: TestStore): Promise<RoutedEvent[]> {
  const rows = await sql<{ id: string; kind: string; payload: Record<string, unknown>; created_at: Date }>(
    s,
    "select id, kind, payload, created_at from outbox_event where kind = 'customer.consent_requested' order by seq",
  );
  return rows.map((r) => {
    const route = routesOf(r.kind, r.payload).find((x) => x.queue === "notifications")!;
    return { eventId: r.id, storeId: s.id, kind: r.kind, payload: r.payload, createdAt: r.created_at.toISOString(), route: route.route };
  });
}

const confirmationMails = (s: TestStore) =>
  sql<{ recipient: string; subject: string; text_body: string }>(s, "select recipient, subject, text_body from mailbox_message where tag = 'marketing_consent' order by created_at");

/** A ticked checkout by `email` and its confirmation email sent; answers the link's path. */
async function asked(s: ShopStore, email = "reader@example.test"): Promise<string> {
  await placeTestOrder(db, s, { email, acceptsMarketing: true });
  const [message] = (await requests(s)).slice(-1);
  expect(await sendNotification(message!, { db, log, mail, linkSecret })).toBe("sent");
  const [sent] = (await confirmationMails(s)).slice(-1);
  const link = new URL(/Confirm: (\S+)/.exec(sent!.text_body)![1]!);
  expect(link.host).toBe(s.hostname);
  return link.pathname + link.search;
}

describe("the marketing consent confirmation link", () => {
  it("a ticked checkout is pending with one email; the GET only asks; the POST confirms once, with its event and records", async () => {
    const s = await makeShop(db);
    await placeTestOrder(db, s, { email: "Reader@Example.test", acceptsMarketing: true });
    expect(await consentOf(s, "reader@example.test")).toMatchObject({ accepts_marketing: false, marketing_consent: "pending", marketing_consent_source: "checkout" });
    const [message] = await requests(s);
    expect(message!.route).toBe("notification:marketing_consent");
    expect(await sendNotification(message!, { db, log, mail, linkSecret })).toBe("sent");
    expect(await sendNotification(message!, { db, log, mail, linkSecret })).toBe("duplicate");
    const mails = await confirmationMails(s);
    expect(mails.map((m) => [m.recipient, m.subject])).toEqual([["reader@example.test", `Confirm you want news and offers from ${s.name} · ${s.name}`]]);
    // The name typed at checkout is not in it: it may be a stranger's.
    expect(mails[0]!.text_body).not.toContain("Asha");
    const link = new URL(/Confirm: (\S+)/.exec(mails[0]!.text_body)![1]!);
    const path = link.pathname + link.search;
    expect(path).toMatch(/^\/consent\/[0-9a-f-]{36}\?k=[0-9a-f]{64}$/);
    expect(JSON.stringify(await sql(s, "select * from customer"))).not.toContain(link.searchParams.get("k"));

    const shown = await page(s.hostname, path);
    expect(shown.status).toBe(200);
    expect(shown.headers.get("cache-control")).toBe("no-store");
    expect(shown.html).toContain("Send news and offers from");
    expect(shown.html).toContain("r•••@example.test");
    expect(await consentOf(s, "reader@example.test")).toMatchObject({ marketing_consent: "pending" });

    const done = await page(s.hostname, path, { method: "POST" });
    expect(done.status).toBe(200);
    expect(done.html).toContain("r•••@example.test is subscribed.");
    const customer = await consentOf(s, "reader@example.test");
    expect(customer).toMatchObject({ accepts_marketing: true, marketing_consent: "confirmed", marketing_consent_source: "confirmation_link" });
    expect((await page(s.hostname, path, { method: "POST" })).html).toContain('data-consent="confirmed"');
    expect(await sql(s, "select payload->>'source' as source from outbox_event where kind = 'customer.updated' and payload->>'customerId' = $1", [customer.id])).toEqual([
      { source: "confirmation_link" },
    ]);
    expect(await sql(s, "select state, source from marketing_consent_record where customer_id = $1 order by recorded_at", [customer.id])).toEqual([
      { state: "pending", source: "checkout" },
      { state: "confirmed", source: "confirmation_link" },
    ]);
  });

  it("a wrong or missing key, a made-up customer and another store's host are the same 404, confirming nothing", async () => {
    const s = await makeShop(db);
    const path = await asked(s);
    const other = await makeStore(db);
    const [id] = path.split("?")[0]!.split("/").slice(-1);
    for (const [host, p] of [
      [s.hostname, `/consent/${id}?k=${"0".repeat(64)}`],
      [s.hostname, `/consent/${id}`],
      [s.hostname, `/consent/${crypto.randomUUID()}${path.slice(path.indexOf("?"))}`],
      [s.hostname, `/consent/not-a-uuid?k=${"<script>".repeat(20)}`],
      [other.hostname, path],
    ] as const) {
      for (const method of ["GET", "POST"]) {
        const res = await page(host, p, { method });
        expect(res.status, `${method} ${host} ${p}`).toBe(404);
        expect(res.html).toContain("This link does not work");
      }
    }
    expect(await consentOf(s, "reader@example.test")).toMatchObject({ accepts_marketing: false, marketing_consent: "pending" });
  });

  it("an expired link and one replaced by a later request confirm nothing", async () => {
    const s = await makeShop(db);
    const first = await asked(s);
    // A day later the shopper ticks the box again: a new request and a new link; the first no longer works.
    await sql(s, "update customer set marketing_consent_requested_at = now() - interval '25 hours'");
    const second = await asked(s);
    expect(second).not.toBe(first);
    expect((await page(s.hostname, first, { method: "POST" })).status).toBe(404);
    // Seven days after its request the link only says so.
    await sql(s, "update customer set marketing_consent_requested_at = now() - interval '8 days'");
    const late = await page(s.hostname, second, { method: "POST" });
    expect(late.status).toBe(200);
    expect(late.html).toContain('data-consent="closed"');
    expect(await consentOf(s, "reader@example.test")).toMatchObject({ accepts_marketing: false, marketing_consent: "pending" });
  });

  it("works while the storefront password is on", async () => {
    const s = await makeShop(db);
    await sql(s, "update store set storefront_password_hash = 'pbkdf2_sha256$1$x$y' where id = $1", [s.id]);
    const path = await asked(s);
    expect((await page(s.hostname, "/products")).html).toContain('type="password"');
    expect((await page(s.hostname, path)).html).toContain("Yes, send me news and offers");
    expect((await page(s.hostname, path, { method: "POST" })).status).toBe(200);
    expect(await consentOf(s, "reader@example.test")).toMatchObject({ marketing_consent: "confirmed" });
  });

  it("round trips: the page is one, a confirmation two (the key checked in constant time between them)", async () => {
    const s = await makeShop(db);
    const path = await asked(s);
    await page(s.hostname, "/"); // warms the host and the store's facts
    const trips = async (method: string) => {
      const trace = newTrace();
      const res = await page(s.hostname, path, { method, headers: { "x-commerce-trace": trace } });
      expect(res.status).toBe(200);
      return (await tripsOf(proxy, trace)).turns;
    };
    expect(await trips("GET")).toBe(1);
    expect(await trips("POST")).toBe(2);
  });

  it("sends no email for a request answered before its email went out", async () => {
    const s = await makeShop(db);
    await placeTestOrder(db, s, { email: "quick@example.test", acceptsMarketing: true });
    const { id } = await consentOf(s, "quick@example.test");
    await callerFor(db, s.ownerUserId, s.id)("customers.update", { id, acceptsMarketing: true });
    const [message] = await requests(s);
    expect(await sendNotification(message!, { db, log, mail, linkSecret })).toBe("skipped");
    expect(await confirmationMails(s)).toEqual([]);
  });
});
