/** The drizzle tables of orders, parcels, payment attempts and GST rates (see ./schema.ts). */
import { sql } from "drizzle-orm";
import { bigint, boolean, char, date, integer, jsonb, pgTable, primaryKey, text, uuid } from "drizzle-orm/pg-core";
import { createdAt, deliveryTries, ts, updatedAt } from "./columns";
import { TAX_CLASSES } from "./schema-catalogue";
import { storeRef } from "./schema-core";

// Orders, parcels and payment attempts (migrations/0009_orders.sql) -------------------------------------

const money = (name: string) => bigint(name, { mode: "number" });

export const orderCounter = pgTable("order_counter", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  nextNumber: integer("next_number").notNull().default(1001),
});

export const ORDER_STATUSES = ["open", "completed", "cancelled", "expired"] as const;
export const PAYMENT_METHODS = ["gateway", "manual_transfer"] as const;
/** Where an order came from (migration 0054): the storefront's checkout, or a checkout session an AI agent completed over UCP. */
export const ORDER_CHANNELS = ["online_store", "ucp"] as const;
export type OrderChannel = (typeof ORDER_CHANNELS)[number];

export const shopOrder = pgTable("shop_order", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  number: integer("number").notNull(),
  cartId: uuid("cart_id"),
  email: text("email").notNull(),
  /** lower(email), kept by a trigger (migration 0026): an index condition under RLS, where lower() is not. */
  emailLower: text("email_lower"),
  phone: text("phone"),
  shippingAddress: jsonb("shipping_address").$type<Record<string, string>>().notNull(),
  shipToState: text("ship_to_state").notNull(),
  paymentMethod: text("payment_method", { enum: PAYMENT_METHODS }).notNull(),
  channel: text("channel", { enum: ORDER_CHANNELS }).notNull().default("online_store"),
  currency: char("currency", { length: 3 }).notNull(),
  subtotal: money("subtotal").notNull(),
  discount: money("discount").notNull().default(0),
  shipping: money("shipping").notNull().default(0),
  tax: money("tax").notNull().default(0),
  total: money("total").notNull(),
  discountCode: text("discount_code"),
  status: text("status", { enum: ORDER_STATUSES }).notNull().default("open"),
  paymentStatus: text("payment_status").notNull().default("unpaid"),
  fulfillmentStatus: text("fulfillment_status").notNull().default("unfulfilled"),
  accessKeyHash: text("access_key_hash"),
  /** The order link in emails (migrations/0023_order_email_links.sql). */
  emailKeyHash: text("email_key_hash"),
  expiresAt: ts("expires_at"),
  paymentRemindedAt: ts("payment_reminded_at"),
  /** The part of the total due when the backordered pre-order units arrive (docs/order-status.md, "Pre-orders"). */
  balanceAmount: money("balance_amount").notNull().default(0),
  balanceRequestedAt: ts("balance_requested_at"),
  balanceRemindedAt: ts("balance_reminded_at"),
  balanceExpiredAt: ts("balance_expired_at"),
  /** Migration 0032: the buyer's network (a hash, never the address), the discount whose use was counted, and the facts that close the order. */
  buyerNetworkHash: text("buyer_network_hash"),
  discountId: uuid("discount_id"),
  /** A business purchase (migration 0036): the buyer's GSTIN and legal name, printed on the invoice. */
  buyerGstin: text("buyer_gstin"),
  buyerLegalName: text("buyer_legal_name"),
  cancelledAt: ts("cancelled_at"),
  expiredAt: ts("expired_at"),
  placedAt: ts("placed_at").notNull().defaultNow(),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export const orderLine = pgTable("order_line", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  orderId: uuid("order_id").notNull(),
  variantId: uuid("variant_id"),
  productTitle: text("product_title").notNull(),
  variantTitle: text("variant_title").notNull(),
  sku: text("sku"),
  taxClass: text("tax_class", { enum: TAX_CLASSES }).notNull(),
  preorder: boolean("preorder").notNull().default(false),
  quantity: integer("quantity").notNull(),
  unitPrice: money("unit_price").notNull(),
  lineTotal: money("line_total").notNull(),
  discount: money("discount").notNull().default(0),
  position: integer("position").notNull().default(0),
});

export const fulfillmentOrder = pgTable("fulfillment_order", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  orderId: uuid("order_id").notNull(),
  locationId: uuid("location_id"),
  originState: text("origin_state"),
  subtotal: money("subtotal").notNull(),
  discount: money("discount").notNull().default(0),
  shipping: money("shipping").notNull().default(0),
  tax: money("tax").notNull().default(0),
  cgst: money("cgst").notNull().default(0),
  sgst: money("sgst").notNull().default(0),
  igst: money("igst").notNull().default(0),
  position: integer("position").notNull().default(0),
  createdAt: createdAt(),
});

export const fulfillmentOrderLine = pgTable("fulfillment_order_line", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  fulfillmentOrderId: uuid("fulfillment_order_id").notNull(),
  orderLineId: uuid("order_line_id").notNull(),
  quantity: integer("quantity").notNull(),
  reserved: integer("reserved").notNull(),
  backordered: integer("backordered").notNull().default(0),
});

export const PAYMENT_ATTEMPT_STATUSES = ["created", "pending", "authorized", "captured", "refunded", "failed"] as const;

export const paymentAttempt = pgTable("payment_attempt", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  orderId: uuid("order_id").notNull(),
  attempt: integer("attempt").notNull(),
  idempotencyKey: text("idempotency_key").notNull(),
  provider: text("provider").notNull(),
  providerRef: text("provider_ref"),
  providerPaymentId: text("provider_payment_id"),
  status: text("status", { enum: PAYMENT_ATTEMPT_STATUSES }).notNull().default("created"),
  amount: money("amount").notNull(),
  lastError: text("last_error"),
  /** A report of money that did not add up (migration 0034): why, what it said, when. */
  reviewReason: text("review_reason", { enum: ["amount_below", "currency_differs"] }),
  reviewReport: jsonb("review_report"),
  reviewAt: ts("review_at"),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export const webhookReceipt = pgTable("webhook_receipt", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  provider: text("provider").notNull(),
  eventId: text("event_id").notNull(),
  receivedAt: ts("received_at").notNull().defaultNow(),
});

/** GST rate per tax class from a day on (migration 0010); global, read-only for the runtime (docs/gst.md). */
export const gstRate = pgTable(
  "gst_rate",
  {
    taxClass: text("tax_class", { enum: TAX_CLASSES }).notNull(),
    effectiveFrom: date("effective_from", { mode: "string" }).notNull(),
    rateBp: integer("rate_bp").notNull(),
    /** Value-based classes (migration 0037): rate_bp up to this unit value before GST, rate_above_bp above. */
    thresholdMinor: bigint("threshold_minor", { mode: "number" }),
    rateAboveBp: integer("rate_above_bp"),
  },
  (t) => [primaryKey({ columns: [t.taxClass, t.effectiveFrom] })],
);

// UCP checkout sessions (migrations/0053_ucp_checkout_sessions.sql; shared/ucp/checkout-sessions.ts) ------

export const UCP_SESSION_STATUSES = ["incomplete", "requires_escalation", "ready_for_complete", "complete_in_progress", "completed", "canceled"] as const;
export type UcpSessionStatus = (typeof UCP_SESSION_STATUSES)[number];

/** What an agent asked for in a checkout session, as it sent it; prices and totals are recomputed on every answer. */
export const ucpCheckoutSession = pgTable("ucp_checkout_session", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  agentProfile: text("agent_profile").notNull(),
  status: text("status", { enum: UCP_SESSION_STATUSES }).notNull().default("incomplete"),
  lineItems: jsonb("line_items").$type<{ variant_id: string; quantity: number }[]>().notNull().default([]),
  buyer: jsonb("buyer").$type<Record<string, string>>(),
  destination: jsonb("destination").$type<Record<string, string>>(),
  discountCodes: text("discount_codes").array().notNull().default([]),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
  expiresAt: ts("expires_at").notNull().default(sql`now() + interval '6 hours'`),
  orderId: uuid("order_id"),
  /** The agent platform's order webhook URL, from its profile when the session was completed (migration 0054). */
  webhookUrl: text("webhook_url"),
  /** The store domain the session was made on (migration 0057): its order updates name it. */
  host: text("host"),
});

/** An order update to the agent platform of the order's UCP session (migration 0055; shared/ucp/order-webhooks.ts): one per outbox event. */
export const ucpOrderDelivery = pgTable("ucp_order_delivery", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  orderId: uuid("order_id").notNull(),
  eventId: uuid("event_id").notNull(),
  eventKind: text("event_kind").notNull(),
  eventCreatedAt: ts("event_created_at").notNull(),
  ...deliveryTries(),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});
