import { and, eq, type SQL } from "drizzle-orm";
import { shopOrder } from "../db/schema";
import { plan, type Plan } from "../db/plan";
import type { RowOfStatement } from "../db/statement";
import { sql, type Q } from "../db/steps";
import { changeOn, readOn, type StoreTx } from "../db/with-store";
import { formatDocumentDate, INTER_STATE_COLUMNS, INTRA_STATE_COLUMNS, type DocumentLine, type DocumentModel, type DocumentParty, type DocumentState } from "../documents/model";
import { INDIAN_STATE_NAMES, isIndianStateCode, parcelTax, resolveRate, splitProportionally, UTGST_TERRITORIES, type IndianStateCode, type TaxLine } from "../rules/gst";
import { indianDate, ratesOfRows } from "../rules/gst-rates";
import { GST_STATE_CODES, gstStateCodeOf } from "../rules/gstin";
import { orderNotFound } from "./order-detail";
import { orderCreditNotes } from "./statements/credit-notes";
import { issueTaxInvoice, orderInvoices, parcelsNotInvoiced, parcelToInvoice, type InvoiceDraft } from "./statements/invoices";

/**
 * Tax invoices (docs/gst.md "Tax invoices"; CGST Rules, rule 46): one per parcel, issued in the unit that
 * ships it, from the GSTIN of the parcel's location, numbered INV/25-26/000001 in a gapless series per
 * GSTIN and financial year (the counter row of migration 0038, taken in the same transaction). The content
 * is computed here once, from the order's stored lines and the parcel's stored money (each line's rate
 * resolved again at the order's rates, as checkout did), checked against the parcel's stored tax, and
 * frozen in the invoice's row.
 */

export type InvoiceReading = RowOfStatement<typeof parcelToInvoice>;
export type { InvoiceDraft } from "./statements/invoices";

/** Why a shipped parcel has no invoice (issued none): told to the merchant. */
export interface InvoiceSkipped {
  reason: "invoiced" | "no_gstin" | "no_legal_identity";
  message: string;
}

const SKIPPED = {
  no_gstin: { reason: "no_gstin", message: "No tax invoice: the parcel's location has no GSTIN (Settings → Locations)." },
  no_legal_identity: { reason: "no_legal_identity", message: "No tax invoice: the location's GSTIN has no legal name or address (Settings → Locations)." },
} as const satisfies Record<string, InvoiceSkipped>;

/** The financial year of an instant in India, 1 April to 31 March: 2026-03-31 23:59 IST → "2025-26". */
export function financialYear(at: Date): string {
  const [year, month] = indianDate(at).split("-").map(Number) as [number, number];
  const start = month >= 4 ? year : year - 1;
  return `${start}-${String((start + 1) % 100).padStart(2, "0")}`;
}

/** The invoice series' prefix in a financial year: "2025-26" → "INV/25-26/" (a 16-character number with 6 digits). */
export const invoicePrefix = (fy: string): string => `INV/${fy.slice(2)}/`;

/** The invoice's reading: the parcel, its location's registration, the order and its rates. */
export function invoiceReadingPlan(q: Q, store: SQL, p: { orderId: string; parcelId: string }): Plan<InvoiceReading | undefined> {
  return plan([parcelToInvoice(q, store, p)] as const, ([[row]]) => row);
}

const stateOf = (code: IndianStateCode): DocumentState => ({ name: INDIAN_STATE_NAMES[code], code: gstStateCodeOf(code) });

function addressLines(a: Record<string, string | undefined>, state: IndianStateCode | null): string[] {
  const place = [a.city, a.postalCode].filter(Boolean).join(" ");
  return [a.line1, a.line2, place, state ? `${INDIAN_STATE_NAMES[state]}, India` : "India"].filter((x): x is string => Boolean(x));
}

/**
 * The invoice a parcel gets when it ships at `now`, or why it gets none: already invoiced, a location with
 * no GSTIN, or a GSTIN without the legal name and address rule 46(a) prints. Throws when the parcel's
 * stored tax is not what its lines give (a bug to fix, never an invoice that disagrees with the order).
 */
export function draftInvoice(reading: InvoiceReading, p: { orderId: string; parcelId: string }, now: Date): { draft: InvoiceDraft } | { skipped: InvoiceSkipped } {
  if (reading.invoiced) return { skipped: { reason: "invoiced", message: "This parcel has its tax invoice already." } };
  const { gstin, legalName, addressLine1 } = reading;
  if (!gstin) return { skipped: SKIPPED.no_gstin };
  if (!legalName || !addressLine1) return { skipped: SKIPPED.no_legal_identity };
  const destination = reading.shipToState;
  if (!isIndianStateCode(destination)) throw new Error(`order #${reading.orderNumber} ships to ${destination}, not an Indian state`);
  const origin = reading.originState && isIndianStateCode(reading.originState) ? reading.originState : null;
  const rates = ratesOfRows(reading.rates, indianDate(reading.placedAt));

  // The parcel's lines after their share of its discount, split as checkout split it (../checkout.ts).
  const amounts = reading.lines.map((l) => Number(l.unitPrice) * l.quantity);
  const discounts = splitProportionally(reading.discount, amounts);
  const taxLines: TaxLine[] = reading.lines.map((l, i) => ({ taxClass: l.taxClass, amount: amounts[i]! - discounts[i]!, quantity: l.quantity }));
  const tax = parcelTax({ lines: taxLines, shipping: reading.shipping, originState: origin, destinationState: destination, rates });
  const stored = { tax: reading.tax, cgst: reading.cgst, sgst: reading.sgst, igst: reading.igst };
  const found = { tax: tax.tax, cgst: tax.cgst, sgst: tax.sgst, igst: tax.igst };
  if (amounts.reduce((a, b) => a + b, 0) !== reading.subtotal || JSON.stringify(found) !== JSON.stringify(stored)) {
    throw new Error(`The invoice of order #${reading.orderNumber}'s parcel ${p.parcelId} gives ${JSON.stringify(found)}, its stored tax is ${JSON.stringify(stored)}: no invoice was issued and nothing shipped.`);
  }

  // Each rate's tax components split over its lines and its share of shipping, by amount.
  const lineRates = taxLines.map((l) => resolveRate(rates, l));
  const lines: DocumentLine[] = reading.lines.map((l) => ({ description: l.description, sku: l.sku, hsn: l.hsn, quantity: l.quantity, unit: "NOS" }));
  const shippingLines: DocumentLine[] = [];
  for (const r of tax.byRate) {
    const members = lineRates.flatMap((rate, i) => (rate === r.rateBp ? [i] : []));
    const parts = [...members.map((i) => taxLines[i]!.amount), r.shipping];
    const [cgst, sgst, igst] = [r.cgst, r.sgst, r.igst].map((c) => splitProportionally(c, parts)) as [number[], number[], number[]];
    const priced = (amount: number, j: number): Pick<DocumentLine, "taxableValue" | "rateBp" | "cgst" | "sgst" | "igst" | "total"> => ({
      taxableValue: amount - cgst[j]! - sgst[j]! - igst[j]!,
      rateBp: r.rateBp,
      cgst: cgst[j]!,
      sgst: sgst[j]!,
      igst: igst[j]!,
      total: amount,
    });
    members.forEach((i, j) => Object.assign(lines[i]!, priced(taxLines[i]!.amount, j)));
    if (r.shipping > 0) shippingLines.push({ description: "Shipping", quantity: 1, ...priced(r.shipping, members.length) });
  }

  const intra = tax.supply === "intra_state";
  const supplierState = GST_STATE_CODES[gstin.slice(0, 2)] ?? null;
  const stateTaxLabel = supplierState && UTGST_TERRITORIES.has(supplierState) ? "UTGST" : "SGST";
  const address = reading.shippingAddress;
  const supplier: DocumentParty = {
    name: legalName,
    address: addressLines({ line1: addressLine1, line2: reading.addressLine2 ?? undefined, city: reading.city ?? undefined, postalCode: reading.postalCode ?? undefined }, supplierState),
    gstin,
    state: supplierState ? stateOf(supplierState) : { name: "Other Territory", code: gstin.slice(0, 2) },
  };
  const recipient: DocumentParty = {
    name: reading.buyerLegalName ?? address.name ?? "",
    address: addressLines(address, destination),
    gstin: reading.buyerGstin,
    state: stateOf(destination),
  };
  const total = reading.subtotal - reading.discount + reading.shipping;
  const fy = financialYear(now);
  const document: Omit<DocumentModel, "number"> = {
    title: "Tax invoice",
    date: indianDate(now),
    supplier,
    recipient,
    // The delivery address is the recipient's (IGST Act s.10(1)(a), (ca); Circular 209/3/2024-GST).
    shipTo: null,
    placeOfSupply: stateOf(destination),
    references: [{ label: "Order", value: `#${reading.orderNumber} of ${formatDocumentDate(indianDate(reading.placedAt))}` }],
    // The HSN column when a line's product has a code (rule 46(g); a seller up to ₹5 crore may omit it on B2C invoices).
    columns: (intra ? INTRA_STATE_COLUMNS : INTER_STATE_COLUMNS).filter((c) => c !== "hsn" || lines.some((l) => l.hsn)),
    stateTaxLabel,
    lines: [...lines, ...shippingLines],
    taxSummary: tax.byRate.map((r) => ({ rateBp: r.rateBp, taxableValue: r.taxable, cgst: r.cgst, sgst: r.sgst, igst: r.igst })),
    totals: [
      { label: "Taxable value", amount: tax.taxable },
      ...(intra ? [{ label: "CGST", amount: tax.cgst }, { label: stateTaxLabel, amount: tax.sgst }] : [{ label: "IGST", amount: tax.igst }]),
      { label: "Invoice total", amount: total, grand: true },
    ],
    notes: ["Tax is not payable on reverse charge.", `Computer-generated invoice; authorised signatory: ${legalName}.`],
  };
  return { draft: { ...p, gstin, financialYear: fy, prefix: invoicePrefix(fy), issuedAt: now, document } };
}

/** The statement that issues a drafted invoice (numbered by its series in the same statement). */
export const issueInvoiceStep = (q: Q, store: SQL, draft: InvoiceDraft) => issueTaxInvoice(q, store, draft);

/**
 * Issues a parcel's invoice at `now` on an open transaction (a reading, then the issue): for a parcel shipped
 * outside the shipping unit. Answers the invoice's number, or why there is none.
 */
export async function issueInvoice(tx: StoreTx, p: { orderId: string; parcelId: string }, now: Date): Promise<{ id: string; number: string } | { skipped: InvoiceSkipped }> {
  const store = sql`${tx.storeId}::uuid`;
  const reading = await readOn(tx, (q) => invoiceReadingPlan(q, store, p));
  if (!reading) throw new Error(`no parcel ${p.parcelId} of order ${p.orderId} in this store`);
  const made = draftInvoice(reading, p, now);
  if ("skipped" in made) return made;
  return changeOn(tx, (q) => {
    const step = issueInvoiceStep(q, store, made.draft);
    return plan([step] as const, ([[row]]) => row!);
  });
}

/**
 * An order's invoices, oldest first, its shipped parcels that have none with the reason their location
 * gives today (a parcel shipped without one keeps none: an invoice is issued when it ships), and its credit
 * notes (./credit-notes.ts), oldest first. An order not of this store is not found.
 */
export function orderInvoicesPlan(q: Q, store: SQL, orderId: string) {
  return plan(
    [
      q.select({ id: shopOrder.id }).from(shopOrder).where(and(eq(shopOrder.storeId, store), eq(shopOrder.id, orderId))),
      orderInvoices(q, store, orderId),
      parcelsNotInvoiced(q, store, orderId),
      orderCreditNotes(q, store, orderId),
    ] as const,
    ([[order], invoices, missing, creditNotes]) => {
      if (!order) throw orderNotFound();
      const notIssued = missing.map((p) => ({
        parcelId: p.parcelId,
        ...(!p.hasGstin ? SKIPPED.no_gstin : !p.hasIdentity ? SKIPPED.no_legal_identity : { reason: "shipped_before", message: "No tax invoice: the parcel shipped before its location had a GSTIN, legal name and address." }),
      }));
      return { invoices, notIssued, creditNotes };
    },
  );
}
