import { integer, text, timestamp } from "drizzle-orm/pg-core";

/** Postgres's text of a timestamptz in the ISO DateStyle: `0050-01-01 00:00:00.123456+05:30`. */
const PG_INSTANT = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d(?:\.\d{1,6})?)([+-]\d\d)(?::(\d\d))?$/;

/**
 * A timestamptz read as a Date through ISO 8601 (`…T…+05:30`), which JavaScript parses with the year as
 * written: drizzle's own `new Date(text)` takes Postgres's form through the legacy parser, which reads the
 * years 0001-0099 as 1901-1999. Other forms (years past 9999, BC) keep drizzle's reading; no input can
 * write them (shared/core/inputs.ts).
 */
export function instantOfPostgres(value: Date | string): Date {
  if (typeof value !== "string") return value;
  const m = PG_INSTANT.exec(value);
  return m ? new Date(`${m[1]}T${m[2]}${m[3]}:${m[4] ?? "00"}`) : new Date(value);
}

/** The hook drizzle's column builders have (internal in its types) that makes the column of a table. */
interface Builds {
  build(table: unknown): { mapFromDriverValue(value: Date | string): Date };
}

/** Column helpers shared by the schema's files. */
export const ts = (name: string) => {
  const column = timestamp(name, { withTimezone: true, mode: "date" });
  const builder = column as unknown as Builds;
  const build = builder.build.bind(builder);
  builder.build = (table) => Object.assign(build(table), { mapFromDriverValue: instantOfPostgres });
  return column;
};
export const createdAt = () => ts("created_at").notNull().defaultNow();
export const updatedAt = () => ts("updated_at").notNull().defaultNow();

export const DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;

/** A webhook delivery's tries (app_delivery, migration 0017; ucp_order_delivery, 0055): its state, its tries and its last outcome. */
export const deliveryTries = () => ({
  status: text("status", { enum: DELIVERY_STATUSES }).notNull().default("pending"),
  attempts: integer("attempts").notNull().default(0),
  claimedAt: ts("claimed_at"),
  lastAttemptAt: ts("last_attempt_at"),
  nextAttemptAt: ts("next_attempt_at"),
  lastStatus: integer("last_status"),
  lastError: text("last_error"),
  deliveredAt: ts("delivered_at"),
});
