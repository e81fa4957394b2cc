/**
 * Drizzle schema. It mirrors migrations/*.sql, which are the source of truth (they also carry RLS,
 * grants and functions that drizzle does not model); test/schema.test.ts fails if the two drift.
 */
import { sql } from "drizzle-orm";
import { boolean, char, index, integer, jsonb, pgTable, text, timestamp, unique, uuid } from "drizzle-orm/pg-core";

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: "date" });
const createdAt = () => ts("created_at").notNull().defaultNow();
const updatedAt = () => ts("updated_at").notNull().defaultNow();

export const store = pgTable("store", {
  id: uuid("id").primaryKey().defaultRandom(),
  slug: text("slug").notNull().unique(),
  name: text("name").notNull(),
  currency: char("currency", { length: 3 }).notNull(),
  storefrontPasswordHash: text("storefront_password_hash"),
  mcpReadCustomerDetails: boolean("mcp_read_customer_details").notNull().default(false),
  mcpAllowChanges: boolean("mcp_allow_changes").notNull().default(false),
  mcpChangesNeedApproval: boolean("mcp_changes_need_approval").notNull().default(true),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export const userAccount = pgTable("user_account", {
  id: uuid("id").primaryKey().defaultRandom(),
  email: text("email").notNull(),
  name: text("name"),
  passwordHash: text("password_hash").notNull(),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export const ROLES = ["owner", "admin", "staff"] as const;
export type RoleName = (typeof ROLES)[number];

export const member = pgTable(
  "member",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    storeId: uuid("store_id")
      .notNull()
      .references(() => store.id, { onDelete: "cascade" }),
    userId: uuid("user_id")
      .notNull()
      .references(() => userAccount.id, { onDelete: "cascade" }),
    role: text("role", { enum: ROLES }).notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [unique().on(t.storeId, t.userId), index("member_user_idx").on(t.userId)],
);

export const session = pgTable("session", {
  idHash: text("id_hash").primaryKey(),
  userId: uuid("user_id")
    .notNull()
    .references(() => userAccount.id, { onDelete: "cascade" }),
  activeStoreId: uuid("active_store_id").references(() => store.id, { onDelete: "set null" }),
  createdAt: createdAt(),
  lastSeenAt: ts("last_seen_at").notNull().defaultNow(),
  expiresAt: ts("expires_at").notNull(),
  userAgent: text("user_agent"),
  ip: text("ip"),
});

export const DOMAIN_STATUSES = ["pending", "verified"] as const;

export const storeDomain = pgTable("store_domain", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: uuid("store_id")
    .notNull()
    .references(() => store.id, { onDelete: "cascade" }),
  hostname: text("hostname").notNull().unique(),
  status: text("status", { enum: DOMAIN_STATUSES }).notNull().default("pending"),
  isPrimary: boolean("is_primary").notNull().default(false),
  verifiedAt: ts("verified_at"),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export const outboxEvent = pgTable("outbox_event", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: uuid("store_id")
    .notNull()
    .references(() => store.id, { onDelete: "cascade" }),
  kind: text("kind").notNull(),
  payload: jsonb("payload").$type<Record<string, unknown>>().notNull().default(sql`'{}'::jsonb`),
  createdAt: createdAt(),
  availableAt: ts("available_at").notNull().defaultNow(),
  processedAt: ts("processed_at"),
  attempts: integer("attempts").notNull().default(0),
  lastError: text("last_error"),
});
