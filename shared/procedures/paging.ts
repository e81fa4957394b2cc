import { sql } from "drizzle-orm";
import { z } from "zod";
import { plan, type Plan } from "../db/plan";
import type { Step } from "../db/steps";

/** Paging input shared by every list procedure: `page` is 1-based, `pageSize` at most 100 (default 20). */
export const PAGE_SIZE_MAX = 100;
export const pagingInput = {
  page: z.number().int().min(1).max(100_000).default(1),
  pageSize: z.number().int().min(1).max(PAGE_SIZE_MAX).default(20),
};

export interface Paged<T> {
  items: T[];
  page: number;
  pageSize: number;
  total: number;
}

export const offsetOf = (p: { page: number; pageSize: number }) => (p.page - 1) * p.pageSize;

/** The column that gives every row of a page query the number of all matching rows (`total`). */
export const totalColumn = () => ({ total: sql<number>`(count(*) over ())::int` });
/** The column of a plain count query. */
export const countColumn = () => ({ n: sql<number>`count(*)::int` });

/**
 * Builds a page from rows that carry `total` (see totalColumn), so a page costs one query. Past the
 * last page there are no rows to carry it; `countRows` (a count query) is then asked, rarely.
 */
export async function pageFrom<R extends { total: number }, T = Omit<R, "total">>(
  rows: R[],
  p: { page: number; pageSize: number },
  countRows: () => PromiseLike<{ n: number }[]>,
  toItem: (row: Omit<R, "total">) => T = (row) => row as unknown as T,
): Promise<Paged<T>> {
  const total = rows[0]?.total ?? (p.page > 1 ? ((await countRows())[0]?.n ?? 0) : 0);
  return { items: rows.map(({ total: _total, ...item }) => toItem(item)), page: p.page, pageSize: p.pageSize, total };
}

/** `%text%` for ILIKE with the user's own % and _ taken literally. */
export function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
}

/**
 * A page as a plan: the page's rows and the count of all matching rows, side by side in one unit. The
 * count is its own statement (not a window over the page query) so it can stop early and use an
 * index-only scan.
 */
export function pagePlan<R, T = R>(
  rows: Step<R[]>,
  count: Step<{ n: number }[]>,
  p: { page: number; pageSize: number },
  toItem: (row: R) => T = (row) => row as unknown as T,
): Plan<Paged<T>> {
  return plan([rows, count] as const, ([found, [counted]]) => ({ items: found.map(toItem), page: p.page, pageSize: p.pageSize, total: counted?.n ?? 0 }));
}
