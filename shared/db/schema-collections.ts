/** The drizzle tables of collections and the storefront's navigation menu (migrations/0042_collections_and_menu.sql; see ./schema.ts). */
import { boolean, integer, jsonb, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { createdAt, updatedAt } from "./columns";
import { storeRef } from "./schema-core";

export const collection = pgTable("collection", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  title: text("title").notNull(),
  handle: text("handle").notNull(),
  description: text("description").notNull().default(""),
  published: boolean("published").notNull().default(false),
  /** Its image (migration 0044): {hash, width, height, widths, alt} as shared/storefront/theme.ts themeImageSchema, or null. */
  image: jsonb("image").$type<{ hash: string; width: number; height: number; widths: number[]; alt: string } | null>(),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

/** A collection's products in the merchant's order (position 0 first). */
export const collectionProduct = pgTable("collection_product", {
  storeId: storeRef(),
  collectionId: uuid("collection_id").notNull(),
  productId: uuid("product_id").notNull(),
  position: integer("position").notNull(),
});

export const MENU_ITEM_KINDS = ["collection", "page", "link"] as const;
export type MenuItemKind = (typeof MENU_ITEM_KINDS)[number];

/** The store's one navigation menu, in position order: each item a collection, a content page or a link. */
export const menuItem = pgTable("menu_item", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  position: integer("position").notNull(),
  label: text("label").notNull(),
  kind: text("kind", { enum: MENU_ITEM_KINDS }).notNull(),
  collectionId: uuid("collection_id"),
  pageId: uuid("page_id"),
  url: text("url"),
  createdAt: createdAt(),
});
