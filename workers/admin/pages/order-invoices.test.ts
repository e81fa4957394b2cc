import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { providerServices } from "#shared/pipeline/providers";
import { page, sessionFor } from "../../../test/admin";
import { pdfText } from "../../../test/pdf";
import { testDb } from "../../../test/harness";
import { orderShop, paidGatewayOrder, registeredOrderShop } from "../../../test/orders";
import { issueCreditNotes } from "#shared/orders/credit-notes";
import { callerFor } from "../../../test/procedures";

/** An order's tax invoices on the admin order page: the block, the printable page and the PDF, through the real routes. */
const db = testDb();

const inr = (minor: number) => new Intl.NumberFormat("en-IN", { minimumFractionDigits: 2 }).format(minor / 100);

/** A shop whose Maharashtra location is registered, with a paid order whose parcel shipped through orders.fulfill. */
async function shippedOrder() {
  const { s, sql } = await registeredOrderShop(db);
  const paid = await paidGatewayOrder(db, s, 2);
  const [parcel] = await sql<{ id: string; total: string }>("select id, subtotal - discount + shipping as total from fulfillment_order where order_id = $1", [paid.orderId]);
  await callerFor(db, s.ownerUserId, s.id, providerServices(env))("orders.fulfill", { orderId: paid.orderId, parcelId: parcel!.id, tracking: { awb: "DLV-123456", courierName: "Delhivery" } });
  const [invoice] = await sql<{ id: string; number: string }>("select id, number from tax_invoice where order_id = $1", [paid.orderId]);
  return { s, sql, paid, invoice: invoice!, total: Number(parcel!.total) };
}

describe("Order page: tax invoices", () => {
  it("lists each invoice with View (the frozen document in the page shell) and PDF (its number and total in the text)", async () => {
    const { s, paid, invoice, total } = await shippedOrder();
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const base = `/orders/${paid.orderId}/invoices/${invoice.id}`;
    const html = await (await page(owner, `/orders/${paid.orderId}`)).text();
    const block = html.slice(html.indexOf('<section id="invoices"'));
    expect(block).toContain(invoice.number);
    expect(block).toContain(`<a href="${base}">View</a>`);
    expect(block).toContain(`<a href="${base}.pdf">PDF</a>`);

    const view = await page(owner, base);
    expect(view.status).toBe(200);
    const doc = await view.text();
    expect(doc).toContain(`<title>Tax invoice ${invoice.number}`);
    expect(doc).toContain('<article class="document">');
    expect(doc).toContain(`No. ${invoice.number}`);
    expect(doc).toContain(inr(total));

    const pdf = await page(owner, `${base}.pdf`);
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get("content-type")).toBe("application/pdf");
    expect(pdf.headers.get("content-disposition")).toBe(`attachment; filename="${invoice.number.replaceAll("/", "-")}.pdf"`);
    const text = await pdfText(pdf);
    expect(text).toContain(invoice.number);
    expect(text).toContain(inr(total));
  });

  it("another store's invoice, an unknown invoice and a malformed id are 404", async () => {
    const { paid, invoice } = await shippedOrder();
    const other = await orderShop(db);
    const stranger = await sessionFor(db, other.s.ownerUserId, other.s.id);
    const base = `/orders/${paid.orderId}/invoices/${invoice.id}`;
    expect((await page(stranger, base)).status).toBe(404);
    expect((await page(stranger, `${base}.pdf`)).status).toBe(404);
    const { s: s2, invoice: own } = await shippedOrder();
    const owner2 = await sessionFor(db, s2.ownerUserId, s2.id);
    // Its own order with another order's invoice id: not found.
    const theirs = await page(owner2, `/orders/${paid.orderId}/invoices/${own.id}`);
    expect(theirs.status).toBe(404);
    expect((await page(owner2, `/orders/${paid.orderId}/invoices/not-a-uuid.pdf`)).status).toBe(404);
  });

  it("a refund's credit note is listed under the invoices, with its page and PDF; another store's is 404", async () => {
    const { s, sql, paid, total } = await shippedOrder();
    const call = callerFor(db, s.ownerUserId, s.id, providerServices(env));
    const { refunds } = (await call("orders.refund", { orderId: paid.orderId, reason: "Damaged" })) as { refunds: { id: string }[] };
    await issueCreditNotes(db, s.id, refunds[0]!.id, new Date());
    const [note] = await sql<{ id: string; number: string }>("select id, number from tax_credit_note where order_id = $1", [paid.orderId]);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const base = `/orders/${paid.orderId}/credit-notes/${note!.id}`;
    const html = await (await page(owner, `/orders/${paid.orderId}`)).text();
    const block = html.slice(html.indexOf('<section id="invoices"'));
    expect(block).toContain("<h3>Credit notes</h3>");
    expect(block).toContain(`<a href="${base}">View</a>`);
    const doc = await (await page(owner, base)).text();
    expect(doc).toContain(`<title>Credit note ${note!.number}`);
    expect(doc).toContain("Against invoice");
    expect(doc).toContain(inr(total));
    const pdf = await page(owner, `${base}.pdf`);
    expect(pdf.headers.get("content-type")).toBe("application/pdf");
    const text = await pdfText(pdf);
    expect(text).toContain(note!.number);
    expect(text).toContain(inr(total));
    // An invoice id under credit-notes, another store's session: not found.
    const [invoice] = await sql<{ id: string }>("select id from tax_invoice where order_id = $1", [paid.orderId]);
    expect((await page(owner, `/orders/${paid.orderId}/credit-notes/${invoice!.id}`)).status).toBe(404);
    const other = await orderShop(db);
    expect((await page(await sessionFor(db, other.s.ownerUserId, other.s.id), base)).status).toBe(404);
  });
});
