/** The drizzle tables of marketing (migrations/0021_marketing.sql; see ./schema.ts). */
import { boolean, integer, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { createdAt, ts, updatedAt } from "./columns";
import { CONSENT_SOURCES, CONSENT_STATES, storeRef } from "./schema-core";

export const CAMPAIGN_AUDIENCES = ["subscribers", "buyers", "non_buyers"] as const;
export const CAMPAIGN_STATUSES = ["scheduled", "sending", "sent", "cancelled"] as const;
export const AUTOMATION_KINDS = ["abandoned_checkout", "first_order_thanks"] as const;
export type AutomationKind = (typeof AUTOMATION_KINDS)[number];

export const campaign = pgTable("campaign", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  name: text("name").notNull(),
  subject: text("subject").notNull(),
  body: text("body").notNull(),
  audience: text("audience", { enum: CAMPAIGN_AUDIENCES }).notNull(),
  status: text("status", { enum: CAMPAIGN_STATUSES }).notNull().default("scheduled"),
  startsAt: ts("starts_at").notNull(),
  startedAt: ts("started_at"),
  finishedAt: ts("finished_at"),
  recipients: integer("recipients").notNull().default(0),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export const marketingAutomation = pgTable("marketing_automation", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  kind: text("kind", { enum: AUTOMATION_KINDS }).notNull(),
  enabled: boolean("enabled").notNull().default(false),
  delayMinutes: integer("delay_minutes").notNull(),
  subject: text("subject").notNull(),
  body: text("body").notNull(),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export const marketingEnrolment = pgTable("marketing_enrolment", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  automationId: uuid("automation_id").notNull(),
  orderId: uuid("order_id").notNull(),
  email: text("email").notNull(),
  eventId: uuid("event_id").notNull(),
  dueAt: ts("due_at").notNull(),
  status: text("status", { enum: ["waiting", "queued", "skipped"] }).notNull().default("waiting"),
  reason: text("reason", { enum: ["no_consent", "converted", "disabled", "not_first_order"] }),
  createdAt: createdAt(),
  decidedAt: ts("decided_at"),
});

export const marketingMessage = pgTable("marketing_message", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  customerId: uuid("customer_id").notNull(),
  campaignId: uuid("campaign_id"),
  enrolmentId: uuid("enrolment_id"),
  recipient: text("recipient").notNull(),
  status: text("status", { enum: ["queued", "sent", "skipped", "failed"] }).notNull().default("queued"),
  reason: text("reason"),
  attempts: integer("attempts").notNull().default(0),
  claimedUntil: ts("claimed_until"),
  provider: text("provider"),
  providerId: text("provider_id"),
  lastError: text("last_error"),
  unsubscribeKeyHash: text("unsubscribe_key_hash"),
  unsubscribedAt: ts("unsubscribed_at"),
  createdAt: createdAt(),
  sentAt: ts("sent_at"),
});

/** Every change of a customer's marketing consent, with its source and time (migrations/0033_double_opt_in.sql; written by a trigger). */
export const marketingConsentRecord = pgTable("marketing_consent_record", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  customerId: uuid("customer_id").notNull(),
  state: text("state", { enum: CONSENT_STATES }).notNull(),
  source: text("source", { enum: CONSENT_SOURCES }),
  recordedAt: ts("recorded_at").notNull().defaultNow(),
});
