import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { marketingTick } from "#shared/jobs/marketing-tick";
import { createLogger } from "#shared/core/log";
import { localMailer } from "#shared/mail/local";
import { emailLinkSecretFromEnv } from "#shared/mail/links";
import { sendMarketingBatch, type SendOrder } from "#shared/marketing/send";
import { call } from "../../test/call";
import { makeStore, testDb, type TestStore } from "../../test/harness";
import { jobContext } from "../../test/jobs";
import { callerFor } from "../../test/procedures";
import { makeShop, Shopper } from "../../test/storefront";
import worker from "./index";

/** A marketing email's unsubscribe link on the storefront (issue 12; docs/marketing.md). */
const db = testDb();
const log = createLogger({ test: true }, "error");

const sql = <R,>(s: TestStore, text: string, values: unknown[] = []) => withStore(db, s.id, (tx) => tx.$client.query(text, values)).then((r) => r.rows as R[]);

/** A store that sent one campaign email to a consenting customer; answers the link in it. */
async function emailed(options: { password?: boolean } = {}) {
  const s = await makeShop(db);
  if (options.password) await sql(s, "update store set storefront_password_hash = 'pbkdf2_sha256$1$x$y' where id = $1", [s.id]);
  const owner = callerFor(db, s.ownerUserId, s.id);
  const customer = (await owner("customers.create", { email: "Reader@Example.test", acceptsMarketing: true })) as { id: string };
  await owner("campaigns.create", { name: "News", subject: "News", body: "Hello", audience: "subscribers" });
  const handed: SendOrder[] = [];
  const queue = { sendBatch: async (m: { body: SendOrder }[]) => void handed.push(...m.map((x) => x.body)) };
  await marketingTick({ ...jobContext(db, new Date(Date.now() + 60_000)), env: { ...env, MARKETING_SEND: queue } }, [s.id]);
  const deps = { db, log, mail: { mailer: localMailer(db), fromDomain: "mail.localhost" }, linkSecret: emailLinkSecretFromEnv(env as unknown as Record<string, unknown>) };
  for (const order of handed) await sendMarketingBatch(order, deps);
  const [mail] = await sql<{ text_body: string }>(s, "select text_body from mailbox_message where tag = 'campaign'");
  const link = new URL(/Unsubscribe: (\S+)/.exec(mail!.text_body)![1]!);
  expect(link.host).toBe(s.hostname);
  return { s, customerId: customer.id, path: link.pathname + link.search };
}

const page = async (host: string, path: string, init: RequestInit = {}) => {
  const res = await call(worker, `http://storefront.test${path}`, { ...init, headers: { host, ...(init.headers as Record<string, string>) } });
  return { status: res.status, headers: res.headers, html: await res.text() };
};

const consent = (s: TestStore, id: string) =>
  sql<{ accepts_marketing: boolean; marketing_consent_source: string | null }>(s, "select accepts_marketing, marketing_consent_source from customer where id = $1", [id]);

describe("the unsubscribe link", () => {
  it("GET only asks; POST (even a mail client's one-click, cross-site) withdraws consent once, with its event", async () => {
    const { s, customerId, path } = await emailed();
    const asked = await page(s.hostname, path);
    expect(asked.status).toBe(200);
    expect(asked.headers.get("cache-control")).toBe("no-store");
    expect(asked.html).toContain("Stop sending news and offers to <strong>r•••@example.test</strong>?");
    expect(await consent(s, customerId)).toEqual([{ accepts_marketing: true, marketing_consent_source: "staff" }]);

    const oneClick = { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "cross-site" }, body: "List-Unsubscribe=One-Click" };
    const done = await page(s.hostname, path, oneClick);
    expect(done.status).toBe(200);
    expect(done.html).toContain("r•••@example.test is unsubscribed.");
    expect(await consent(s, customerId)).toEqual([{ accepts_marketing: false, marketing_consent_source: "unsubscribe_link" }]);
    await page(s.hostname, path, oneClick);
    expect(await sql(s, "select payload->>'source' as source from outbox_event where kind = 'customer.updated' and payload->>'customerId' = $1", [customerId])).toEqual([
      { source: "unsubscribe_link" },
    ]);
    expect((await page(s.hostname, path)).html).toContain("gets no marketing emails from");
  });

  it("a wrong or missing key, a made-up message and another store's host are the same 404, changing nothing", async () => {
    const { s, customerId, path } = await emailed();
    const other = await makeStore(db);
    const [id] = path.split("?")[0]!.split("/").slice(-1);
    for (const [host, p] of [
      [s.hostname, `/unsubscribe/${id}?k=${"0".repeat(64)}`],
      [s.hostname, `/unsubscribe/${id}`],
      [s.hostname, `/unsubscribe/${crypto.randomUUID()}${path.slice(path.indexOf("?"))}`],
      [s.hostname, `/unsubscribe/not-a-uuid?k=${"<script>".repeat(20)}`],
      [other.hostname, path],
    ] as const) {
      const res = await page(host, p, { method: "POST" });
      expect(res.status, `${host} ${p}`).toBe(404);
      expect(res.html).toContain("This link does not work");
    }
    expect(await consent(s, customerId)).toEqual([{ accepts_marketing: true, marketing_consent_source: "staff" }]);
  });

  it("works while the storefront password is on (every other page is the password page)", async () => {
    const { s, customerId, path } = await emailed({ password: true });
    expect((await page(s.hostname, "/products")).html).toContain('type="password"');
    expect((await page(s.hostname, path, { method: "POST" })).status).toBe(200);
    expect(await consent(s, customerId)).toEqual([{ accepts_marketing: false, marketing_consent_source: "unsubscribe_link" }]);
  });
});

describe("consent on the checkout page", () => {
  it("offers an unticked 'Email me news and offers'; ticked, the customer is made with consent waiting for confirmation", async () => {
    const s = await makeShop(db);
    await sql(s, "update location set state = 'IN-MH'");
    const buyer = new Shopper(s.hostname);
    await buyer.add(s.variantId, 1);
    const form = await page(s.hostname, "/checkout", { headers: { cookie: `wc_cart=${buyer.cookie}` } });
    expect(form.html).toMatch(/<input type="checkbox" name="acceptsMarketing" value="yes"\/?> Email me news and offers/);
    const placed = await buyer.form("/checkout", {
      email: "Tick@Example.test",
      "shippingAddress.name": "Tara Iyer",
      "shippingAddress.line1": "1 Road",
      "shippingAddress.city": "Pune",
      "shippingAddress.state": "IN-MH",
      "shippingAddress.postalCode": "411001",
      "shippingAddress.country": "IN",
      paymentMethod: "gateway",
      acceptsMarketing: "yes",
    });
    expect(placed.status).toBe(303);
    // Double opt-in (decision 0021): the box only asks; the emailed link confirms (./consent.test.ts).
    expect(await sql(s, "select email, first_name, accepts_marketing, marketing_consent, marketing_consent_source from customer where email = 'tick@example.test'")).toEqual([
      { email: "tick@example.test", first_name: "Tara", accepts_marketing: false, marketing_consent: "pending", marketing_consent_source: "checkout" },
    ]);
  });
});
