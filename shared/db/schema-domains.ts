/** The drizzle tables of custom-domain verification and routing (migrations/0016; see ./schema.ts). */
import { integer, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { ts } from "./columns";
import { storeRef } from "./schema-core";

export const DOMAIN_CHECK_RESULTS = ["verified", "not_found", "wrong_value", "servfail", "timeout", "unavailable"] as const;
export type DomainCheckResult = (typeof DOMAIN_CHECK_RESULTS)[number];

/** A pending domain's last DNS check and when the next is due (one row per domain). */
export const domainCheck = pgTable("domain_check", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  domainId: uuid("domain_id").notNull().unique(),
  checks: integer("checks").notNull().default(1),
  lastCheckedAt: ts("last_checked_at").notNull(),
  lastResult: text("last_result", { enum: DOMAIN_CHECK_RESULTS }).notNull(),
  nextCheckAt: ts("next_check_at").notNull(),
});

export const DOMAIN_ROUTE_OUTCOMES = ["routed", "unrouted", "skipped"] as const;
export type DomainRouteOutcome = (typeof DOMAIN_ROUTE_OUTCOMES)[number];

/** A domain event the route consumer applied, by its outbox id (the dedupe key). */
export const domainRouteReceipt = pgTable("domain_route_receipt", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  eventId: uuid("event_id").notNull(),
  kind: text("kind").notNull(),
  hostname: text("hostname").notNull(),
  routerId: text("router_id"),
  outcome: text("outcome", { enum: DOMAIN_ROUTE_OUTCOMES }).notNull(),
  processedAt: ts("processed_at").notNull().defaultNow(),
});
