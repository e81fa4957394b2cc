import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createLogger } from "#shared/core/log";
import type { DocumentModel } from "#shared/documents/model";
import { relayStores } from "#shared/jobs/outbox";
import { CREDIT_NOTE_ROUTE, issueDocumentsFromEvent } from "#shared/jobs/documents-consumer";
import { providerServices } from "#shared/pipeline/providers";
import { financialYear } from "./invoices";
import { issueCreditNotes } from "./credit-notes";
import { testDb } from "../../test/harness";
import { recordingQueues } from "../../test/jobs";
import { KA_GSTIN, MH_GSTIN, paidGatewayOrder, registeredOrderShop, type GatewayOrderOf } from "../../test/orders";
import { callerFor } from "../../test/procedures";

/** Credit notes against real Postgres (issue 22 item 3): issued by the documents queue's consumer of `order.refunded`. */
const db = testDb();
const log = createLogger({ test: true }, "error");

interface Note {
  id: string;
  refundId: string;
  invoiceId: string;
  number: string;
  gstin: string;
  financialYear: string;
  document: DocumentModel;
}
interface Invoice {
  id: string;
  number: string;
  parcelId: string;
  gstin: string;
  document: DocumentModel;
}

const COMPONENTS = ["taxableValue", "cgst", "sgst", "igst", "total"] as const;
const sumOf = (docs: readonly DocumentModel[]) =>
  Object.fromEntries(COMPONENTS.map((k) => [k, docs.flatMap((d) => d.lines).reduce((n, l) => n + (l[k] ?? 0), 0)])) as Record<(typeof COMPONENTS)[number], number>;

type Shop = Awaited<ReturnType<typeof registeredOrderShop>>;

/** A variant of the shop's product in `taxClass` at `price`, with 10 units at the shop's location `at`. */
async function addVariant({ s, sql, mh, ka }: Shop, title: string, price: number, taxClass: string, at: "mh" | "ka") {
  const [v] = await sql<{ id: string }>(
    "insert into product_variant (store_id, product_id, title, sku, price_minor, tax_class) select $1, product_id, $2, $3, $4, $5 from product_variant where id = $6 returning id",
    [s.id, title, title.toUpperCase().replace(/\W+/g, "-"), price, taxClass, s.variantId],
  );
  await sql("insert into inventory_level (store_id, variant_id, location_id, on_hand) values ($1, $2, $3, 10)", [s.id, v!.id, at === "mh" ? mh : ka]);
  return v!.id;
}

/** A registered shop, an order (of `of` as the shop makes it) paid at the local gateway, and every parcel shipped (each invoiced). */
async function shippedOrder(of: GatewayOrderOf | ((shop: Shop) => Promise<GatewayOrderOf>) = 2) {
  const shop = await registeredOrderShop(db);
  const { s, sql } = shop;
  const paid = await paidGatewayOrder(db, s, typeof of === "function" ? await of(shop) : of);
  const call = callerFor(db, s.ownerUserId, s.id, providerServices(env));
  const parcels = await sql<{ id: string }>("select id from fulfillment_order where order_id = $1 order by position", [paid.orderId]);
  for (const [i, p] of parcels.entries()) await call("orders.fulfill", { orderId: paid.orderId, parcelId: p.id, tracking: { awb: `DLV-10000${i}`, courierName: "Delhivery" } });
  const documents = async () => (await call("orders.invoices", { id: paid.orderId })) as { invoices: Invoice[]; creditNotes: Note[] };
  /** Relays the store's events and delivers the documents queue's messages (`times` each: a queue may deliver twice). */
  const deliver = async (times = 1) => {
    const { sent, queues } = recordingQueues();
    await relayStores(db, [s.id], queues, log, new Date(Date.now() + 60_000));
    const messages = sent.filter((m) => m.storeId === s.id && m.route === CREDIT_NOTE_ROUTE);
    const outcomes = [];
    for (let n = 0; n < times; n++) for (const m of messages) outcomes.push(await issueDocumentsFromEvent(m, { db, log }));
    return outcomes;
  };
  return { ...shop, paid, call, documents, deliver };
}

describe("credit notes", () => {
  it("a full refund's credit note reverses exactly what the invoice charged, per line, rate and component; a second delivery issues nothing", async () => {
    const { call, paid, documents, deliver, sql } = await shippedOrder(2);
    const [invoice] = (await documents()).invoices;
    await call("orders.refund", { orderId: paid.orderId, reason: "Damaged in transit" });
    const outcomes = await deliver(2);
    expect(outcomes).toEqual([{ issued: [{ id: expect.any(String), number: expect.stringMatching(/^CN\/\d{2}-\d{2}\/000001$/) }], uncredited: 0 }, { skipped: "credited" }]);
    const { creditNotes } = await documents();
    expect(creditNotes).toHaveLength(1);
    const [note] = creditNotes;
    const fy = financialYear(new Date());
    expect(note).toMatchObject({ invoiceId: invoice!.id, gstin: MH_GSTIN, financialYear: fy, number: `CN/${fy.slice(2)}/000001` });
    const d = note!.document;
    expect(d).toMatchObject({
      title: "Credit note",
      number: note!.number,
      supplier: invoice!.document.supplier,
      recipient: invoice!.document.recipient,
      placeOfSupply: invoice!.document.placeOfSupply,
      references: expect.arrayContaining([{ label: "Against invoice", value: expect.stringContaining(invoice!.number) }, { label: "Reason", value: "Damaged in transit" }]),
    });
    // Everything charged comes back: each line, each rate's row, each component.
    expect(sumOf([d])).toEqual(sumOf([invoice!.document]));
    expect(d.lines.map((l) => [l.description, l.rateBp, l.cgst, l.sgst, l.total])).toEqual(invoice!.document.lines.map((l) => [l.description, l.rateBp, l.cgst, l.sgst, l.total]));
    expect(d.taxSummary).toEqual(invoice!.document.taxSummary);
    expect(d.totals!.find((t) => t.grand)).toEqual({ label: "Credit note total", amount: invoice!.document.totals!.find((t) => t.grand)!.amount, grand: true });
    // Its own series, beside the invoices'; frozen like them.
    expect(await sql("select kind, next_number from tax_document_counter where gstin = $1 order by kind", [MH_GSTIN])).toEqual([
      { kind: "credit_note", next_number: 2 },
      { kind: "invoice", next_number: 2 },
    ]);
    await expect(sql("update tax_credit_note set number = 'CN/X/1'")).rejects.toThrow(/cannot be changed/);
  });

  it("partial refunds credit in proportion, number their notes gaplessly, and together never pass what was charged", async () => {
    const { call, paid, documents, deliver } = await shippedOrder(3);
    const [invoice] = (await documents()).invoices;
    const total = invoice!.document.totals!.find((t) => t.grand)!.amount;
    await call("orders.refund", { orderId: paid.orderId, amount: 1001 });
    await call("orders.refund", { orderId: paid.orderId, amount: Math.floor(total / 3) });
    await deliver();
    let { creditNotes } = await documents();
    expect(creditNotes.map((n) => n.number.slice(-6))).toEqual(["000001", "000002"]);
    const partial = sumOf(creditNotes.map((n) => n.document));
    expect(partial.total).toBe(1001 + Math.floor(total / 3));
    // Each credited line keeps its rate: tax / taxable as charged, within a paisa.
    for (const l of creditNotes.flatMap((n) => n.document.lines)) expect(Math.abs(l.cgst! + l.sgst! - (l.taxableValue! * l.rateBp!) / 10_000)).toBeLessThanOrEqual(1);
    // The rest of the order's money: the last note takes exactly what remained, component by component.
    await call("orders.refund", { orderId: paid.orderId });
    await deliver();
    ({ creditNotes } = await documents());
    expect(creditNotes).toHaveLength(3);
    expect(sumOf(creditNotes.map((n) => n.document))).toEqual(sumOf([invoice!.document]));
  });

  it("a return's refund credits the returned units' line at its own rate, not the rest of the invoice", async () => {
    const { call, paid, documents, deliver, sql } = await shippedOrder(async (shop) => ({ lines: [[shop.s.variantId, 1], [await addVariant(shop, "Cotton dupatta", 50_000, "gst_5", "mh"), 2]] }));
    const [invoice] = (await documents()).invoices;
    expect(invoice!.document.taxSummary!.map((r) => r.rateBp)).toEqual([500, 1800]);
    const [line] = await sql<{ id: string }>("select id from order_line where order_id = $1 and tax_class = 'gst_5'", [paid.orderId]);
    const { returnId } = (await call("returns.request", { orderId: paid.orderId, lines: [{ orderLineId: line!.id, quantity: 1 }], reason: "Colour not as pictured" })) as { returnId: string };
    await call("returns.approve", { returnId });
    await call("returns.receive", { returnId });
    await call("returns.refund", { returnId });
    expect(await deliver()).toEqual([{ issued: [expect.anything()], uncredited: 0 }]);
    const [note] = (await documents()).creditNotes;
    const d = note!.document;
    // One dupatta of ₹500.00 at 5 %: its taxable value and tax, nothing of the 18 % line.
    expect(d.lines).toEqual([expect.objectContaining({ description: expect.stringContaining("Cotton dupatta"), quantity: 1, rateBp: 500, total: 50_000, igst: 0 })]);
    const charged = invoice!.document.lines.find((l) => l.rateBp === 500)!;
    expect(d.lines[0]!.cgst! + d.lines[0]!.sgst!).toBe((charged.cgst! + charged.sgst!) / 2);
    expect(d.lines[0]!.taxableValue).toBe(charged.taxableValue! / 2);
    expect(d.taxSummary).toEqual([{ rateBp: 500, taxableValue: d.lines[0]!.taxableValue, cgst: d.lines[0]!.cgst, sgst: d.lines[0]!.sgst, igst: 0 }]);
    expect(d.references).toEqual(expect.arrayContaining([{ label: "Reason", value: "Goods returned" }]));
  });

  it("two parcels from two GSTINs: a refund's credit note per invoice, each in its GSTIN's series, IGST where the invoice charged it; a refund before any invoice issues none", async () => {
    const { call, paid, documents, deliver, s } = await shippedOrder(async (shop) => ({ lines: [[shop.s.variantId, 1], [await addVariant(shop, "Silk stole", 120_000, "gst_5", "ka"), 1]] }));
    const { invoices } = await documents();
    expect(invoices.map((i) => i.gstin).sort()).toEqual([MH_GSTIN, KA_GSTIN]);
    await call("orders.refund", { orderId: paid.orderId });
    await deliver();
    const { creditNotes } = await documents();
    expect(creditNotes.map((n) => [n.gstin, n.number.slice(-6)]).sort()).toEqual([
      [MH_GSTIN, "000001"],
      [KA_GSTIN, "000001"],
    ].sort());
    for (const invoice of invoices) {
      const note = creditNotes.find((n) => n.invoiceId === invoice.id)!;
      expect(note.gstin).toBe(invoice.gstin);
      expect(sumOf([note.document])).toEqual(sumOf([invoice.document]));
      expect(note.document.columns).toEqual(invoice.document.columns);
    }
    expect(sumOf(creditNotes.filter((n) => n.gstin === KA_GSTIN).map((n) => n.document)).igst).toBeGreaterThan(0);

    // Refunded before it shipped: no invoice, no credit note.
    const unshipped = await paidGatewayOrder(db, s, 1);
    await call("orders.refund", { orderId: unshipped.orderId });
    expect(await deliver()).toEqual([{ skipped: "not_invoiced" }]);
    expect((await documents()).creditNotes).toHaveLength(2);
  });

  it("credit notes of one order issued at once: each waits its turn, none credits a line twice, each line comes back exactly, the series stays gapless", async () => {
    const { s, call, paid, documents, sql } = await shippedOrder(async (shop) => ({ lines: [[shop.s.variantId, 4], [await addVariant(shop, "Cotton dupatta", 50_000, "gst_5", "mh"), 2]] }));
    const [invoice] = (await documents()).invoices;
    const total = invoice!.document.totals!.find((t) => t.grand)!.amount;
    // A return of one dupatta (credited against its line first), value refunds, then the rest: credited one
    // after another, the last takes exactly what each line has left; computed from a stale reading, it would not.
    const [line] = await sql<{ id: string }>("select id from order_line where order_id = $1 and tax_class = 'gst_5'", [paid.orderId]);
    const { returnId } = (await call("returns.request", { orderId: paid.orderId, lines: [{ orderLineId: line!.id, quantity: 1 }], reason: "Too long" })) as { returnId: string };
    await call("returns.approve", { returnId });
    await call("returns.receive", { returnId });
    await call("returns.refund", { returnId });
    for (let i = 0; i < 3; i++) await call("orders.refund", { orderId: paid.orderId, amount: Math.floor(total / 9) + i });
    await call("orders.refund", { orderId: paid.orderId });
    const refunds = await sql<{ id: string }>("select id from refund where order_id = $1 and status = 'processed' order by created_at", [paid.orderId]);
    expect(refunds).toHaveLength(5);
    const at = new Date();
    const first = await Promise.allSettled(refunds.map((r) => issueCreditNotes(db, s.id, r.id, at)));
    // A unit that lost its race too often throws (the queue delivers it again): deliver those again.
    for (const [i, r] of first.entries()) if (r.status === "rejected") await issueCreditNotes(db, s.id, refunds[i]!.id, at);
    const { creditNotes } = await documents();
    expect(creditNotes.map((n) => n.number.slice(-6)).sort()).toEqual(["000001", "000002", "000003", "000004", "000005"]);
    expect(new Set(creditNotes.map((n) => n.refundId)).size).toBe(5);
    // Line by line, component by component, the notes give back what the invoice charged.
    const credited = await sql<{ credited: Record<string, number>[] }>("select credited from tax_credit_note where order_id = $1", [paid.orderId]);
    const perLine = invoice!.document.lines.map((_, j) =>
      Object.fromEntries(["total", "taxable", "cgst", "sgst", "igst"].map((k) => [k, credited.reduce((n, c) => n + c.credited[j]![k]!, 0)])),
    );
    expect(perLine).toEqual(invoice!.document.lines.map((l) => ({ total: l.total, taxable: l.taxableValue, cgst: l.cgst, sgst: l.sgst, igst: l.igst })));
  });
});
