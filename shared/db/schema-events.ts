/** The drizzle tables of notifications and the local mailbox (migrations/0019; see ./schema.ts). */
import { integer, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { createdAt, ts } from "./columns";
import { storeRef } from "./schema-core";

export const NOTIFICATION_STATUSES = ["sending", "sent", "failed"] as const;

export const notification = pgTable("notification", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  eventId: uuid("event_id").notNull(),
  template: text("template").notNull(),
  recipient: text("recipient").notNull(),
  subject: text("subject").notNull(),
  status: text("status", { enum: NOTIFICATION_STATUSES }).notNull().default("sending"),
  provider: text("provider"),
  providerId: text("provider_id"),
  attempts: integer("attempts").notNull().default(0),
  lastError: text("last_error"),
  createdAt: createdAt(),
  sentAt: ts("sent_at"),
});

export const mailboxMessage = pgTable("mailbox_message", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  idempotencyKey: text("idempotency_key").notNull(),
  sender: text("sender").notNull(),
  recipient: text("recipient").notNull(),
  subject: text("subject").notNull(),
  textBody: text("text_body").notNull(),
  htmlBody: text("html_body").notNull(),
  tag: text("tag").notNull(),
  createdAt: createdAt(),
});

export const jobFailure = pgTable("job_failure", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  job: text("job").notNull(),
  error: text("error").notNull(),
  failures: integer("failures").notNull().default(1),
  firstFailedAt: ts("first_failed_at").notNull().defaultNow(),
  lastFailedAt: ts("last_failed_at").notNull().defaultNow(),
});
