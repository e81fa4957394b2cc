/** The drizzle tables of the catalogue and its stock: products, variants and their GST classes, locations, stock levels and adjustments (see ./schema.ts). */
import { bigint, boolean, integer, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { createdAt, updatedAt } from "./columns";
import { storeRef } from "./schema-core";

export const PRODUCT_STATUSES = ["draft", "active", "archived"] as const;
export type ProductStatus = (typeof PRODUCT_STATUSES)[number];

export const product = pgTable("product", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  title: text("title").notNull(),
  handle: text("handle").notNull(),
  description: text("description").notNull().default(""),
  status: text("status", { enum: PRODUCT_STATUSES }).notNull().default("draft"),
  vendor: text("vendor"),
  hsnCode: text("hsn_code"),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

/**
 * GST classes of India (rates after the 2025 rationalisation; docs/gst.md); checkout computes tax per parcel
 * from them. gst_3: gold, silver, jewellery; gst_1_5: cut and polished diamonds; gst_0_25: rough diamonds and
 * precious stones; gst_apparel and gst_footwear take their rate from the unit's value (migration 0037).
 */
export const TAX_CLASSES = ["gst_exempt", "gst_0", "gst_5", "gst_18", "gst_40", "gst_3", "gst_1_5", "gst_0_25", "gst_apparel", "gst_footwear"] as const;
export type TaxClass = (typeof TAX_CLASSES)[number];

export const productVariant = pgTable("product_variant", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  productId: uuid("product_id").notNull(),
  title: text("title").notNull().default("Default"),
  sku: text("sku"),
  priceMinor: bigint("price_minor", { mode: "number" }).notNull(),
  compareAtMinor: bigint("compare_at_minor", { mode: "number" }),
  taxClass: text("tax_class", { enum: TAX_CLASSES }).notNull().default("gst_18"),
  preorder: boolean("preorder").notNull().default(false),
  position: integer("position").notNull().default(0),
  /** The image the variant shows, one of its product's (./schema-media.ts; migration 0040). */
  mediaId: uuid("media_id"),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export const location = pgTable("location", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  name: text("name").notNull(),
  sellsOnline: boolean("sells_online").notNull().default(true),
  city: text("city"),
  /** ISO 3166-2:IN code of where it ships from (its GST origin); null: not known (treated as another state). */
  state: text("state"),
  /** Its GST registration (migration 0036; shared/rules/gstin.ts): when set, `state` is the GSTIN's state. */
  gstin: text("gstin"),
  /** The registered legal name and address printed on its tax invoices. */
  legalName: text("legal_name"),
  addressLine1: text("address_line1"),
  addressLine2: text("address_line2"),
  postalCode: text("postal_code"),
  /** Reservation order among locations that sell online: lower first. */
  priority: integer("priority").notNull().default(100),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export const inventoryLevel = pgTable("inventory_level", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  variantId: uuid("variant_id").notNull(),
  locationId: uuid("location_id").notNull(),
  onHand: integer("on_hand").notNull().default(0),
  reserved: integer("reserved").notNull().default(0),
  updatedAt: updatedAt(),
});

/** Reasons a person gives for a stock change (inventory.adjust). */
export const ADJUSTMENT_REASONS = ["received", "correction", "damaged", "shrinkage", "returned", "recount", "other"] as const;
/** Every reason a stock change row may carry: people's, and the system's for shipments (migration 0014). */
export const STOCK_CHANGE_REASONS = [...ADJUSTMENT_REASONS, "shipped", "shipment_cancelled"] as const;

export const inventoryAdjustment = pgTable("inventory_adjustment", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  variantId: uuid("variant_id").notNull(),
  locationId: uuid("location_id").notNull(),
  delta: integer("delta").notNull(),
  onHandAfter: integer("on_hand_after").notNull(),
  reason: text("reason", { enum: STOCK_CHANGE_REASONS }).notNull(),
  note: text("note"),
  memberId: uuid("member_id"),
  createdAt: createdAt(),
});

