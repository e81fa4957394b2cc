import { gstRate } from "../db/schema";
import { statement } from "../db/statement";
import { sql } from "../db/steps";

/** The rules' one statement in SQL (decision 0026): the GST rates in force on a day (./gst-rates.ts). */

/** The rate in force for every tax class on a day (YYYY-MM-DD), from the global gst_rate table (migrations 0010, 0037). */
export const ratesOnDay = statement("rules.ratesOnDay", {
  row: { tax_class: gstRate.taxClass, rate_bp: gstRate.rateBp, threshold_minor: gstRate.thresholdMinor, rate_above_bp: gstRate.rateAboveBp },
  examples: [["2026-01-01"]],
  sql: (day: string) => sql`select distinct on (tax_class) tax_class, rate_bp, threshold_minor, rate_above_bp from gst_rate where effective_from <= ${day}::date order by tax_class, effective_from desc`,
});
