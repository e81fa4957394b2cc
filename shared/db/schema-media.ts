/** The drizzle table of product media (migrations/0040_product_media.sql; see ./schema.ts). */
import { integer, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { createdAt, updatedAt } from "./columns";
import { storeRef } from "./schema-core";

export const MEDIA_TYPES = ["image/jpeg", "image/png", "image/webp", "image/avif"] as const;

export const productMedia = pgTable("product_media", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  productId: uuid("product_id").notNull(),
  position: integer("position").notNull().default(0),
  alt: text("alt").notNull(),
  hash: text("hash").notNull(),
  originalType: text("original_type", { enum: MEDIA_TYPES }).notNull(),
  originalBytes: integer("original_bytes").notNull(),
  width: integer("width").notNull(),
  height: integer("height").notNull(),
  widths: integer("widths").array().notNull(),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});
