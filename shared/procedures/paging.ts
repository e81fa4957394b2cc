import { SQL, sql } from "drizzle-orm";
import { z } from "zod";
import { plan, type Plan } from "../db/plan";
import type { Q, Step } from "../db/steps";
import { cappedCount as cappedCountStatement, COUNT_CAP } from "./statements/counts";

/** Paging input shared by every list procedure: `page` is 1-based, `pageSize` at most 100 (default 20). */
export const PAGE_SIZE_MAX = 100;
export const pagingInput = {
  page: z.number().int().min(1).max(100_000).default(1),
  pageSize: z.number().int().min(1).max(PAGE_SIZE_MAX).default(20),
};

export { COUNT_CAP } from "./statements/counts";

export interface Paged<T> {
  items: T[];
  page: number;
  pageSize: number;
  /** The number of matching rows, exact up to COUNT_CAP; COUNT_CAP when there are more. */
  total: number;
  /** Present (true) only when more than COUNT_CAP rows match, and `total` is COUNT_CAP. */
  totalCapped?: true;
}

export const offsetOf = (p: { page: number; pageSize: number }) => (p.page - 1) * p.pageSize;

/** A list's total for people: "200+" when counting stopped at COUNT_CAP, otherwise the number. */
export const totalText = (p: Pick<Paged<unknown>, "total" | "totalCapped">): string =>
  p.totalCapped ? `${p.total.toLocaleString("en-IN")}+` : String(p.total);

/**
 * Whether a page after this one may hold rows. Past the cap the total does not say how many pages there are,
 * so a full page has a next one (it may turn out empty when the rows end exactly there).
 */
export const hasNextPage = (p: Paged<unknown>): boolean =>
  p.page * p.pageSize < p.total || (p.totalCapped === true && p.items.length === p.pageSize);

/** The answer for a page whose matching rows were counted (up to COUNT_CAP + 1, or exactly). */
export function pageOf<T>(items: T[], p: { page: number; pageSize: number }, counted: number): Paged<T> {
  return counted > COUNT_CAP
    ? { items, page: p.page, pageSize: p.pageSize, total: COUNT_CAP, totalCapped: true }
    : { items, page: p.page, pageSize: p.pageSize, total: counted };
}

/** The columns countColumn() made: pagePlan recognises its count queries by them. */
const matchingRowColumns = new WeakSet<SQL>();

/**
 * The column of a list's count query, `q.select(countColumn()).from(table).where(where)`, for pagePlan:
 * it selects one row per matching row, which pagePlan counts up to COUNT_CAP + 1 without reading the rest
 * (`select count(*) from (select 1 … limit 1001)`). Only for pagePlan's `count` argument.
 */
export function countColumn(): { n: SQL<number> } {
  const one = sql<number>`1`;
  matchingRowColumns.add(one);
  return { n: one };
}

const CAP_LIMIT = sql.raw(String(COUNT_CAP + 1));
/** Count selects already wrapped (a select handed to pagePlan twice is wrapped once). */
const cappedSelects = new WeakSet<object>();

/**
 * A capped count written as SQL, for a list whose count is not a drizzle select: `matching` is a query with
 * one row per matching row (e.g. sql`select 1 from campaign k where k.store_id = ${store}`).
 */
export const cappedCount = (q: Q, matching: SQL): Step<{ n: number }[]> => cappedCountStatement(q, matching);

/**
 * The count query of pagePlan, capped: a drizzle select of countColumn() is sent as
 * `select count(*) from (<that select> limit COUNT_CAP + 1)`. drizzle builds a select's SQL from its
 * getSQL() when the unit sends it, so the select is wrapped there; its one column, `n`, maps the count as it
 * mapped the 1. Any other count step (raw SQL that counts) is sent as it is; its answer is capped the same.
 */
function capped(count: Step<{ n: number }[]>): Step<{ n: number }[]> {
  const select = count as unknown as { _?: { selectedFields?: Record<string, unknown> }; getSQL?: () => SQL };
  const fields = select._?.selectedFields;
  const column = fields?.n;
  if (
    cappedSelects.has(count) || !fields || Object.keys(fields).length !== 1 || !(column instanceof SQL) ||
    !matchingRowColumns.has(column) || typeof select.getSQL !== "function"
  ) {
    return count;
  }
  cappedSelects.add(count);
  const rowsOf = select.getSQL.bind(select);
  select.getSQL = () => sql`select count(*)::int from (${rowsOf()} limit ${CAP_LIMIT}) matching`;
  return count;
}

/** `%text%` for ILIKE with the user's own % and _ taken literally. */
export function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
}

/**
 * A page as a plan: the page's rows and the count of all matching rows, side by side in one unit. The
 * count is its own statement (not a window over the page query), capped at COUNT_CAP + 1 matching rows
 * (see countColumn), so it stops early and reads an index only.
 */
export function pagePlan<R, T = R>(
  rows: Step<R[]>,
  count: Step<{ n: number }[]>,
  p: { page: number; pageSize: number },
  toItem: (row: R) => T = (row) => row as unknown as T,
): Plan<Paged<T>> {
  return plan([rows, capped(count)] as const, ([found, [counted]]) => pageOf(found.map(toItem), p, counted?.n ?? 0));
}
