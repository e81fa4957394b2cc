/** The shapes of the demo data (seed-data.ts) that `seedDemo` (seed.ts) writes. */

import type { TAX_CLASSES } from "#shared/db/schema-catalogue";
import type { Theme } from "#shared/storefront/theme";

export type SeedTaxClass = (typeof TAX_CLASSES)[number];

export interface SeedLocation {
  /** Short key the variants' `stock` refers to. */
  key: string;
  name: string;
  sellsOnline: boolean;
  city: string;
  /** ISO 3166-2:IN: where it ships from (the GST origin). */
  state: string;
  /** Its tax identity (migration 0036): a valid-format GSTIN of `state` (dummy PAN ABCDE1234F), legal name, address. */
  tax?: { gstin: string; legalName: string; addressLine1: string; addressLine2?: string; postalCode: string };
}

export interface SeedVariant {
  title: string;
  sku: string;
  priceMinor: number;
  compareAtMinor?: number;
  taxClass: SeedTaxClass;
  preorder?: boolean;
  /** On-hand units per location key; every location of the store must be listed. */
  stock: Record<string, number>;
}

export interface SeedProduct {
  handle: string;
  title: string;
  description: string;
  status: "draft" | "active" | "archived";
  vendor?: string;
  /** HSN code of the goods, 4, 6 or 8 digits. */
  hsnCode?: string;
  variants: SeedVariant[];
}

export interface SeedCustomer {
  email: string;
  firstName: string;
  lastName: string;
  /** E.164. */
  phone: string;
  city: string;
  acceptsMarketing: boolean;
}

export interface SeedDiscount {
  code: string;
  kind: "percentage" | "fixed_amount";
  /** percentage: whole percent; fixed_amount: paise. */
  value: number;
  usageLimit?: number;
}

export interface SeedPage {
  handle: string;
  title: string;
  body: string;
  status: "draft" | "published";
}

/** A collection (migration 0042): its products by handle, in the order shoppers see them. */
export interface SeedCollection {
  handle: string;
  title: string;
  description: string;
  published: boolean;
  products: string[];
}

/** An item of the storefront's menu: a collection or a page by handle, or a link (https or a path). */
export type SeedMenuItem = { label: string } & ({ collection: string } | { page: string } | { url: string });

export interface StoreSeed {
  locations: SeedLocation[];
  /** In listing order: the first product is the most recently updated one. */
  products: SeedProduct[];
  customers: SeedCustomer[];
  discounts: SeedDiscount[];
  pages: SeedPage[];
  collections?: SeedCollection[];
  /** The storefront's navigation menu, in order. */
  menu?: SeedMenuItem[];
  /** The store's published look (shared/storefront/theme.ts; docs/storefront-theme.md): the fields it sets. */
  theme?: Partial<Theme>;
}

// ---------------------------------------------------------------------------------------------- demo store
