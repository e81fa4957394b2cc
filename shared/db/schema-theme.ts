/** The drizzle table of the store's theme (migrations/0041_store_theme.sql; see ./schema.ts). */
import { jsonb, pgTable, uuid } from "drizzle-orm/pg-core";
import { ts, updatedAt } from "./columns";
import { store } from "./schema-core";

export const storeTheme = pgTable("store_theme", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: uuid("store_id")
    .notNull()
    .unique()
    .references(() => store.id, { onDelete: "cascade" }),
  /** The whole theme (shared/storefront/theme.ts `Theme`); the domain reads it through readTheme. */
  draft: jsonb("draft").notNull(),
  published: jsonb("published"),
  publishedAt: ts("published_at"),
  updatedAt: updatedAt(),
});
