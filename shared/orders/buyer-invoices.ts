import { and, asc, eq, inArray, type SQL } from "drizzle-orm";
import { taxInvoice } from "../db/schema";
import { plan, type Plan } from "../db/plan";
import { sql, type Q } from "../db/steps";
import type { DocumentModel } from "../documents/model";

/**
 * The tax invoices a buyer sees on their order page (docs/gst.md "Tax invoices"): only when `opens` (the
 * proof of shared/orders/access.ts opensOrder, on the order as `o`) opens the order, in the page's unit.
 */
const opened = (store: SQL, orderId: string, opens: SQL) =>
  and(eq(taxInvoice.storeId, store), inArray(taxInvoice.orderId, sql`(select o.id from shop_order o where o.store_id = ${store} and o.id = ${orderId} and ${opens})`));

/** An invoice's page (or its PDF) for the buyer, with the order's key when they have one (the order page's links, the shipped email's). */
export const invoicePath = (orderId: string, invoiceId: string, key: string | null, pdf = false): string =>
  `/orders/${orderId}/invoices/${invoiceId}${pdf ? ".pdf" : ""}${key ? `?k=${encodeURIComponent(key)}` : ""}`;

/** The order's invoices, oldest first: id and number (for the page's links). */
export function buyerInvoicesPlan(q: Q, store: SQL, orderId: string, opens: SQL): Plan<{ id: string; number: string }[]> {
  return plan(
    [q.select({ id: taxInvoice.id, number: taxInvoice.number }).from(taxInvoice).where(opened(store, orderId, opens)).orderBy(asc(taxInvoice.issuedAt), asc(taxInvoice.number))] as const,
    ([rows]) => rows,
  );
}

/** One invoice of the order, as printed; undefined when it is not the order's or the proof does not open the order. */
export function buyerInvoicePlan(q: Q, store: SQL, p: { orderId: string; invoiceId: string }, opens: SQL): Plan<{ number: string; document: DocumentModel } | undefined> {
  return plan(
    [q.select({ number: taxInvoice.number, document: taxInvoice.document }).from(taxInvoice).where(and(opened(store, p.orderId, opens), eq(taxInvoice.id, p.invoiceId)))] as const,
    ([[row]]) => (row ? { number: row.number, document: row.document as DocumentModel } : undefined),
  );
}
