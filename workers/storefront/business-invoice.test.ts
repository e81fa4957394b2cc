import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { DocumentModel } from "#shared/documents/model";
import { withStore } from "#shared/db/with-store";
import { applyPaymentStatus } from "#shared/orders/routines";
import { localPaymentId } from "#shared/payments/local-protocol";
import { providerServices } from "#shared/pipeline/providers";
import { call } from "../../test/call";
import { testDb } from "../../test/harness";
import { MH_GSTIN, registeredOrderShop } from "../../test/orders";
import { pdfText } from "../../test/pdf";
import { callerFor } from "../../test/procedures";
import { Shopper } from "../../test/storefront";
import worker from "./index";

/**
 * A business purchase to its tax invoice (issue 22 items 1 and 2; CGST Rules, rule 46(e)): the GSTIN and
 * legal name the buyer gives at checkout are the invoice's recipient, in its frozen document, on its page
 * and in its PDF, through the real storefront Worker, orders.fulfill and real Postgres.
 */
const db = testDb();

const BUYER_GSTIN = "27AAPFU0939F1ZV";
const address = { name: "Asha Rao", line1: "12 MG Road", city: "Pune", state: "IN-MH", postalCode: "411001", country: "IN" };

describe("a business purchase's tax invoice", () => {
  it("names the buyer's GSTIN and legal name as the recipient: the model, the shopper's invoice page and its PDF", async () => {
    const { s, sql } = await registeredOrderShop(db);
    const buyer = new Shopper(s.hostname);
    await buyer.add(s.variantId, 1);
    const res = await buyer.send("POST", "/api/checkout", {
      email: "asha@example.test",
      shippingAddress: address,
      paymentMethod: "gateway",
      gstin: ` ${BUYER_GSTIN.toLowerCase()}`,
      legalName: "Rao Traders LLP",
    });
    expect(res.status).toBe(201);
    const orderId = (res.body.order as { id: string }).id;
    const key = new URL(String(res.body.orderUrl), "http://x").searchParams.get("k")!;

    // The gateway captures the payment; the merchant ships the parcel, which issues its invoice.
    const [attempt] = await sql<{ id: string; provider_ref: string }>("select id, provider_ref from payment_attempt where order_id = $1", [orderId]);
    const paymentId = await localPaymentId(attempt!.provider_ref);
    await withStore(db, s.id, (tx) => applyPaymentStatus(tx, attempt!.id, "captured", "webhook", { providerPaymentId: paymentId }));
    const [parcel] = await sql<{ id: string }>("select id from fulfillment_order where order_id = $1", [orderId]);
    await callerFor(db, s.ownerUserId, s.id, providerServices(env))("orders.fulfill", { orderId, parcelId: parcel!.id, tracking: { awb: "DLV-778812", courierName: "Delhivery" } });

    const [invoice] = await sql<{ id: string; number: string; gstin: string; document: DocumentModel }>("select id, number, gstin, document from tax_invoice where order_id = $1", [orderId]);
    expect(invoice!.gstin).toBe(MH_GSTIN);
    expect(invoice!.document.recipient).toEqual({
      name: "Rao Traders LLP",
      address: ["12 MG Road", "Pune 411001", "Maharashtra, India"],
      gstin: BUYER_GSTIN,
      state: { name: "Maharashtra", code: "27" },
    });
    expect(invoice!.document.supplier.gstin).toBe(MH_GSTIN);

    const base = `http://storefront.test/orders/${orderId}/invoices/${invoice!.id}`;
    const open = (url: string) => call(worker, url, { headers: { host: s.hostname } });
    const page = await open(`${base}?k=${key}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(`<h2>Recipient</h2><address><strong>Rao Traders LLP</strong><br>12 MG Road<br>Pune 411001<br>Maharashtra, India<br>GSTIN: ${BUYER_GSTIN}<br>State: `);
    expect(html).toMatch(new RegExp(`<h2>Supplier</h2><address><strong>Saanjh Crafts Private Limited</strong>(<br>[^<]+)+<br>GSTIN: ${MH_GSTIN}<br>`));

    const pdf = await open(`${base}.pdf?k=${key}`);
    expect(pdf.headers.get("content-type")).toBe("application/pdf");
    const text = await pdfText(pdf);
    expect(text).toContain(invoice!.number);
    expect(text).toContain("Rao Traders LLP");
    expect(text).toContain(`GSTIN: ${BUYER_GSTIN}`);
    expect(text).toContain(`GSTIN: ${MH_GSTIN}`);
  });
});
