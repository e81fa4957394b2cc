import type { Context } from "hono";
import { z } from "zod";
import { together, type Plan } from "#shared/db/plan";
import type { Q } from "#shared/db/steps";
import { sendStoreUnit } from "#shared/db/unit";
import { primaryHostnamePlan } from "#shared/storefront/catalog";
import type { ShopHead } from "./layout";
import type { ShopEnv } from "./shop-env";

/** What every catalogue page shares (catalog-pages.tsx, search-page.tsx): its one read, its head, its page size, prices typed in rupees. */
export type ShopContext = Context<ShopEnv>;

export const PAGE_SIZE = 24;

/** Reads the page's data and the canonical base in one unit of the store. */
export async function read<T>(c: ShopContext, build: (q: Q) => Plan<T>): Promise<{ data: T; base: string }> {
  const { db, store, hostname } = c.var.shop;
  const { data, primary } = await sendStoreUnit(db, store.id, (q) => together({ data: build(q), primary: primaryHostnamePlan(q) }));
  return { data, base: `https://${primary ?? hostname}` };
}

export function head(c: ShopContext, path: string, base: string, title: string | undefined, description: string): ShopHead {
  return { storeName: c.var.shop.store.name, title, description, canonical: `${base}${path}` };
}

/** Shopper-entered prices are in major units (₹500); the catalogue works in minor units. */
export const major = z.coerce.number().min(0).max(1e9).optional();

/** A price the shopper typed in major units, in the store currency's minor units. */
export const toMinor = (amount: number | undefined, currency: string) => {
  if (amount === undefined) return undefined;
  const digits = new Intl.NumberFormat("en", { style: "currency", currency }).resolvedOptions().maximumFractionDigits ?? 2;
  return Math.round(amount * 10 ** digits);
};
