import { z } from "zod";
import { lineDiff, linesOf, type Hunk } from "./diff";

/**
 * What a proposal would change, field by field, in the store's terms (stored as JSON on the
 * ai_approval row and answered to the AI client). Every changed field is here in full: a value as
 * it reads before and after, a long text as both whole texts plus a line diff.
 */
export type Shown = string | number | boolean | null;

export interface ValueChange {
  kind: "value";
  /** Stable key of what changes, e.g. `title`, `variants[SKU-1].priceMinor`. */
  field: string;
  /** What a person reads in the table, e.g. "Variant SKU-1 · Price". */
  label: string;
  /** null: not set (or, for something new, nothing before). */
  from: Shown;
  to: Shown;
}

export interface TextChange {
  kind: "text";
  field: string;
  label: string;
  from: string;
  to: string;
  hunks: Hunk[];
}

export type Change = ValueChange | TextChange;

export interface Proposal {
  /** One short sentence; it may abbreviate. The diff is the complete account. */
  summary: string;
  diff: Change[];
}

export const valueChange = (field: string, label: string, from: Shown, to: Shown): ValueChange => ({ kind: "value", field, label, from, to });

export const textChange = (field: string, label: string, from: string, to: string): TextChange => ({
  kind: "text",
  field,
  label,
  from,
  to,
  hunks: lineDiff(from, to),
});

/** Long or multi-line text reads best as a line diff; a short line as a value. */
const LONG_TEXT = 120;
export function textOrValue(field: string, label: string, from: string | null, to: string | null): Change {
  const long = [from, to].some((t) => t !== null && (t.length > LONG_TEXT || linesOf(t).length > 1));
  return long ? textChange(field, label, from ?? "", to ?? "") : valueChange(field, label, from, to);
}

const MINOR_UNIT: Record<string, string> = { INR: "paise" };

/** Money in the store's currency and in minor units, e.g. "₹1,250.00 (125000 paise)"; null stays null. */
export function money(minor: number | null | undefined, currency: string, withMinor = true): string | null {
  if (minor === null || minor === undefined) return null;
  const format = new Intl.NumberFormat("en-IN", { style: "currency", currency });
  const shown = format.format(minor / 10 ** (format.resolvedOptions().maximumFractionDigits ?? 2));
  return withMinor ? `${shown} (${minor} ${MINOR_UNIT[currency] ?? "minor units"})` : shown;
}

/** An instant as people read it here, e.g. "2025-10-01 18:30:00 UTC". */
export const instant = (d: Date): string => `${d.toISOString().slice(0, 19).replace("T", " ")} UTC`;

export const yesNo = (b: boolean): string => (b ? "yes" : "no");

const SUMMARY_CHANGES = 3;
const abbreviate = (v: Shown) => (v === null ? "none" : typeof v === "string" ? (v.length > 60 ? `"${v.slice(0, 57)}…"` : `"${v}"`) : String(v));

function phrase(c: Change): string {
  if (c.kind === "value") return `${c.field} ${abbreviate(c.from)} → ${abbreviate(c.to)}`;
  const lines = c.hunks.flatMap((h) => h.lines);
  const count = (op: "removed" | "added") => lines.filter((l) => l.op === op).length;
  const removed = count("removed");
  return `${c.field} (${removed} line${removed === 1 ? "" : "s"} removed, ${count("added")} added)`;
}

/** The changes as a short clause: the first few abbreviated, then how many more. */
export function sentence(diff: readonly Change[]): string {
  if (!diff.length) return "no changes";
  const more = diff.length - SUMMARY_CHANGES;
  return diff.slice(0, SUMMARY_CHANGES).map(phrase).join("; ") + (more > 0 ? `; and ${more} more change${more > 1 ? "s" : ""}` : "");
}

const hunkSchema = z.object({
  oldStart: z.number().int(),
  newStart: z.number().int(),
  lines: z.array(z.object({ op: z.enum(["same", "removed", "added"]), text: z.string() })),
});
const textSchema = z.object({ kind: z.literal("text"), field: z.string(), label: z.string(), from: z.string(), to: z.string(), hunks: z.array(hunkSchema) });
/** Also the shape rows stored before labels and text diffs existed: `{field, from, to}`. */
const valueSchema = z.object({ field: z.string(), label: z.string().optional(), from: z.unknown(), to: z.unknown() });

const shown = (v: unknown): Shown =>
  v === null || v === undefined ? null : typeof v === "string" || typeof v === "number" || typeof v === "boolean" ? v : JSON.stringify(v);

/** A stored diff as changes to show, whatever shape it was stored in; nothing in it is dropped. */
export function readChanges(stored: unknown): Change[] {
  if (!Array.isArray(stored)) return [];
  return stored.map((item: unknown): Change => {
    const text = textSchema.safeParse(item);
    if (text.success) return text.data;
    const value = valueSchema.safeParse(item);
    if (value.success) return valueChange(value.data.field, value.data.label ?? value.data.field, shown(value.data.from), shown(value.data.to));
    return valueChange("change", "Change", null, shown(item));
  });
}
