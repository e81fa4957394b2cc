import { unchanged } from "../db/changes";
import type { Database } from "../db/database";
import { plan } from "../db/plan";
import type { RowOfStatement } from "../db/statement";
import { sql } from "../db/steps";
import { sendStoreUnit } from "../db/unit";
import { formatDocumentDate, type DocumentLine, type DocumentModel, type TaxSummaryRow } from "../documents/model";
import { allocateCredit, minus, NOTHING, plus, type Charged, type CreditTarget } from "../rules/gst-credit";
import { indianDate } from "../rules/gst-rates";
import { financialYear } from "./invoices";
import { retryLostRaces } from "./readings";
import { creditAsRead, issueTaxCreditNote, refundToCredit, type CreditInvoiceRow, type CreditNoteDraft } from "./statements/credit-notes";
import { lockOrders } from "./statements/locks";

/**
 * Credit notes (docs/gst.md "Credit notes"; CGST Act s.34, CGST Rules rule 53(1A)). A processed refund
 * of an order that has tax invoices is credited against them: a return's refund first against the
 * returned units' lines, any other refund (or the rest of a return's: its shipping) over every line's
 * value still creditable (shared/rules/gst-credit.ts). One credit note per invoice it touches, in the
 * invoice's GSTIN's credit-note series for the financial year of the refund (CN/25-26/000001, gapless as
 * invoices are), referencing the invoice, with the tax reversed per line, per rate and per component.
 * A refund of money for goods never invoiced (an order refunded before it shipped) needs none: goods'
 * advances carry no GST, and no invoice exists to reduce.
 *
 * Issued by the documents consumer of `order.refunded` (shared/jobs/documents-consumer.ts), which every
 * processed refund writes, whichever way it was made (the merchant, a return, the gateway's report). The
 * unit is guarded: the order locked, the refund still uncredited and the order's credit notes as many as
 * read, else it reads again; a second delivery of the event finds the refund credited and does nothing.
 */

export type CreditReading = RowOfStatement<typeof refundToCredit>;

/** The credit-note series' prefix in a financial year: "2025-26" → "CN/25-26/". */
export const creditNotePrefix = (fy: string): string => `CN/${fy.slice(2)}/`;

export type CreditSkipped = "no_refund" | "not_processed" | "credited" | "not_invoiced";

export type CreditOutcome = { issued: { id: string; number: string }[]; uncredited: number } | { skipped: CreditSkipped };

const readCredit = (db: Database, storeId: string, refundId: string) =>
  sendStoreUnit(db, storeId, (q) => plan([refundToCredit(q, sql`${storeId}::uuid`, refundId)] as const, ([[row]]) => row));

/** What an invoice line was charged, from the invoice as printed. */
const chargedOf = (l: DocumentLine): Charged => ({ total: l.total ?? 0, taxable: l.taxableValue ?? 0, cgst: l.cgst ?? 0, sgst: l.sgst ?? 0, igst: l.igst ?? 0 });

/** Each line of each invoice: what is left to credit, and how many of its units the return gives back. */
function targetsOf(invoices: readonly CreditInvoiceRow[], returnLines: readonly { orderLineId: string; quantity: number }[] | null) {
  const returning = new Map((returnLines ?? []).map((l) => [l.orderLineId, l.quantity]));
  return invoices.map((invoice) =>
    invoice.document.lines.map((line, j) => {
      const earlier = invoice.credited.reduce((sum, note) => plus(sum, note[j] ?? NOTHING), NOTHING);
      const remaining = minus(chargedOf(line), earlier);
      const orderLine = invoice.orderLines[j];
      const units = orderLine ? Math.min(returning.get(orderLine) ?? 0, line.quantity) : 0;
      if (orderLine && units > 0) returning.set(orderLine, returning.get(orderLine)! - units);
      const first = units > 0 && line.quantity > 0 ? Math.floor((remaining.total * units) / line.quantity) : 0;
      return { target: { remaining, first } satisfies CreditTarget, units };
    }),
  );
}

/** The credit note of one invoice: the lines it credits, tax by rate, totals. */
function creditDocument(invoice: DocumentModel, credited: readonly Charged[], units: readonly number[], p: { orderNumber: number; at: Date; reason: string; byValue: boolean }): Omit<DocumentModel, "number"> {
  const lines: DocumentLine[] = [];
  const byRate = new Map<number, TaxSummaryRow>();
  credited.forEach((c, j) => {
    if (c.total === 0) return;
    const line = invoice.lines[j]!;
    const rateBp = line.rateBp ?? 0;
    lines.push({ description: line.description, sku: line.sku ?? null, hsn: line.hsn ?? null, quantity: units[j] || line.quantity, unit: line.unit ?? null, taxableValue: c.taxable, rateBp, cgst: c.cgst, sgst: c.sgst, igst: c.igst, total: c.total });
    const row = byRate.get(rateBp) ?? { rateBp, taxableValue: 0, cgst: 0, sgst: 0, igst: 0 };
    byRate.set(rateBp, { rateBp, taxableValue: row.taxableValue + c.taxable, cgst: row.cgst + c.cgst, sgst: row.sgst + c.sgst, igst: row.igst + c.igst });
  });
  const sum = credited.reduce(plus, NOTHING);
  const intra = invoice.columns.includes("cgst");
  const stateTaxLabel = invoice.stateTaxLabel ?? "SGST";
  return {
    title: "Credit note",
    date: indianDate(p.at),
    supplier: invoice.supplier,
    recipient: invoice.recipient,
    shipTo: invoice.shipTo ?? null,
    placeOfSupply: invoice.placeOfSupply ?? null,
    references: [
      { label: "Against invoice", value: `${invoice.number} of ${formatDocumentDate(invoice.date)}` },
      { label: "Order", value: `#${p.orderNumber}` },
      { label: "Reason", value: p.reason },
    ],
    columns: invoice.columns,
    stateTaxLabel,
    lines,
    taxSummary: [...byRate.values()].sort((a, b) => a.rateBp - b.rateBp),
    totals: [
      { label: "Taxable value", amount: sum.taxable },
      ...(intra ? [{ label: "CGST", amount: sum.cgst }, { label: stateTaxLabel, amount: sum.sgst }] : [{ label: "IGST", amount: sum.igst }]),
      { label: "Credit note total", amount: sum.total, grand: true },
    ],
    notes: [
      "Issued under section 34 of the CGST Act: the taxable value and tax above are reduced from the invoice named.",
      ...(p.byValue ? ["A refund of value: credited over the invoice's lines in proportion to what remained of them."] : []),
      `Computer-generated credit note; authorised signatory: ${invoice.supplier.name}.`,
    ],
  };
}

/**
 * The credit notes a processed refund gets at `at`, one per invoice it touches, or why it gets none.
 * Pure: everything comes from the reading.
 */
export function draftCreditNotes(reading: CreditReading, refundId: string, at: Date): { drafts: CreditNoteDraft[]; uncredited: number } | { skipped: CreditSkipped } {
  if (reading.status !== "processed") return { skipped: "not_processed" };
  if (reading.credited) return { skipped: "credited" };
  if (reading.invoices.length === 0) return { skipped: "not_invoiced" };
  const isReturn = reading.returnId !== null;
  const perInvoice = targetsOf(reading.invoices, isReturn ? reading.returnLines : null);
  const flat = perInvoice.flat();
  const { credited, uncredited } = allocateCredit(reading.amount, flat.map((t) => t.target));
  const fy = financialYear(at);
  const drafts: CreditNoteDraft[] = [];
  let at0 = 0;
  reading.invoices.forEach((invoice, i) => {
    const mine = credited.slice(at0, (at0 += perInvoice[i]!.length));
    if (mine.every((c) => c.total === 0)) return;
    const units = perInvoice[i]!.map((t) => t.units);
    const reason = isReturn ? "Goods returned" : (reading.reason ?? "Refund");
    drafts.push({
      orderId: reading.orderId,
      refundId,
      invoiceId: invoice.id,
      gstin: invoice.gstin,
      financialYear: fy,
      prefix: creditNotePrefix(fy),
      issuedAt: at,
      credited: mine,
      document: creditDocument(invoice.document, mine, units, { orderNumber: reading.orderNumber, at, reason, byValue: !isReturn }),
    });
  });
  return { drafts, uncredited };
}

/**
 * Issues a refund's credit notes as of `at` (when the refund was processed): a reading, then the guarded
 * change; read again when another credit note of the order came first. Safe to repeat.
 */
export function issueCreditNotes(db: Database, storeId: string, refundId: string, at: Date): Promise<CreditOutcome> {
  const store = sql`${storeId}::uuid`;
  return retryLostRaces(async () => {
    const reading = await readCredit(db, storeId, refundId);
    if (!reading) return { skipped: "no_refund" as const };
    const made = draftCreditNotes(reading, refundId, at);
    if ("skipped" in made) return made;
    if (made.drafts.length === 0) return { issued: [], uncredited: made.uncredited };
    return sendStoreUnit(
      db,
      storeId,
      (q) =>
        plan(
          [
            lockOrders(q, store, [reading.orderId]),
            unchanged(q, creditAsRead(store, refundId, reading.orderId, reading.orderCreditNotes)),
            ...made.drafts.map((d) => issueTaxCreditNote(q, store, d)),
          ],
          (results) => ({ issued: results.slice(2).map((rows) => (rows as { id: string; number: string }[])[0]!), uncredited: made.uncredited }),
        ),
      { readOnly: false },
    );
  });
}
