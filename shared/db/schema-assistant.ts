/** The drizzle tables of the store's assistant (migrations/0049_assistant_usage.sql; see ./schema.ts). */
import { bigint, date, integer, pgTable, primaryKey, timestamp, uuid } from "drizzle-orm/pg-core";
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
