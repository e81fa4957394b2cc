import { z } from "zod";
import { orderInvoicesPlan } from "../orders/invoices";
import { storeProcedure } from "./define";
import * as out from "./outputs";
import { DOCUMENT_COLUMNS } from "../documents/model";

/** A printed document as data (shared/documents/model.ts DocumentModel): money in paise, rates in basis points. */
const state = z.object({ name: z.string(), code: z.string() });
const party = z.object({ name: z.string(), address: z.array(z.string()), gstin: z.string().nullish(), state: state.nullish() });
const documentOutput = z.object({
  title: z.string(),
  number: z.string(),
  date: out.day,
  supplier: party,
  recipient: party,
  partyHeadings: z.object({ supplier: z.string(), recipient: z.string() }).nullish(),
  shipTo: party.nullish(),
  placeOfSupply: state.nullish(),
  references: z.array(z.object({ label: z.string(), value: z.string() })).optional(),
  columns: z.array(z.enum(DOCUMENT_COLUMNS)),
  stateTaxLabel: z.enum(["SGST", "UTGST"]).optional(),
  lines: z.array(
    z.object({
      description: z.string(),
      sku: z.string().nullish(),
      hsn: z.string().nullish(),
      quantity: z.number(),
      unit: z.string().nullish(),
      taxableValue: out.minor.optional(),
      rateBp: z.number().optional(),
      cgst: out.minor.optional(),
      sgst: out.minor.optional(),
      igst: out.minor.optional(),
      total: out.minor.optional(),
    }),
  ),
  taxSummary: z.array(z.object({ rateBp: z.number(), taxableValue: out.minor, cgst: out.minor, sgst: out.minor, igst: out.minor })).optional(),
  totals: z.array(z.object({ label: z.string(), amount: out.minor, grand: z.boolean().optional() })).optional(),
  notes: z.array(z.string()).optional(),
  noteArea: z.string().nullish(),
});
/** What an invoice and a credit note share: number, GSTIN, financial year, when issued and the document. */
const issued = { number: z.string(), gstin: z.string(), financialYear: z.string(), issuedAt: out.instant, document: documentOutput };

/**
 * An order's tax invoices and credit notes (docs/gst.md "Tax invoices", "Credit notes"): issued by shipping
 * a parcel (shared/orders/invoices.ts) and by a processed refund (shared/orders/credit-notes.ts).
 */
export const listOrderInvoices = storeProcedure({
  router: "orders",
  name: "invoices",
  description:
    "An order's tax invoices, one per shipped parcel whose location has a GSTIN, oldest first: number (e.g. INV/25-26/000001, a series per GSTIN and financial year), issuedAt, gstin, financialYear, parcelId and document, the invoice as printed (supplier, recipient, place of supply, lines with taxable value, rate and CGST/SGST/IGST, tax by rate, totals; money in minor units, rates in basis points), frozen at issue. notIssued: the shipped parcels without one, each with reason and message (no_gstin, no_legal_identity: its location lacks them; shipped_before: it shipped before they were set). creditNotes: the credit notes of its processed refunds, oldest first (number CN/25-26/000001 in the GSTIN's own series, refundId, invoiceId of the invoice it reduces, issuedAt, gstin, financialYear, document with the taxable value and tax credited per line, per rate and per component), issued moments after the refund.",
  access: "orders.read",
  mutates: false,
  output: z.object({
    invoices: z.array(z.object({ id: out.id, parcelId: out.id, ...issued })),
    notIssued: z.array(z.object({ parcelId: out.id, reason: z.string(), message: z.string() })),
    creditNotes: z.array(z.object({ id: out.id, refundId: out.id, invoiceId: out.id, ...issued })),
  }),
  customerDetails: true,
  input: z.strictObject({ id: z.uuid().describe("The order's id") }),
  read: (q, { store }, input) => orderInvoicesPlan(q, store, input.id),
});

export const invoiceProcedures = [listOrderInvoices];
