/** The drizzle tables of app webhooks (migrations/0017_app_webhooks.sql; see ./schema.ts). */
import { sql } from "drizzle-orm";
import { boolean, integer, jsonb, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { createdAt, DELIVERY_STATUSES, deliveryTries, ts, updatedAt } from "./columns";
import { storeRef } from "./schema-core";

export const storeApp = pgTable("store_app", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  name: text("name").notNull(),
  url: text("url").notNull(),
  events: text("events").array().notNull(),
  active: boolean("active").notNull().default(true),
  secretVersion: integer("secret_version").notNull().default(1),
  secretSalt: text("secret_salt").notNull(),
  secretHash: text("secret_hash").notNull(),
  secretHint: text("secret_hint").notNull(),
  previousSecretVersion: integer("previous_secret_version"),
  previousSecretSalt: text("previous_secret_salt"),
  previousSecretHash: text("previous_secret_hash"),
  previousSecretExpiresAt: ts("previous_secret_expires_at"),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export const APP_DELIVERY_STATUSES = DELIVERY_STATUSES;
export type AppDeliveryStatus = (typeof APP_DELIVERY_STATUSES)[number];

export const appDelivery = pgTable("app_delivery", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  appId: uuid("app_id").notNull(),
  eventId: uuid("event_id").notNull(),
  eventKind: text("event_kind").notNull(),
  eventCreatedAt: ts("event_created_at").notNull(),
  payload: jsonb("payload").$type<Record<string, unknown>>().notNull().default(sql`'{}'::jsonb`),
  ...deliveryTries(),
  round: integer("round").notNull().default(1),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});
