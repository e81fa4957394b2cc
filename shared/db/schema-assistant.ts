/** The drizzle tables of the store's assistant (migrations/0049_assistant_usage.sql, 0050_assistant_conversations.sql; see ./schema.ts). */
import { bigint, date, integer, pgTable, primaryKey, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { createdAt, updatedAt } from "./columns";
import { storeRef } from "./schema-core";

/** What the store's assistant used on one day (India's day): model tokens in and out, and model calls. */
export const assistantUsage = pgTable(
  "assistant_usage",
  {
    storeId: storeRef(),
    day: date("day").notNull(),
    inputTokens: bigint("input_tokens", { mode: "number" }).notNull().default(0),
    outputTokens: bigint("output_tokens", { mode: "number" }).notNull().default(0),
    modelCalls: integer("model_calls").notNull().default(0),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.storeId, t.day] })],
);

/** A conversation of one member with the store's assistant: its index row (the messages live in its Durable Object). */
export const assistantConversation = pgTable("assistant_conversation", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  memberId: uuid("member_id").notNull(),
  title: text("title").notNull(),
  messages: integer("messages").notNull().default(0),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});
