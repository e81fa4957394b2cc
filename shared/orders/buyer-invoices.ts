import { and, asc, eq, inArray, type SQL } from "drizzle-orm";
import { taxCreditNote, taxInvoice } from "../db/schema";
import { plan, type Plan } from "../db/plan";
import { sql, type Q } from "../db/steps";
import type { DocumentModel } from "../documents/model";

/**
 * The tax invoices and credit notes a buyer sees on their order page (docs/gst.md "Tax invoices", "Credit
 * notes"): only when `opens` (the proof of shared/orders/access.ts opensOrder, on the order as `o`) opens
 * the order, in the page's unit.
 */
export type BuyerDocumentKind = "invoices" | "credit-notes";

const TABLES = { invoices: taxInvoice, "credit-notes": taxCreditNote } as const;

const opened = (kind: BuyerDocumentKind, store: SQL, orderId: string, opens: SQL) => {
  const t = TABLES[kind];
  return and(eq(t.storeId, store), inArray(t.orderId, sql`(select o.id from shop_order o where o.store_id = ${store} and o.id = ${orderId} and ${opens})`));
};

/** A document's page (or its PDF) for the buyer, with the order's key when they have one (the order page's links, the emails'). */
export const documentPath = (kind: BuyerDocumentKind, orderId: string, documentId: string, key: string | null, pdf = false): string =>
  `/orders/${orderId}/${kind}/${documentId}${pdf ? ".pdf" : ""}${key ? `?k=${encodeURIComponent(key)}` : ""}`;

/** An invoice's page (or its PDF) for the buyer (the shipped email's link). */
export const invoicePath = (orderId: string, invoiceId: string, key: string | null, pdf = false): string => documentPath("invoices", orderId, invoiceId, key, pdf);

export interface BuyerDocuments {
  invoices: { id: string; number: string }[];
  creditNotes: { id: string; number: string }[];
}

/** The order's invoices and credit notes, oldest first: id and number (for the page's links). */
export function buyerDocumentsPlan(q: Q, store: SQL, orderId: string, opens: SQL): Plan<BuyerDocuments> {
  const list = (kind: BuyerDocumentKind) => {
    const t = TABLES[kind];
    return q.select({ id: t.id, number: t.number }).from(t).where(opened(kind, store, orderId, opens)).orderBy(asc(t.issuedAt), asc(t.number));
  };
  return plan([list("invoices"), list("credit-notes")] as const, ([invoices, creditNotes]) => ({ invoices, creditNotes }));
}

/** One invoice or credit note of the order, as printed; undefined when it is not the order's or the proof does not open the order. */
export function buyerDocumentPlan(q: Q, store: SQL, p: { kind: BuyerDocumentKind; orderId: string; documentId: string }, opens: SQL): Plan<{ number: string; document: DocumentModel } | undefined> {
  const t = TABLES[p.kind];
  return plan(
    [q.select({ number: t.number, document: t.document }).from(t).where(and(opened(p.kind, store, p.orderId, opens), eq(t.id, p.documentId)))] as const,
    ([[row]]) => (row ? { number: row.number, document: row.document as DocumentModel } : undefined),
  );
}
