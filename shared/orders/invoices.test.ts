import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import type { DocumentModel } from "#shared/documents/model";
import { providerServices } from "#shared/pipeline/providers";
import { parcelTax, type IndianStateCode } from "#shared/rules/gst";
import { financialYear, issueInvoice } from "./invoices";
import { testDb } from "../../test/harness";
import { address, KA_GSTIN, MH_GSTIN, paidGatewayOrder, placeTestOrder, registeredOrderShop } from "../../test/orders";
import { placeOrder } from "#shared/orders/checkout";
import { newCartToken } from "#shared/storefront/cart";
import { addLine, createCart } from "#shared/storefront/cart-changes";
import { callerFor } from "../../test/procedures";

const db = testDb();
// A Database keeps one connection: racing shipments each get their own (as concurrent requests do).
const racers = Array.from({ length: 10 }, () => testDb());

const registeredShop = () => registeredOrderShop(db);

/**
 * An order shipping to Maharashtra with one ₹10.00 unit (18 %) in each parcel, a parcel per origin given,
 * its parcels' money as checkout stores it (shared/rules/gst.ts parcelTax).
 */
async function parcelsOrder(storeId: string, origins: readonly { locationId: string; state: IndianStateCode }[]) {
  return withStore(db, storeId, async (tx) => {
    const c = tx.$client;
    const [v] = (await c.query<{ id: string }>("select id from product_variant limit 1")).rows;
    const n = origins.length;
    const [o] = (
      await c.query<{ id: string }>(
        `insert into shop_order (store_id, number, email, shipping_address, ship_to_state, payment_method, currency, subtotal, total, tax)
         values ($1, 5000 + (select count(*) from shop_order), 'buyer@example.test', $2, 'IN-MH', 'gateway', 'INR', $3, $3, 0) returning id`,
        [storeId, JSON.stringify({ name: "Meera Iyer", line1: "Flat 12B, Sea Breeze", city: "Mumbai", state: "IN-MH", postalCode: "400050", country: "IN" }), 1000 * n],
      )
    ).rows;
    const [line] = (
      await c.query<{ id: string }>(
        "insert into order_line (store_id, order_id, variant_id, product_title, variant_title, tax_class, quantity, unit_price, line_total) values ($1, $2, $3, 'Kurta', 'Default', 'gst_18', $4, 1000, $5) returning id",
        [storeId, o!.id, v!.id, n, 1000 * n],
      )
    ).rows;
    const parcelIds: string[] = [];
    for (const [position, origin] of origins.entries()) {
      const t = parcelTax({ lines: [{ taxClass: "gst_18", amount: 1000, quantity: 1 }], shipping: 0, originState: origin.state, destinationState: "IN-MH", rates: { gst_18: 1800 } as never });
      const [p] = (
        await c.query<{ id: string }>(
          "insert into fulfillment_order (store_id, order_id, location_id, origin_state, subtotal, tax, cgst, sgst, igst, position) values ($1, $2, $3, $4, 1000, $5, $6, $7, $8, $9) returning id",
          [storeId, o!.id, origin.locationId, origin.state, t.tax, t.cgst, t.sgst, t.igst, position],
        )
      ).rows;
      await c.query("insert into fulfillment_order_line (store_id, fulfillment_order_id, order_line_id, quantity, reserved) values ($1, $2, $3, 1, 0)", [storeId, p!.id, line!.id]);
      parcelIds.push(p!.id);
    }
    return { orderId: o!.id, parcelIds };
  });
}

const issued = (storeId: string, orderId: string, parcelId: string, now: Date) => withStore(db, storeId, (tx) => issueInvoice(tx, { orderId, parcelId }, now));

describe("tax invoices", () => {
  it("financial years run 1 April to 31 March in India", () => {
    expect(financialYear(new Date("2026-03-31T18:29:59Z"))).toBe("2025-26"); // 31 Mar 23:59:59 IST
    expect(financialYear(new Date("2026-03-31T18:30:00Z"))).toBe("2026-27"); // 1 Apr 00:00 IST
    expect(financialYear(new Date("2099-12-31T00:00:00Z"))).toBe("2099-00");
  });

  it("shipping a parcel issues its invoice in the same unit: every rule-46 field, CGST + SGST within the state, its totals the parcel's", async () => {
    const { s, sql } = await registeredShop();
    await sql("update product set hsn_code = '6211' where id = (select product_id from product_variant where id = $1)", [s.variantId]);
    const paid = await paidGatewayOrder(db, s, 2);
    const call = callerFor(db, s.ownerUserId, s.id, providerServices(env));
    const [parcel] = await sql<{ id: string; tax: string; cgst: string; sgst: string; igst: string; total: string }>(
      "select id, tax, cgst, sgst, igst, subtotal - discount + shipping as total from fulfillment_order where order_id = $1",
      [paid.orderId],
    );
    expect(((await call("orders.invoices", { id: paid.orderId })) as { invoices: unknown[] }).invoices).toEqual([]);
    await call("orders.fulfill", { orderId: paid.orderId, parcelId: parcel!.id, tracking: { awb: "DLV-123456", courierName: "Delhivery" } });
    const { invoices } = (await call("orders.invoices", { id: paid.orderId })) as {
      invoices: { number: string; gstin: string; financialYear: string; parcelId: string; issuedAt: string; document: DocumentModel }[];
    };
    const fy = financialYear(new Date());
    expect(invoices).toHaveLength(1);
    const [invoice] = invoices;
    expect(invoice).toMatchObject({ number: `INV/${fy.slice(2)}/000001`, gstin: MH_GSTIN, financialYear: fy, parcelId: parcel!.id });
    const d = invoice!.document;
    // Rule 46: (a) supplier, (b) number, (c) date, (d)-(f) recipient with address and state, (h)-(m) the lines, (n) place of supply, (p) reverse charge, (q) signatory.
    expect(d).toMatchObject({
      title: "Tax invoice",
      number: invoice!.number,
      date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      supplier: { name: "Saanjh Crafts Private Limited", gstin: MH_GSTIN, state: { name: "Maharashtra", code: "27" }, address: expect.arrayContaining(["Unit 4, Laxmi Industrial Estate"]) },
      recipient: { name: "Asha Rao", gstin: null, state: { name: "Maharashtra", code: "27" }, address: expect.arrayContaining(["12 MG Road"]) },
      placeOfSupply: { name: "Maharashtra", code: "27" },
      stateTaxLabel: "SGST",
    });
    expect(d.columns).toEqual(expect.arrayContaining(["description", "quantity", "unit", "taxableValue", "rate", "cgst", "sgst", "total"]));
    expect(d.columns).not.toContain("igst");
    // Rule 46(g): the product's HSN code on its lines.
    expect(d.columns).toContain("hsn");
    expect(d.lines[0]).toMatchObject({ hsn: "6211" });
    for (const line of d.lines) expect(Object.keys(line)).toEqual(expect.arrayContaining(["description", "quantity", "unit", "taxableValue", "rateBp", "cgst", "sgst", "igst", "total"]));
    expect(d.notes).toEqual(expect.arrayContaining([expect.stringMatching(/reverse charge/), expect.stringMatching(/authorised signatory: Saanjh Crafts/)]));
    // The invoice's totals are the parcel's stored money, line by line too.
    const total = (label: string) => d.totals!.find((t) => t.label === label)?.amount;
    const sum = (key: "cgst" | "sgst" | "igst" | "total" | "taxableValue") => d.lines.reduce((n, l) => n + (l[key] ?? 0), 0);
    expect({ cgst: total("CGST"), sgst: total("SGST"), total: total("Invoice total"), tax: total("CGST")! + total("SGST")! }).toEqual({
      cgst: Number(parcel!.cgst),
      sgst: Number(parcel!.sgst),
      total: Number(parcel!.total),
      tax: Number(parcel!.tax),
    });
    expect(Number(parcel!.cgst)).toBeGreaterThan(0);
    expect({ cgst: sum("cgst"), sgst: sum("sgst"), igst: sum("igst"), total: sum("total") }).toEqual({ cgst: Number(parcel!.cgst), sgst: Number(parcel!.sgst), igst: 0, total: Number(parcel!.total) });
    expect(sum("taxableValue")).toBe(total("Taxable value"));
    // Frozen: an issued invoice is not changed.
    await expect(sql("update tax_invoice set number = 'INV/X/1'")).rejects.toThrow(/cannot be changed/);
  });

  it("a parcel shipped across states is charged IGST; a location with no GSTIN issues none, and says why", async () => {
    const { s, sql } = await registeredShop();
    const placed = await placeTestOrder(db, s, { state: "IN-KA" });
    const parcel = placed.order.parcels[0]!;
    const made = await issued(s.id, placed.order.id, parcel.id, new Date());
    expect(made).toMatchObject({ number: expect.stringMatching(/^INV\/\d{2}-\d{2}\/000001$/) });
    const [row] = await sql<{ document: DocumentModel; tax: string; igst: string }>(
      "select t.document, f.tax, f.igst from tax_invoice t join fulfillment_order f on f.id = t.fulfillment_order_id where t.order_id = $1",
      [placed.order.id],
    );
    expect(Number(row!.igst)).toBeGreaterThan(0);
    expect(row!.document.columns).toContain("igst");
    expect(row!.document.columns).not.toContain("cgst");
    expect(row!.document.placeOfSupply).toEqual({ name: "Karnataka", code: "29" });
    expect(row!.document.totals).toEqual(expect.arrayContaining([{ label: "IGST", amount: Number(row!.igst) }]));
    // Issued once: a second issue for the parcel is skipped.
    expect(await issued(s.id, placed.order.id, parcel.id, new Date())).toMatchObject({ skipped: { reason: "invoiced" } });

    await sql("update location set gstin = null");
    const other = await placeTestOrder(db, s);
    expect(await issued(s.id, other.order.id, other.order.parcels[0]!.id, new Date())).toEqual({
      skipped: { reason: "no_gstin", message: expect.stringMatching(/no GSTIN.*Settings → Locations/) },
    });
    // Shipped from there, the parcel has no invoice, and orders.invoices says why.
    const paid = await paidGatewayOrder(db, s, 1);
    const call = callerFor(db, s.ownerUserId, s.id, providerServices(env));
    const [unregistered] = await sql<{ id: string }>("select id from fulfillment_order where order_id = $1", [paid.orderId]);
    await call("orders.fulfill", { orderId: paid.orderId, parcelId: unregistered!.id, tracking: { awb: "DLV-654321", courierName: "Delhivery" } });
    expect(await call("orders.invoices", { id: paid.orderId })).toEqual({
      invoices: [],
      creditNotes: [],
      notIssued: [{ parcelId: unregistered!.id, reason: "no_gstin", message: expect.stringMatching(/no GSTIN/) }],
    });
  });

  it("a parcel of several classes with a percent discount and shipping: the lines' rates resolved again, the totals the parcel's", async () => {
    const { s, sql } = await registeredShop();
    const [p] = await sql<{ product_id: string }>("select product_id from product_variant where id = $1", [s.variantId]);
    const [kurta] = await sql<{ id: string }>(
      "insert into product_variant (store_id, product_id, title, sku, price_minor, tax_class) values ($1, $2, 'Indigo / M', 'KURTA-M', 262501, 'gst_apparel') returning id",
      [s.id, p!.product_id],
    );
    await sql("insert into inventory_level (store_id, variant_id, location_id, on_hand) select $1, $2, id, 5 from location where gstin = $3", [s.id, kurta!.id, MH_GSTIN]);
    const placed = await withStore(db, s.id, async (tx) => {
      const { token, hash } = await newCartToken();
      const cart = await createCart(tx, hash);
      await addLine(tx, cart, s.variantId, 2);
      await addLine(tx, cart, kurta!.id, 1);
      await tx.$client.query("update cart set discount_id = (select id from discount limit 1) where id = $1", [cart.id]);
      return placeOrder(tx, token, { email: "asha@example.test", shippingAddress: address("IN-MH"), paymentMethod: "gateway" }, "local", new Date());
    });
    const parcel = placed.order.parcels[0]!;
    const made = await issued(s.id, placed.order.id, parcel.id, new Date());
    expect(made).toMatchObject({ number: expect.stringMatching(/000001$/) });
    const [row] = await sql<{ document: DocumentModel; discount: string; tax: string; cgst: string; sgst: string; total: string }>(
      "select t.document, f.discount, f.tax, f.cgst, f.sgst, f.subtotal - f.discount + f.shipping as total from tax_invoice t join fulfillment_order f on f.id = t.fulfillment_order_id where t.order_id = $1",
      [placed.order.id],
    );
    expect(Number(row!.discount)).toBeGreaterThan(0);
    const d = row!.document;
    // ₹2,625.01 less 10 % is ₹2,362.51 a piece, under ₹2,625.00: 5 %, as checkout charged.
    expect(d.lines.find((l) => l.description.includes("Indigo / M"))).toMatchObject({ quantity: 1, rateBp: 500 });
    expect(d.lines.find((l) => l.quantity === 2)).toMatchObject({ rateBp: 1800 });
    const sum = (key: "cgst" | "sgst" | "total") => d.lines.reduce((n, l) => n + (l[key] ?? 0), 0);
    expect({ cgst: sum("cgst"), sgst: sum("sgst"), total: sum("total") }).toEqual({ cgst: Number(row!.cgst), sgst: Number(row!.sgst), total: Number(row!.total) });
    expect(d.taxSummary!.map((r) => r.rateBp)).toEqual([500, 1800]);
  });

  it("50 concurrent shipments across two GSTINs and a financial-year boundary, some rolled back, number each series gaplessly from 000001", async () => {
    const { s, sql, mh, ka } = await registeredShop();
    const origins = Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? { locationId: mh, state: "IN-MH" as const } : { locationId: ka, state: "IN-KA" as const }));
    const { orderId, parcelIds } = await parcelsOrder(s.id, origins);
    // Half shipped in the last minute of 2025-26 (31 March 23:59 IST), half in the first of 2026-27.
    const march = new Date("2026-03-31T18:29:30Z");
    const april = new Date("2026-03-31T18:30:30Z");
    const at = (i: number) => (Math.floor(i / 2) % 2 === 0 ? march : april);
    const rolledBack = new Set([3, 10, 17, 24, 31, 44]);
    // Ten connections at once, each shipping its fifth of the parcels: shipments of one series wait on its
    // counter row and take the next number when the holder commits (or the same one when it rolls back).
    const first = await Promise.allSettled(
      parcelIds.map((parcelId, i) =>
        withStore(racers[i % racers.length]!, s.id, async (tx) => {
          const made = await issueInvoice(tx, { orderId, parcelId }, at(i));
          if (rolledBack.has(i)) throw new Error("the shipment failed after its invoice: rolled back");
          return made;
        }),
      ),
    );
    expect(first.flatMap((r, i) => (r.status === "rejected" ? [`${i}: ${String((r.reason as { cause?: unknown }).cause ?? r.reason).split("\n")[0]}`] : []))).toEqual(
      [...rolledBack].map((i) => `${i}: Error: the shipment failed after its invoice: rolled back`),
    );
    // The rolled-back shipments ship again later: their numbers follow, with no gap.
    for (const i of rolledBack) await issued(s.id, orderId, parcelIds[i]!, at(i));
    const rows = await sql<{ gstin: string; financial_year: string; number: string; fulfillment_order_id: string }>(
      "select gstin, financial_year, number, fulfillment_order_id from tax_invoice where order_id = $1 order by number",
      [orderId],
    );
    expect(rows).toHaveLength(50);
    for (const gstin of [MH_GSTIN, KA_GSTIN]) {
      for (const fy of ["2025-26", "2026-27"]) {
        const series = rows.filter((r) => r.gstin === gstin && r.financial_year === fy).map((r) => r.number);
        expect(series.length, `${gstin} ${fy}`).toBeGreaterThanOrEqual(12);
        expect(series, `${gstin} ${fy}`).toEqual(series.map((_, n) => `INV/${fy.slice(2)}/${String(n + 1).padStart(6, "0")}`));
      }
    }
    expect(new Set(rows.map((r) => r.fulfillment_order_id)).size).toBe(50);
    expect(await sql("select 1 from tax_document_counter where kind = 'invoice' and gstin = any($1)", [[MH_GSTIN, KA_GSTIN]])).toHaveLength(4);
  });

  it("a new financial year starts a new series at 000001 (31 March 23:59 IST vs 1 April 00:00 IST)", async () => {
    const { s, mh } = await registeredShop();
    const { orderId, parcelIds } = await parcelsOrder(s.id, [0, 1, 2].map(() => ({ locationId: mh, state: "IN-MH" as const })));
    expect(await issued(s.id, orderId, parcelIds[0]!, new Date("2026-03-31T18:28:00Z"))).toMatchObject({ number: "INV/25-26/000001" });
    expect(await issued(s.id, orderId, parcelIds[1]!, new Date("2026-03-31T18:29:00Z"))).toMatchObject({ number: "INV/25-26/000002" });
    expect(await issued(s.id, orderId, parcelIds[2]!, new Date("2026-03-31T18:30:00Z"))).toMatchObject({ number: "INV/26-27/000001" });
    const [april] = await withStore(db, s.id, (tx) => tx.$client.query<{ document: DocumentModel }>("select document from tax_invoice where number = 'INV/26-27/000001'")).then((r) => r.rows);
    expect(april!.document.date).toBe("2026-04-01");
  });
});
