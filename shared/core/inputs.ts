import { z } from "zod";

/**
 * The input types every door shares (docs/decisions/0023-inputs-at-the-door.md). A date or time reaches
 * Postgres only through these: the range both Postgres and JavaScript's ISO strings hold (years 1 to 9999,
 * judged in UTC once the offset is applied), parsed as ISO 8601 only, so no year is moved on the way.
 */

/** The first and the last instant an input may name: 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z. */
export const FIRST_INSTANT_MS = Date.parse("0001-01-01T00:00:00Z");
export const LAST_INSTANT_MS = Date.parse("9999-12-31T23:59:59.999Z");

export const INSTANT_RANGE_MESSAGE = "must fall between the years 0001 and 9999 (UTC, after its offset)";

/** True when `ms` is an instant an input may name. */
export const inInstantRange = (ms: number): boolean => Number.isFinite(ms) && ms >= FIRST_INSTANT_MS && ms <= LAST_INSTANT_MS;

/**
 * An ISO 8601 date-time with an offset (`2026-01-31T00:00:00Z`, `2026-01-31T05:30:00+05:30`), as a Date.
 * Date.parse reads this form as ISO, so a year such as 0050 stays 0050 (the legacy parser and Date.UTC
 * would make it 1950).
 */
export const instant = z.iso
  .datetime({ offset: true, error: "must be an ISO 8601 time with an offset, e.g. 2026-01-31T00:00:00Z" })
  .transform((text, ctx) => {
    const ms = Date.parse(text);
    if (!inInstantRange(ms)) {
      ctx.issues.push({ code: "custom", message: INSTANT_RANGE_MESSAGE, input: text });
      return z.NEVER;
    }
    return new Date(ms);
  });

/** A calendar date, YYYY-MM-DD, of the years 0001 to 9999 (kept as text: it names a day, not an instant). */
export const calendarDay = (error = "must be a date as YYYY-MM-DD, e.g. 2026-01-31") =>
  z.iso
    .date({ error })
    .refine((day) => inInstantRange(Date.parse(`${day}T00:00:00Z`)), { message: "must fall between the years 0001 and 9999" });
