import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { extractText, getDocumentProxy } from "unpdf";
import { providerServices } from "#shared/pipeline/providers";
import { page, sessionFor } from "../../../test/admin";
import { testDb } from "../../../test/harness";
import { orderShop, paidGatewayOrder } from "../../../test/orders";
import { callerFor } from "../../../test/procedures";

/** An order's tax invoices on the admin order page: the block, the printable page and the PDF, through the real routes. */
const db = testDb();

const inr = (minor: number) => new Intl.NumberFormat("en-IN", { minimumFractionDigits: 2 }).format(minor / 100);

/** A shop whose Maharashtra location is registered, with a paid order whose parcel shipped through orders.fulfill. */
async function shippedOrder() {
  const { s, sql } = await orderShop(db);
  await sql("update location set gstin = '27ABCDE1234F1Z0', legal_name = 'Saanjh Crafts Private Limited', address_line1 = 'Unit 4, Laxmi Industrial Estate', city = 'Pune', postal_code = '411028'");
  const paid = await paidGatewayOrder(db, s, 2);
  const [parcel] = await sql<{ id: string; total: string }>("select id, subtotal - discount + shipping as total from fulfillment_order where order_id = $1", [paid.orderId]);
  await callerFor(db, s.ownerUserId, s.id, providerServices(env))("orders.fulfill", { orderId: paid.orderId, parcelId: parcel!.id, tracking: { awb: "DLV-123456", courierName: "Delhivery" } });
  const [invoice] = await sql<{ id: string; number: string }>("select id, number from tax_invoice where order_id = $1", [paid.orderId]);
  return { s, paid, invoice: invoice!, total: Number(parcel!.total) };
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
    expect(doc).toContain(`<title>Invoice ${invoice.number}`);
    expect(doc).toContain('<article class="document">');
    expect(doc).toContain(`No. ${invoice.number}`);
    expect(doc).toContain(inr(total));

    const pdf = await page(owner, `${base}.pdf`);
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get("content-type")).toBe("application/pdf");
    expect(pdf.headers.get("content-disposition")).toBe(`attachment; filename="${invoice.number.replaceAll("/", "-")}.pdf"`);
    const bytes = new Uint8Array(await pdf.arrayBuffer());
    const { text } = await extractText(await getDocumentProxy(bytes.slice()), { mergePages: true });
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
});
