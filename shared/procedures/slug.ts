import { and, eq, ilike, or, type SQL } from "drizzle-orm";
import type { AnyPgColumn, PgTable } from "drizzle-orm/pg-core";
import { z } from "zod";
import { plan } from "../db/plan";
import type { Q } from "../db/steps";

/** URL handles for products and pages: lowercase letters, digits and single hyphens, 1-100 chars. */
export const HANDLE = /^[a-z0-9](?:[a-z0-9-]{0,98}[a-z0-9])?$/;
export const handleSchema = z
  .string()
  .regex(HANDLE, "Use lowercase letters, digits and hyphens (for example summer-kurta)");

export function handleFrom(title: string): string {
  const base = title
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 90)
    .replace(/-+$/g, "");
  return base || "item";
}

/** The first of `base`, `base-2`, `base-3`... that is not in `taken`. */
export function firstFreeHandle(base: string, taken: readonly string[]): string {
  const used = new Set(taken);
  if (!used.has(base)) return base;
  for (let n = 2; ; n++) {
    const candidate = `${base}-${n}`;
    if (!used.has(candidate)) return candidate;
  }
}

/** A store's table whose rows have URL handles (products, pages, collections). */
type Handled = PgTable & { storeId: AnyPgColumn; handle: AnyPgColumn };

/** The first free handle for a title among a table's rows of the store: `base`, or `base-2`, `base-3`... after those in use. */
export function freeHandlePlan(q: Q, table: Handled, store: SQL, title: string) {
  const base = handleFrom(title);
  return plan(
    [q.select({ handle: table.handle }).from(table).where(and(eq(table.storeId, store), or(eq(table.handle, base), ilike(table.handle, `${base}-%`))))] as const,
    ([rows]) => firstFreeHandle(base, rows.map((r) => String(r.handle))),
  );
}
