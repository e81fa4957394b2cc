import type { SQL } from "drizzle-orm";
import { refund, shopOrder, taxCreditNote } from "../../db/schema";
import { EXAMPLE, narrow, pg, statement } from "../../db/statement";
import { sql } from "../../db/steps";
import type { DocumentModel } from "../../documents/model";
import type { Charged } from "../../rules/gst-credit";
import { seriesNumber } from "./invoices";

/** The statements of credit notes (../credit-notes.ts): what a refund's credit notes are made from, their issue, an order's credit notes. */

const { id: ID, store: STORE } = EXAMPLE;

export interface CreditInvoiceRow {
  id: string;
  number: string;
  gstin: string;
  document: DocumentModel;
  /** The order line of each goods line of the invoice, in the invoice's order (its shipping lines follow them). */
  orderLines: string[];
  /** What each earlier credit note credited of each invoice line. */
  credited: Charged[][];
}

/**
 * What a refund's credit notes are made of: the refund, whether it has its credit notes already, how
 * many the order has (the change's guard), the return's lines, and the order's invoices with what earlier
 * credit notes took of each of their lines.
 */
export const refundToCredit = statement("orders.refundToCredit", {
  row: {
    orderId: refund.orderId,
    amount: pg.float8(),
    status: refund.status,
    returnId: refund.returnId,
    reason: refund.reason,
    credited: pg.bool(),
    orderCreditNotes: pg.int4(),
    orderNumber: shopOrder.number,
    returnLines: pg.jsonb<{ orderLineId: string; quantity: number }[]>(),
    invoices: pg.jsonb<CreditInvoiceRow[]>(),
  },
  examples: [[STORE, ID]],
  sql: (store: SQL, refundId: string) =>
    sql`select r.order_id as "orderId", r.amount::float8 as amount, r.status, r.return_id as "returnId", r.reason,
          exists (select 1 from tax_credit_note c where c.store_id = r.store_id and c.refund_id = r.id) as credited,
          (select count(*)::int from tax_credit_note c where c.store_id = r.store_id and c.order_id = r.order_id) as "orderCreditNotes",
          o.number as "orderNumber",
          coalesce((select jsonb_agg(jsonb_build_object('orderLineId', rl.order_line_id, 'quantity', rl.quantity) order by rl.id)
                    from order_return_line rl where rl.store_id = r.store_id and rl.return_id = r.return_id), '[]'::jsonb) as "returnLines",
          coalesce((select jsonb_agg(jsonb_build_object(
                      'id', i.id, 'number', i.number, 'gstin', i.gstin, 'document', i.document,
                      'orderLines', coalesce((select jsonb_agg(fl.order_line_id order by ol.position, fl.id)
                                    from fulfillment_order_line fl join order_line ol on ol.store_id = fl.store_id and ol.id = fl.order_line_id
                                    where fl.store_id = i.store_id and fl.fulfillment_order_id = i.fulfillment_order_id), '[]'::jsonb),
                      'credited', coalesce((select jsonb_agg(c.credited order by c.issued_at, c.number)
                                    from tax_credit_note c where c.store_id = i.store_id and c.invoice_id = i.id), '[]'::jsonb))
                    order by i.issued_at, i.number)
                    from tax_invoice i where i.store_id = r.store_id and i.order_id = r.order_id), '[]'::jsonb) as invoices
        from refund r join shop_order o on o.store_id = r.store_id and o.id = r.order_id
        where r.store_id = ${store} and r.id = ${refundId}`,
});

export interface CreditNoteDraft {
  orderId: string;
  refundId: string;
  invoiceId: string;
  gstin: string;
  financialYear: string;
  /** The number's prefix: the serial number (6 digits, more past 999,999) follows it. */
  prefix: string;
  issuedAt: Date;
  /** What it credits of each of the invoice's lines. */
  credited: Charged[];
  /** The document without its number (added here, once the series gave it). */
  document: Omit<DocumentModel, "number">;
}

/** Issues a credit note: its GSTIN's credit-note series counted on (locked until commit), the note inserted with that number. */
export const issueTaxCreditNote = statement("orders.issueTaxCreditNote", {
  row: { id: taxCreditNote.id, number: taxCreditNote.number },
  examples: [
    [
      STORE,
      { orderId: ID, refundId: ID, invoiceId: ID, gstin: "27ABCDE1234F1Z0", financialYear: "2025-26", prefix: "CN/25-26/", issuedAt: new Date(0), credited: [], document: {} as CreditNoteDraft["document"] },
    ],
  ],
  sql: (store: SQL, d: CreditNoteDraft) =>
    sql`with ${seriesNumber(store, d, "credit_note")}
        insert into tax_credit_note (store_id, order_id, refund_id, invoice_id, gstin, financial_year, number, issued_at, credited, document)
        select ${store}, ${d.orderId}, ${d.refundId}, ${d.invoiceId}, ${d.gstin}, ${d.financialYear}, number, ${d.issuedAt},
               ${JSON.stringify(d.credited)}::jsonb, ${JSON.stringify(d.document)}::jsonb || jsonb_build_object('number', number)
        from numbered
        returning id, number`,
});

/** The refund still processed and uncredited, and the order's credit notes as many as read: else the unit lost a race. */
export const creditAsRead = (store: SQL, refundId: string, orderId: string, count: number) =>
  sql`(select status from refund where store_id = ${store} and id = ${refundId}) = 'processed'
      and not exists (select 1 from tax_credit_note where store_id = ${store} and refund_id = ${refundId})
      and (select count(*) from tax_credit_note where store_id = ${store} and order_id = ${orderId}) = ${count}`;

/** An order's credit notes, oldest first, with their documents. */
export const orderCreditNotes = statement("orders.orderCreditNotes", {
  row: {
    id: taxCreditNote.id,
    refundId: taxCreditNote.refundId,
    invoiceId: taxCreditNote.invoiceId,
    number: taxCreditNote.number,
    gstin: taxCreditNote.gstin,
    financialYear: taxCreditNote.financialYear,
    issuedAt: taxCreditNote.issuedAt,
    document: narrow<DocumentModel>(taxCreditNote.document),
  },
  examples: [[STORE, ID]],
  sql: (store: SQL, orderId: string) =>
    sql`select id, refund_id as "refundId", invoice_id as "invoiceId", number, gstin, financial_year as "financialYear", issued_at as "issuedAt", document
        from tax_credit_note where store_id = ${store} and order_id = ${orderId} order by issued_at, number`,
});
