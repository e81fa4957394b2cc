import type { SQL } from "drizzle-orm";
import { fulfillmentOrder, location, shopOrder, taxInvoice, type TaxClass } from "../../db/schema";
import { EXAMPLE, narrow, orNull, pg, statement } from "../../db/statement";
import { sql } from "../../db/steps";
import type { DocumentModel } from "../../documents/model";

/** The statements of tax invoices (../invoices.ts): what an invoice is made from, its issue, an order's invoices. */

const { id: ID, store: STORE } = EXAMPLE;

export interface InvoiceLineRow {
  description: string;
  sku: string | null;
  /** The product's HSN code today (null when it has none, or is gone). */
  hsn: string | null;
  taxClass: TaxClass;
  quantity: number;
  unitPrice: number;
}

export interface InvoiceRateRow {
  tax_class: TaxClass;
  rate_bp: number;
  threshold_minor: number | null;
  rate_above_bp: number | null;
}

/**
 * What a parcel's invoice is made of: whether it has one, its location's registration, its stored money,
 * the order's buyer and address, its lines in order (as checkout split the parcel's discount over them),
 * and the GST rates of the day the order was placed in India (as checkout priced it).
 */
export const parcelToInvoice = statement("orders.parcelToInvoice", {
  row: {
    invoiced: pg.bool(),
    gstin: orNull(location.gstin),
    legalName: orNull(location.legalName),
    addressLine1: orNull(location.addressLine1),
    addressLine2: orNull(location.addressLine2),
    city: orNull(location.city),
    postalCode: orNull(location.postalCode),
    originState: fulfillmentOrder.originState,
    subtotal: pg.float8(),
    discount: pg.float8(),
    shipping: pg.float8(),
    tax: pg.float8(),
    cgst: pg.float8(),
    sgst: pg.float8(),
    igst: pg.float8(),
    orderNumber: shopOrder.number,
    placedAt: shopOrder.placedAt,
    shipToState: shopOrder.shipToState,
    shippingAddress: shopOrder.shippingAddress,
    buyerGstin: shopOrder.buyerGstin,
    buyerLegalName: shopOrder.buyerLegalName,
    lines: pg.jsonb<InvoiceLineRow[]>(),
    rates: pg.jsonb<InvoiceRateRow[]>(),
  },
  examples: [[STORE, { orderId: ID, parcelId: ID }]],
  sql: (store: SQL, p: { orderId: string; parcelId: string }) =>
    sql`select exists (select 1 from tax_invoice t where t.store_id = f.store_id and t.fulfillment_order_id = f.id) as invoiced,
          l.gstin, l.legal_name as "legalName", l.address_line1 as "addressLine1", l.address_line2 as "addressLine2", l.city, l.postal_code as "postalCode",
          f.origin_state as "originState", f.subtotal::float8 as subtotal, f.discount::float8 as discount, f.shipping::float8 as shipping,
          f.tax::float8 as tax, f.cgst::float8 as cgst, f.sgst::float8 as sgst, f.igst::float8 as igst,
          o.number as "orderNumber", o.placed_at as "placedAt", o.ship_to_state as "shipToState", o.shipping_address as "shippingAddress",
          o.buyer_gstin as "buyerGstin", o.buyer_legal_name as "buyerLegalName",
          coalesce((select jsonb_agg(jsonb_build_object(
                      'description', ol.product_title || case when ol.variant_title = 'Default' then '' else ' — ' || ol.variant_title end,
                      'sku', ol.sku, 'hsn', (select p.hsn_code from product_variant v join product p on p.store_id = v.store_id and p.id = v.product_id
                                              where v.store_id = ol.store_id and v.id = ol.variant_id),
                      'taxClass', ol.tax_class, 'quantity', fl.quantity, 'unitPrice', ol.unit_price) order by ol.position, fl.id)
                    from fulfillment_order_line fl join order_line ol on ol.store_id = fl.store_id and ol.id = fl.order_line_id
                    where fl.store_id = f.store_id and fl.fulfillment_order_id = f.id), '[]'::jsonb) as lines,
          (select jsonb_agg(to_jsonb(r)) from (select distinct on (tax_class) tax_class, rate_bp, threshold_minor, rate_above_bp from gst_rate
                    where effective_from <= (o.placed_at at time zone 'Asia/Kolkata')::date order by tax_class, effective_from desc) r) as rates
        from fulfillment_order f
        join shop_order o on o.store_id = f.store_id and o.id = f.order_id
        left join location l on l.store_id = f.store_id and l.id = f.location_id
        where f.store_id = ${store} and f.order_id = ${p.orderId} and f.id = ${p.parcelId}`,
});

export interface InvoiceDraft {
  orderId: string;
  parcelId: string;
  gstin: string;
  financialYear: string;
  /** The number's prefix: the serial number (6 digits, more past 999,999) follows it. */
  prefix: string;
  issuedAt: Date;
  /** The document without its number (added here, once the series gave it). */
  document: Omit<DocumentModel, "number">;
}

/**
 * The next number of a document's series (a store's GSTIN, a financial year, a kind) as two CTEs of the
 * document's insert: `counter` upserts the series' row (locked until commit; a rollback gives the number
 * back), `numbered` answers `number`, the prefix and the serial (6 digits, more past 999,999).
 */
export const seriesNumber = (store: SQL, d: { gstin: string; financialYear: string; prefix: string }, kind: "invoice" | "credit_note") =>
  sql`counter as (
        insert into tax_document_counter (store_id, gstin, financial_year, kind, next_number)
        values (${store}, ${d.gstin}, ${d.financialYear}, ${kind}, 2)
        on conflict (store_id, gstin, financial_year, kind) do update set next_number = tax_document_counter.next_number + 1
        returning next_number - 1 as serial),
      numbered as (select ${d.prefix} || case when serial < 1000000 then lpad(serial::text, 6, '0') else serial::text end as number from counter)`;

/**
 * Issues an invoice: the series' counter row upserted (locked until commit; a rollback gives the number
 * back), the invoice inserted with that number in its document. One statement, in the unit that ships.
 */
export const issueTaxInvoice = statement("orders.issueTaxInvoice", {
  row: { id: taxInvoice.id, number: taxInvoice.number },
  examples: [[STORE, { orderId: ID, parcelId: ID, gstin: "27ABCDE1234F1Z0", financialYear: "2025-26", prefix: "INV/25-26/", issuedAt: new Date(0), document: {} as InvoiceDraft["document"] }]],
  sql: (store: SQL, d: InvoiceDraft) =>
    sql`with ${seriesNumber(store, d, "invoice")}
        insert into tax_invoice (store_id, order_id, fulfillment_order_id, gstin, financial_year, number, issued_at, document)
        select ${store}, ${d.orderId}, ${d.parcelId}, ${d.gstin}, ${d.financialYear}, number, ${d.issuedAt}, ${JSON.stringify(d.document)}::jsonb || jsonb_build_object('number', number)
        from numbered
        returning id, number`,
});

/** An order's invoices, oldest first, with their documents. */
export const orderInvoices = statement("orders.orderInvoices", {
  row: {
    id: taxInvoice.id,
    parcelId: taxInvoice.fulfillmentOrderId,
    number: taxInvoice.number,
    gstin: taxInvoice.gstin,
    financialYear: taxInvoice.financialYear,
    issuedAt: taxInvoice.issuedAt,
    document: narrow<DocumentModel>(taxInvoice.document),
  },
  examples: [[STORE, ID]],
  sql: (store: SQL, orderId: string) =>
    sql`select id, fulfillment_order_id as "parcelId", number, gstin, financial_year as "financialYear", issued_at as "issuedAt", document
        from tax_invoice where store_id = ${store} and order_id = ${orderId} order by issued_at, number`,
});

/** An order's shipped parcels without an invoice, with what their location lacks today. */
export const parcelsNotInvoiced = statement("orders.parcelsNotInvoiced", {
  row: { parcelId: fulfillmentOrder.id, hasGstin: pg.bool(), hasIdentity: pg.bool() },
  examples: [[STORE, ID]],
  sql: (store: SQL, orderId: string) =>
    sql`select f.id as "parcelId", coalesce(l.gstin is not null, false) as "hasGstin",
          coalesce(l.legal_name is not null and l.address_line1 is not null, false) as "hasIdentity"
        from fulfillment_order f left join location l on l.store_id = f.store_id and l.id = f.location_id
        where f.store_id = ${store} and f.order_id = ${orderId}
          and exists (select 1 from shipment s where s.store_id = f.store_id and s.fulfillment_order_id = f.id)
          and not exists (select 1 from tax_invoice t where t.store_id = f.store_id and t.fulfillment_order_id = f.id)
        order by f.position, f.id`,
});
