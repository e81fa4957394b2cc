import { z } from "zod";
import { TAX_CLASSES, type TaxClass } from "../db/schema";
import { plan, type Plan } from "../db/plan";
import type { Q } from "../db/steps";
import { readOn, type StoreTx } from "../db/with-store";
import type { ClassRate, GstRates } from "./gst";
import { ratesOnDay } from "./statements";

// India keeps one time zone, UTC+05:30, with no daylight saving.
const IST_OFFSET_MS = 330 * 60_000;

/** The calendar day in India at an instant (YYYY-MM-DD): the day whose GST rates apply to a supply then. */
export const indianDate = (at: Date): string => new Date(at.getTime() + IST_OFFSET_MS).toISOString().slice(0, 10);

const day = z.iso.date();

/**
 * The rate in force for every tax class on a day in India (a Date is taken as the instant of supply), in
 * one query on the global gst_rate table (migrations 0010, 0037): basis points, or for a value-based class
 * its two rates and the threshold between them (resolved per line by ./gst.ts, resolveRate). Any unit of
 * work may read it.
 */
export function ratesPlan(q: Q, on: Date | string): Plan<GstRates> {
  const date = typeof on === "string" ? day.parse(on) : indianDate(on);
  return plan(
    [
      ratesOnDay(q, date),
    ] as const,
    ([rows]) => ratesOfRows(rows, date),
  );
}

/** A gst_rate row as read: the rate, or a value-based class's two rates and the threshold (int8 as text or number). */
export interface RateRow {
  tax_class: TaxClass;
  rate_bp: number;
  threshold_minor: string | number | null;
  rate_above_bp: number | null;
}

/** Every class's rate from the rows in force on `date` (one per class), refusing a class with none. */
export function ratesOfRows(rows: readonly RateRow[], date: string): GstRates {
  const found = new Map(rows.map((r): [TaxClass, ClassRate] => [
    r.tax_class,
    r.threshold_minor === null || r.rate_above_bp === null
      ? r.rate_bp
      : { rateBp: r.rate_bp, thresholdMinor: Number(r.threshold_minor), rateAboveBp: r.rate_above_bp },
  ]));
  const missing = TAX_CLASSES.filter((c) => !found.has(c));
  if (missing.length > 0) throw new Error(`No GST rate on ${date} for ${missing.join(", ")}`);
  return Object.fromEntries(TAX_CLASSES.map((c) => [c, found.get(c)!])) as Record<TaxClass, ClassRate>;
}

/** The same, inside a transaction that is open already. */
export function ratesOn(tx: StoreTx, on: Date | string): Promise<GstRates> {
  return readOn(tx, (q) => ratesPlan(q, on));
}
