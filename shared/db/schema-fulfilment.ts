/** The drizzle tables of shipments, returns, refunds and merchant tasks (migrations/0013; see ./schema.ts). */
import { bigint, boolean, integer, jsonb, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { createdAt, ts, updatedAt } from "./columns";
import { storeRef } from "./schema-core";

export const SHIPMENT_ROW_STATUSES = ["pending", "in_transit", "delivered", "rto_initiated", "rto_delivered", "cancelled"] as const;

export const shipment = pgTable("shipment", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  orderId: uuid("order_id").notNull(),
  fulfillmentOrderId: uuid("fulfillment_order_id").notNull(),
  provider: text("provider").notNull(),
  awb: text("awb").notNull(),
  providerRef: text("provider_ref"),
  courierName: text("courier_name"),
  trackingUrl: text("tracking_url"),
  status: text("status", { enum: SHIPMENT_ROW_STATUSES }).notNull().default("pending"),
  providerStatus: text("provider_status"),
  statusAt: ts("status_at").notNull().defaultNow(),
  /** When the tracking job last asked the courier. */
  trackedAt: ts("tracked_at"),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export const shipmentEvent = pgTable("shipment_event", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  shipmentId: uuid("shipment_id").notNull(),
  status: text("status", { enum: SHIPMENT_ROW_STATUSES }).notNull(),
  providerStatus: text("provider_status"),
  source: text("source", { enum: ["merchant", "webhook", "tracking"] }).notNull(),
  occurredAt: ts("occurred_at").notNull().defaultNow(),
  createdAt: createdAt(),
});

export const RETURN_STATUSES = ["requested", "approved", "rejected", "received", "refunded"] as const;

export const orderReturn = pgTable("order_return", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  orderId: uuid("order_id").notNull(),
  number: integer("number").notNull(),
  status: text("status", { enum: RETURN_STATUSES }).notNull().default("requested"),
  reason: text("reason").notNull(),
  note: text("note"),
  restocked: boolean("restocked").notNull().default(false),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export const orderReturnLine = pgTable("order_return_line", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  returnId: uuid("return_id").notNull(),
  orderLineId: uuid("order_line_id").notNull(),
  quantity: integer("quantity").notNull(),
});

export const REFUND_STATUSES = ["pending", "processed", "failed"] as const;

export const refund = pgTable("refund", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  orderId: uuid("order_id").notNull(),
  paymentAttemptId: uuid("payment_attempt_id").notNull(),
  returnId: uuid("return_id"),
  amount: bigint("amount", { mode: "number" }).notNull(),
  reason: text("reason"),
  status: text("status", { enum: REFUND_STATUSES }).notNull().default("pending"),
  providerRefundId: text("provider_refund_id"),
  lastError: text("last_error"),
  createdBy: uuid("created_by"),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export const MERCHANT_TASK_KINDS = ["rto", "paid_late", "refund_failed", "balance_expired", "payment_review"] as const;

export const merchantTask = pgTable("merchant_task", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  kind: text("kind", { enum: MERCHANT_TASK_KINDS }).notNull(),
  orderId: uuid("order_id"),
  subjectId: uuid("subject_id").notNull(),
  title: text("title").notNull(),
  status: text("status", { enum: ["open", "done"] }).notNull().default("open"),
  createdAt: createdAt(),
  doneAt: ts("done_at"),
  doneBy: uuid("done_by"),
});

/** A series of tax documents' next serial number: per GSTIN, financial year and kind (migration 0038). */
export const taxDocumentCounter = pgTable("tax_document_counter", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  gstin: text("gstin").notNull(),
  financialYear: text("financial_year").notNull(),
  kind: text("kind", { enum: ["invoice", "credit_note"] }).notNull(),
  nextNumber: integer("next_number").notNull(),
});

/** A parcel's tax invoice, its printed content frozen at issue (migration 0038; shared/orders/invoices.ts). */
export const taxInvoice = pgTable("tax_invoice", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  orderId: uuid("order_id").notNull(),
  fulfillmentOrderId: uuid("fulfillment_order_id").notNull(),
  gstin: text("gstin").notNull(),
  financialYear: text("financial_year").notNull(),
  number: text("number").notNull(),
  issuedAt: ts("issued_at").notNull(),
  document: jsonb("document").notNull(),
});

/** A credit note against a tax invoice for a refund, its printed content frozen at issue (migration 0039; shared/orders/credit-notes.ts). */
export const taxCreditNote = pgTable("tax_credit_note", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  orderId: uuid("order_id").notNull(),
  refundId: uuid("refund_id").notNull(),
  invoiceId: uuid("invoice_id").notNull(),
  gstin: text("gstin").notNull(),
  financialYear: text("financial_year").notNull(),
  number: text("number").notNull(),
  issuedAt: ts("issued_at").notNull(),
  credited: jsonb("credited").notNull(),
  document: jsonb("document").notNull(),
});
