import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createLogger } from "#shared/core/log";
import { randomSecret, sha256Hex } from "#shared/core/tokens";
import { emailLinkSecretFromEnv } from "#shared/mail/links";
import { localMailer } from "#shared/mail/local";
import { sendNotification } from "#shared/notifications/send";
import { providerServices } from "#shared/pipeline/providers";
import { call } from "../../test/call";
import { pdfText } from "../../test/pdf";
import { testDb } from "../../test/harness";
import { paidGatewayOrder, registeredOrderShop } from "../../test/orders";
import { issueCreditNotes } from "#shared/orders/credit-notes";
import { callerFor } from "../../test/procedures";
import worker from "./index";

/** The buyer's tax invoices from their order page (`?k=<key>`), through the real storefront Worker against real Postgres. */
const db = testDb();

/** A registered shop's paid order whose parcel shipped through orders.fulfill, and the order's key (as in the email link). */
async function shippedOrder() {
  const { s, sql } = await registeredOrderShop(db);
  const paid = await paidGatewayOrder(db, s, 1);
  const [parcel] = await sql<{ id: string; total: string }>("select id, subtotal - discount + shipping as total from fulfillment_order where order_id = $1", [paid.orderId]);
  await callerFor(db, s.ownerUserId, s.id, providerServices(env))("orders.fulfill", { orderId: paid.orderId, parcelId: parcel!.id, tracking: { awb: "DLV-123456", courierName: "Delhivery" } });
  const key = randomSecret();
  await sql("update shop_order set email_key_hash = $1 where id = $2", [await sha256Hex(key), paid.orderId]);
  const [invoice] = await sql<{ id: string; number: string }>("select id, number from tax_invoice where order_id = $1", [paid.orderId]);
  const open = (path: string) => call(worker, `http://storefront.test${path}`, { headers: { host: s.hostname }, redirect: "manual" });
  return { s, sql, orderId: paid.orderId, key, invoice: invoice!, total: Number(parcel!.total), open };
}

const rupees = (minor: number) => new Intl.NumberFormat("en-IN", { minimumFractionDigits: 2 }).format(minor / 100);

describe("Order page: tax invoices", () => {
  it("the order's link shows each invoice; its page holds the document and its PDF downloads with the number and total", async () => {
    const { orderId, key, invoice, total, open } = await shippedOrder();
    const base = `/orders/${orderId}/invoices/${invoice.id}`;
    const html = await (await open(`/orders/${orderId}?k=${key}`)).text();
    expect(html).toContain(invoice.number);
    expect(html).toContain(`<a href="${base}?k=${key}">View</a>`);
    expect(html).toContain(`<a href="${base}.pdf?k=${key}">PDF</a>`);

    const view = await open(`${base}?k=${key}`);
    expect(view.status).toBe(200);
    expect(view.headers.get("cache-control")).toBe("private, no-store");
    const doc = await view.text();
    expect(doc).toContain(`No. ${invoice.number}`);
    expect(doc).toContain(rupees(total));

    const pdf = await open(`${base}.pdf?k=${key}`);
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get("content-type")).toBe("application/pdf");
    expect(pdf.headers.get("content-disposition")).toBe(`attachment; filename="${invoice.number.replaceAll("/", "-")}.pdf"`);
    const text = await pdfText(pdf);
    expect(text).toContain(invoice.number);
    expect(text).toContain(rupees(total));
  });

  it("without the key, with a wrong one, or with another order's invoice: the store's 404", async () => {
    const { orderId, key, invoice, open } = await shippedOrder();
    const base = `/orders/${orderId}/invoices/${invoice.id}`;
    expect((await open(base)).status).toBe(404);
    expect((await open(`${base}.pdf`)).status).toBe(404);
    expect((await open(`${base}.pdf?k=${randomSecret()}`)).status).toBe(404);
    expect((await open(`${base}.pdf?k=${key}x`)).status).toBe(404);
    // The shop's other order, opened by its own key, does not open this order's invoice.
    const other = await shippedOrder();
    expect((await other.open(`/orders/${other.orderId}/invoices/${invoice.id}.pdf?k=${other.key}`)).status).toBe(404);
    expect((await open(`/orders/${orderId}/invoices/not-a-uuid?k=${key}`)).status).toBe(404);
  });

  it("the shipped email links the parcel's invoice page under the email's key", async () => {
    const { s, sql, orderId, invoice, open } = await shippedOrder();
    const [event] = await sql<{ id: string; created_at: Date }>("select id, created_at from outbox_event where kind = 'order.fulfilled' and payload->>'orderId' = $1", [orderId]);
    const message = { eventId: event!.id, storeId: s.id, kind: "order.fulfilled", payload: { orderId }, createdAt: event!.created_at.toISOString(), route: "notification:order_shipped" };
    const linkSecret = emailLinkSecretFromEnv(env as unknown as Record<string, unknown>);
    expect(await sendNotification(message, { db, log: createLogger({ test: true }, "error"), mail: { mailer: localMailer(db), fromDomain: "mail.test" }, linkSecret })).toBe("sent");
    const [mail] = await sql<{ text_body: string; html_body: string }>("select text_body, html_body from mailbox_message where idempotency_key = $1", [`${event!.id}:order_shipped`]);
    const url = new URL(new RegExp(`Tax invoice ${invoice.number.replaceAll("/", "\\/")}: (\\S+)`).exec(mail!.text_body)![1]!);
    expect(url.origin).toBe(`https://${s.hostname}`);
    expect(url.pathname).toBe(`/orders/${orderId}/invoices/${invoice.id}`);
    expect(mail!.html_body).toContain(`<a href="${url.href.replaceAll("&", "&#38;")}" style="color:#0969da">Tax invoice ${invoice.number}</a>`);
    const page = await open(`${url.pathname}${url.search}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(`No. ${invoice.number}`);
  });

  it("a refund's credit note is on the order page beside the invoice, its page and PDF under the same key, and nobody else's", async () => {
    const { s, sql, orderId, key, total, open } = await shippedOrder();
    const { refunds } = (await callerFor(db, s.ownerUserId, s.id, providerServices(env))("orders.refund", { orderId })) as { refunds: { id: string }[] };
    await issueCreditNotes(db, s.id, refunds[0]!.id, new Date());
    const [note] = await sql<{ id: string; number: string }>("select id, number from tax_credit_note where order_id = $1", [orderId]);
    const base = `/orders/${orderId}/credit-notes/${note!.id}`;
    const html = await (await open(`/orders/${orderId}?k=${key}`)).text();
    expect(html).toContain("<h2>Credit notes</h2>");
    expect(html).toContain(`<a href="${base}?k=${key}">View</a>`);
    const doc = await (await open(`${base}?k=${key}`)).text();
    expect(doc).toContain(`No. ${note!.number}`);
    expect(doc).toContain(rupees(total));
    const pdf = await open(`${base}.pdf?k=${key}`);
    expect(pdf.headers.get("content-type")).toBe("application/pdf");
    const text = await pdfText(pdf);
    expect(text).toContain(note!.number);
    expect((await open(`${base}.pdf`)).status).toBe(404);
    const other = await shippedOrder();
    expect((await other.open(`/orders/${other.orderId}/credit-notes/${note!.id}?k=${other.key}`)).status).toBe(404);
  });

  it("a crowd of 150 PDF requests at once from one address: 60 PDFs, then 429 with Retry-After, never a 5xx", async () => {
    const { s, orderId, key, invoice } = await shippedOrder();
    const from = `198.51.100.${Math.floor(Math.random() * 250)}`;
    const responses = await Promise.all(
      Array.from({ length: 150 }, () =>
        call(worker, `http://storefront.test/orders/${orderId}/invoices/${invoice.id}.pdf?k=${key}`, { headers: { host: s.hostname, "cf-connecting-ip": from } }),
      ),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((x) => x === 200)).toHaveLength(60);
    expect(statuses.filter((x) => x === 429)).toHaveLength(90);
    expect(responses.find((r) => r.status === 429)!.headers.get("retry-after")).toMatch(/^\d+$/);
    await Promise.all(responses.map((r) => r.body?.cancel()));
  });
});
