import { z } from "zod";
import { orderInvoicesPlan } from "../orders/invoices";
import { storeProcedure } from "./define";

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
  customerDetails: true,
  input: z.strictObject({ id: z.uuid().describe("The order's id") }),
  read: (q, { store }, input) => orderInvoicesPlan(q, store, input.id),
});

export const invoiceProcedures = [listOrderInvoices];
