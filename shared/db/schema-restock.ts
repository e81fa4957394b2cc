/** The drizzle table of back-in-stock alerts (migrations/0022_back_in_stock.sql; see ./schema.ts). */
import { pgTable, text, uuid } from "drizzle-orm/pg-core";
import { createdAt, ts } from "./columns";
import { storeRef } from "./schema-core";

export const restockSubscription = pgTable("restock_subscription", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  variantId: uuid("variant_id").notNull(),
  email: text("email").notNull(),
  status: text("status", { enum: ["waiting", "sent", "failed"] }).notNull().default("waiting"),
  eventId: uuid("event_id"),
  createdAt: createdAt(),
  notifiedAt: ts("notified_at"),
});
