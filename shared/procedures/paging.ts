import { z } from "zod";

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

/**
 * Builds a page from rows that carry `total` (a `count(*) over ()` column), so a page costs one query.
 * Past the last page there are no rows to carry it; `countAll` is then asked (rarely needed).
 */
export async function pageFrom<R extends { total: number }, T>(
  rows: R[],
  p: { page: number; pageSize: number },
  toItem: (row: R) => T,
  countAll: () => Promise<number>,
): Promise<Paged<T>> {
  const total = rows[0]?.total ?? (p.page > 1 ? await countAll() : 0);
  return { items: rows.map(toItem), page: p.page, pageSize: p.pageSize, total };
}

/** `%text%` for ILIKE with the user's own % and _ taken literally. */
export function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
}
