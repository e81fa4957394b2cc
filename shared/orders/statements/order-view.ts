import type { SQL } from "drizzle-orm";
import { shopOrder, ucpCheckoutSession, type OrderChannel } from "../../db/schema";
import { EXAMPLE, orNull, pg, statement } from "../../db/statement";
import { sql } from "../../db/steps";

/** The statements that show an order: to the merchant (../order-view.ts, ../order-detail.ts) and to its buyer (../access.ts). */

const { id: ID, store: STORE } = EXAMPLE;

/** An order as clients see it (issue 11 "Shapes"): money in minor units, with its parcels. */
export interface ParcelView {
  id: string;
  locationId: string | null;
  subtotal: number;
  discount: number;
  shipping: number;
  tax: number;
  cgst: number;
  sgst: number;
  igst: number;
}

export interface OrderView {
  id: string;
  number: number;
  email: string;
  status: string;
  paymentStatus: string;
  fulfillmentStatus: string;
  /** Where the order came from (migration 0054): the storefront's checkout, or an AI agent's UCP checkout session. */
  channel: OrderChannel;
  currency: string;
  subtotal: number;
  discount: number;
  shipping: number;
  tax: number;
  total: number;
  /** A business purchase (migration 0036): the buyer's GSTIN and legal name; null otherwise. */
  buyerGstin: string | null;
  buyerLegalName: string | null;
  parcels: ParcelView[];
}

/** The parts of what orders.get answers (../order-detail.ts), as the statement builds them. */
export interface OrderLineView {
  id: string;
  variantId: string | null;
  productTitle: string;
  variantTitle: string;
  sku: string | null;
  taxClass: string;
  quantity: number;
  unitPrice: number;
  lineTotal: number;
  discount: number;
  preorder: boolean;
}

/** A report of money that did not add up, kept on its attempt (docs/order-status.md, "Payments under review"). */
export interface AttemptReview {
  reason: "amount_below" | "currency_differs";
  /** What was reported: the status it claimed, its amount (minor units), currency, payment id and trigger. */
  report: { status: string; amount: number; currency: string | null; paymentId: string | null; trigger: string };
  at: string;
}

/** A payment attempt: its number, idempotency key, status, provider and amount in minor units. */
export interface AttemptRead {
  id: string;
  attempt: number;
  idempotencyKey: string;
  status: string;
  provider: string;
  amount: number;
}

export interface AttemptView extends AttemptRead {
  createdAt: Date;
  review: AttemptReview | null;
}

export interface OrderEventView {
  kind: string;
  createdAt: Date;
}

export interface ShipmentView {
  id: string;
  parcelId: string;
  provider: string;
  awb: string;
  courierName: string | null;
  trackingUrl: string | null;
  status: string;
  statusAt: string;
  createdAt: string;
  /** What the courier reported, oldest first. */
  events: { status: string; providerStatus: string | null; source: string; occurredAt: string }[];
}

export interface RefundRowView {
  id: string;
  amount: number;
  status: string;
  reason: string | null;
  returnId: string | null;
  createdAt: string;
}

export interface ReturnView {
  id: string;
  number: number;
  status: string;
  reason: string;
  note: string | null;
  restocked: boolean;
  lines: { orderLineId: string; quantity: number }[];
  createdAt: string;
}

export interface TaskView {
  id: string;
  kind: string;
  /** What the task is about: the shipment, attempt or refund (by id). */
  subjectId: string;
  title: string;
  status: string;
  createdAt: string;
}


/** The host of an agent platform's profile URL (`https://agent.example.com/.well-known/ucp` → `agent.example.com`). */
export const AGENT_HOST = (profileUrl: SQL) => sql`substring(${profileUrl} from '^[A-Za-z][A-Za-z0-9+.-]*://([^/?#]+)')`;

/** The order and its parcels (no row when no such order in the store). */
export const orderView = statement("orders.orderView", {
  row: { order: pg.json<OrderView>() },
  examples: [
    [STORE, ID],
    [STORE, sql`(select ${ID}::uuid)`],
  ],
  sql: (store: SQL, orderId: string | SQL) =>
    sql`select json_build_object(
       'id', o.id, 'number', o.number, 'email', o.email, 'status', o.status, 'paymentStatus', o.payment_status,
       'fulfillmentStatus', o.fulfillment_status, 'channel', o.channel, 'currency', o.currency, 'subtotal', o.subtotal, 'discount', o.discount,
       'shipping', o.shipping, 'tax', o.tax, 'total', o.total, 'buyerGstin', o.buyer_gstin, 'buyerLegalName', o.buyer_legal_name,
       'parcels', coalesce((select json_agg(json_build_object('id', f.id, 'locationId', f.location_id, 'subtotal', f.subtotal,
           'discount', f.discount, 'shipping', f.shipping, 'tax', f.tax, 'cgst', f.cgst, 'sgst', f.sgst, 'igst', f.igst) order by f.position)
         from fulfillment_order f where f.store_id = o.store_id and f.order_id = o.id), '[]'::json)) as order
     from shop_order o where o.store_id = ${store} and o.id = ${orderId}`,
});

/**
 * The order's own fields, lines (by position), attempts (newest first) and the outbox events that name it
 * in `payload.orderId` (oldest first; events of one transaction share its time and are ordered by kind),
 * read by `order_id`, which a trigger fills from the payload (migration 0026; an expression on the payload
 * cannot use an index under RLS).
 */
export const orderDetail = statement("orders.orderDetail", {
  row: {
    phone: shopOrder.phone,
    shipping_address: shopOrder.shippingAddress,
    payment_method: shopOrder.paymentMethod,
    discount_code: shopOrder.discountCode,
    placed_at: shopOrder.placedAt,
    expires_at: shopOrder.expiresAt,
    lines: pg.json<OrderLineView[]>(),
    attempts: pg.json<(Omit<AttemptView, "createdAt"> & { createdAt: string })[]>(),
    events: pg.json<(Omit<OrderEventView, "createdAt"> & { createdAt: string })[]>(),
    shipments: pg.json<ShipmentView[]>(),
    refunds: pg.json<RefundRowView[]>(),
    returns: pg.json<ReturnView[]>(),
    tasks: pg.json<TaskView[]>(),
    agent_profile: orNull(ucpCheckoutSession.agentProfile),
    agent_host: orNull(pg.text()),
  },
  examples: [[STORE, ID]],
  sql: (store: SQL, orderId: string) =>
    sql`select o.phone, o.shipping_address, o.payment_method, o.discount_code, o.placed_at, o.expires_at,
       coalesce((select json_agg(json_build_object('id', l.id, 'variantId', l.variant_id, 'productTitle', l.product_title,
           'variantTitle', l.variant_title, 'sku', l.sku, 'taxClass', l.tax_class, 'quantity', l.quantity, 'unitPrice', l.unit_price,
           'lineTotal', l.line_total, 'discount', l.discount, 'preorder', l.preorder) order by l.position, l.id)
         from order_line l where l.store_id = o.store_id and l.order_id = o.id), '[]'::json) as lines,
       coalesce((select json_agg(json_build_object('id', a.id, 'attempt', a.attempt, 'idempotencyKey', a.idempotency_key, 'status', a.status,
           'provider', a.provider, 'amount', a.amount, 'createdAt', a.created_at,
           'review', case when a.review_reason is not null then json_build_object('reason', a.review_reason, 'report', a.review_report, 'at', a.review_at) end)
           order by a.attempt desc)
         from payment_attempt a where a.store_id = o.store_id and a.order_id = o.id), '[]'::json) as attempts,
       coalesce((select json_agg(json_build_object('kind', e.kind, 'createdAt', e.created_at) order by e.created_at, e.kind, e.id)
         from outbox_event e where e.store_id = o.store_id and e.order_id = o.id), '[]'::json) as events,
       coalesce((select json_agg(json_build_object('id', s.id, 'parcelId', s.fulfillment_order_id, 'provider', s.provider, 'awb', s.awb,
           'courierName', s.courier_name, 'trackingUrl', s.tracking_url, 'status', s.status, 'statusAt', s.status_at, 'createdAt', s.created_at,
           'events', coalesce((select json_agg(json_build_object('status', se.status, 'providerStatus', se.provider_status, 'source', se.source,
               'occurredAt', se.occurred_at) order by se.occurred_at, se.created_at)
             from shipment_event se where se.store_id = s.store_id and se.shipment_id = s.id), '[]'::json)) order by s.created_at, s.id)
         from shipment s where s.store_id = o.store_id and s.order_id = o.id), '[]'::json) as shipments,
       coalesce((select json_agg(json_build_object('id', r.id, 'amount', r.amount, 'status', r.status, 'reason', r.reason, 'returnId', r.return_id,
           'createdAt', r.created_at) order by r.created_at, r.id)
         from refund r where r.store_id = o.store_id and r.order_id = o.id), '[]'::json) as refunds,
       coalesce((select json_agg(json_build_object('id', t.id, 'number', t.number, 'status', t.status, 'reason', t.reason, 'note', t.note,
           'restocked', t.restocked, 'createdAt', t.created_at,
           'lines', (select coalesce(json_agg(json_build_object('orderLineId', rl.order_line_id, 'quantity', rl.quantity)), '[]'::json)
                     from order_return_line rl where rl.store_id = t.store_id and rl.return_id = t.id)) order by t.number)
         from order_return t where t.store_id = o.store_id and t.order_id = o.id), '[]'::json) as returns,
       coalesce((select json_agg(json_build_object('id', k.id, 'kind', k.kind, 'subjectId', k.subject_id, 'title', k.title, 'status', k.status, 'createdAt', k.created_at)
           order by k.created_at, k.id)
         from merchant_task k where k.store_id = o.store_id and k.order_id = o.id), '[]'::json) as tasks,
       u.agent_profile, ${AGENT_HOST(sql`u.agent_profile`)} as agent_host
     from shop_order o
     left join ucp_checkout_session u on u.store_id = o.store_id and u.order_id = o.id
     where o.store_id = ${store} and o.id = ${orderId}`,
});

/** An order's key hashes, when `opens` (../access.ts `opensOrder`) holds for it. */
export const buyerKeys = statement("orders.buyerKeys", {
  row: { access_key_hash: shopOrder.accessKeyHash, email_key_hash: shopOrder.emailKeyHash },
  examples: [[STORE, ID, sql`true`]],
  sql: (store: SQL, orderId: string, opens: SQL) =>
    sql`select o.access_key_hash, o.email_key_hash from shop_order o where o.store_id = ${store} and o.id = ${orderId} and ${opens}`,
});

/** A pre-order balance as the buyer's order page says it (docs/order-status.md, "Pre-orders"): whether it was asked for, and what is left to pay. */
export interface BuyerBalance {
  state: "none" | "later" | "due" | "expired";
  left: number;
}

/** A shipment as the buyer's order page shows it. */
export interface BuyerShipment {
  awb: string;
  courierName: string | null;
  trackingUrl: string | null;
  status: string;
}

/** What the buyer's order page says of an order `opens` opens: its newest attempt's status, the balance, the shipments not cancelled. */
export const buyerOrderFacts = statement("orders.buyerOrderFacts", {
  row: { status: orNull(pg.text()), payment_method: shopOrder.paymentMethod, balance: pg.json<BuyerBalance>(), shipments: pg.json<BuyerShipment[]>() },
  examples: [[STORE, ID, sql`true`]],
  sql: (store: SQL, orderId: string, opens: SQL) =>
    sql`select (select a.status from payment_attempt a where a.store_id = o.store_id and a.order_id = o.id order by a.attempt desc limit 1) as status,
       o.payment_method,
       json_build_object('state', case when o.balance_amount = 0 then 'none' when o.balance_expired_at is not null then 'expired'
           when o.balance_requested_at is not null then 'due' else 'later' end, 'left', o.total -
         (select coalesce(sum(a.amount), 0) from payment_attempt a where a.store_id = o.store_id and a.order_id = o.id and a.status in ('captured', 'refunded')))
         as balance,
       coalesce((select json_agg(json_build_object('awb', s.awb, 'courierName', s.courier_name, 'trackingUrl', s.tracking_url,
           'status', s.status) order by s.created_at) from shipment s where s.store_id = o.store_id and s.order_id = o.id
           and s.status <> 'cancelled'), '[]'::json) as shipments
     from shop_order o where o.store_id = ${store} and o.id = ${orderId} and ${opens}`,
});
