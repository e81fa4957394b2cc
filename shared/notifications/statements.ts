import type { SQL } from "drizzle-orm";
import { shopOrder, store } from "../db/schema";
import { EXAMPLE, orNull, pg, statement } from "../db/statement";
import type { ParcelView } from "../orders/statements/order-view";
import { CURRENT_STORE, sql } from "../db/steps";

/** The shopper notifications' statements in SQL (decision 0026): what a message reads (./send.ts) and its record (./deliver.ts). */

const { id: ID } = EXAMPLE;

/** One line of the order as a message lists it (amounts in minor units, as stored). */
export interface LineToNotify {
  productTitle: string;
  variantTitle: string;
  quantity: number;
  unitPrice: number;
  lineTotal: number;
  discount: number;
}

/** One shipment of a parcel: the courier's tracking. */
export interface ShipmentToNotify {
  awb: string;
  courier: string | null;
  trackingUrl: string | null;
  status: string;
}

/** One parcel (a fulfillment order: one origin), its money and GST split as checkout stored it (as the order view shows it), and its shipments. */
export interface ParcelToNotify extends Omit<ParcelView, "id" | "locationId"> {
  originState: string | null;
  lines: { productTitle: string; variantTitle: string; quantity: number }[];
  shipments: ShipmentToNotify[];
  /** Its tax invoice, once the parcel shipped from a registered location (shared/orders/invoices.ts). */
  invoice?: { id: string; number: string } | null;
}

/**
 * The order an event names, with its store's name and published logo and, for a return's event, the return's number; and
 * what the message shows of it (its lines, parcels with their GST split and tracking, the address and the
 * statuses), built as json in the same statement, so a message still reads it in one round trip.
 */
export const orderToNotify = statement("notifications.orderToNotify", {
  row: {
    number: shopOrder.number,
    email: shopOrder.email,
    total: pg.float8(),
    currency: shopOrder.currency,
    store_name: store.name,
    /** The store's published theme's logo (shared/storefront/theme.ts ThemeImage), null when it has none. */
    logo: orNull(pg.jsonb<unknown>()),
    return_number: orNull(pg.int4()),
    subtotal: pg.float8(),
    discount: pg.float8(),
    shipping: pg.float8(),
    tax: pg.float8(),
    status: shopOrder.status,
    payment_status: shopOrder.paymentStatus,
    fulfillment_status: shopOrder.fulfillmentStatus,
    shipping_address: shopOrder.shippingAddress,
    lines: pg.json<LineToNotify[]>(),
    parcels: pg.json<ParcelToNotify[]>(),
  },
  examples: [[ID, ""]],
  sql: (orderId: string, returnId: string) =>
    sql`select o.number, o.email, o.total::float8 as total, o.currency, s.name as store_name,
          (select t.published->'logo' from store_theme t where t.store_id = o.store_id) as logo,
          (select r.number from order_return r where r.store_id = o.store_id and r.id::text = ${returnId}) as return_number,
          o.subtotal::float8 as subtotal, o.discount::float8 as discount, o.shipping::float8 as shipping, o.tax::float8 as tax,
          o.status, o.payment_status, o.fulfillment_status, o.shipping_address,
          coalesce((select json_agg(json_build_object('productTitle', l.product_title, 'variantTitle', l.variant_title, 'quantity', l.quantity,
              'unitPrice', l.unit_price, 'lineTotal', l.line_total, 'discount', l.discount) order by l.position, l.id)
            from order_line l where l.store_id = o.store_id and l.order_id = o.id), '[]'::json) as lines,
          coalesce((select json_agg(json_build_object('originState', f.origin_state, 'subtotal', f.subtotal, 'discount', f.discount, 'shipping', f.shipping,
              'tax', f.tax, 'cgst', f.cgst, 'sgst', f.sgst, 'igst', f.igst,
              'lines', coalesce((select json_agg(json_build_object('productTitle', l.product_title, 'variantTitle', l.variant_title, 'quantity', fl.quantity) order by l.position, l.id)
                from fulfillment_order_line fl join order_line l on l.store_id = fl.store_id and l.id = fl.order_line_id
                where fl.store_id = f.store_id and fl.fulfillment_order_id = f.id), '[]'::json),
              'shipments', coalesce((select json_agg(json_build_object('awb', sh.awb, 'courier', sh.courier_name, 'trackingUrl', sh.tracking_url, 'status', sh.status) order by sh.created_at, sh.id)
                from shipment sh where sh.store_id = f.store_id and sh.fulfillment_order_id = f.id and sh.status <> 'cancelled'), '[]'::json),
              'invoice', (select json_build_object('id', t.id, 'number', t.number) from tax_invoice t where t.store_id = f.store_id and t.fulfillment_order_id = f.id)) order by f.position, f.created_at)
            from fulfillment_order f where f.store_id = o.store_id and f.order_id = o.id), '[]'::json) as parcels
        from shop_order o join store s on s.id = o.store_id where o.store_id = ${CURRENT_STORE} and o.id = ${orderId}`,
});

/** The order's email link stored, unless the event's message was sent already (`mine`: the notification row). */
export const storeOrderLink = statement("notifications.storeOrderLink", {
  row: {},
  examples: [[ID, "0".repeat(64), sql`event_id = ${ID}`]],
  sql: (orderId: string, linkHash: string, mine: SQL) =>
    sql`update shop_order set email_key_hash = ${linkHash} where store_id = ${CURRENT_STORE} and id = ${orderId} and email_key_hash is distinct from ${linkHash}
          and not exists (select 1 from notification where ${mine} and status <> 'sending')`,
});

export interface Try {
  eventId: string;
  template: string;
  recipient: string;
  subject: string;
  status: "sent" | "sending" | "failed";
  provider: string;
  providerId: string | null;
  error: string | null;
}

/** One try on the notification row: made by the first try, counted by every later one, left alone once finished. */
export const recordTry = statement("notifications.recordTry", {
  row: {},
  examples: [[{ eventId: ID, template: "order_confirmation", recipient: "a@example.test", subject: "Thanks", status: "sent", provider: "local", providerId: null, error: null }]],
  sql: (t: Try) =>
    sql`insert into notification (store_id, event_id, template, recipient, subject, attempts, status, provider, provider_id, last_error, sent_at)
        values (${CURRENT_STORE}, ${t.eventId}, ${t.template}, ${t.recipient}, ${t.subject}, 1, ${t.status}, ${t.provider},
          ${t.providerId}, ${t.error}, case when ${t.status} = 'sent' then now() end)
        on conflict (store_id, event_id, template) do update set attempts = notification.attempts + 1, status = excluded.status, provider = excluded.provider,
          provider_id = coalesce(excluded.provider_id, notification.provider_id), last_error = excluded.last_error,
          sent_at = case when excluded.status = 'sent' then now() else notification.sent_at end
        where notification.status = 'sending'`,
});
