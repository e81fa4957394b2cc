import { describe, expect, it } from "vitest";
// The schema first: its files and columns.ts import each other, and the schema is how the runtime loads them.
import "../db/schema";
import { instantOfPostgres } from "../db/columns";
import { calendarDay, instant } from "./inputs";
import { MAX_INPUT_DEPTH, unstorableIssue } from "./storable";

describe("the one date type", () => {
  it("takes ISO 8601 with an offset, years 0001-9999 once the offset is applied", () => {
    const ok = (text: string) => instant.safeParse(text).data?.toISOString();
    expect(ok("0001-01-01T00:00:00Z")).toBe("0001-01-01T00:00:00.000Z");
    expect(ok("0050-06-15T12:00:00+05:30")).toBe("0050-06-15T06:30:00.000Z");
    expect(ok("9999-12-31T23:59:59.999Z")).toBe("9999-12-31T23:59:59.999Z");
    for (const text of ["0000-01-01T00:00:00Z", "0001-01-01T00:00:00+00:01", "9999-12-31T23:59:59-00:01", "10000-01-01T00:00:00Z", "2025-02-30T00:00:00Z", "2025-01-01T00:00:00", "2025-01-01"]) {
      expect(instant.safeParse(text).success, text).toBe(false);
    }
    expect(calendarDay().safeParse("0001-01-01").success).toBe(true);
    expect(calendarDay().safeParse("0000-12-31").success).toBe(false);
  });

  it("reads Postgres's timestamptz text with the year as written (drizzle's reading made 0050 into 1950)", () => {
    expect(instantOfPostgres("0050-01-01 00:00:00+00").toISOString()).toBe("0050-01-01T00:00:00.000Z");
    expect(instantOfPostgres("0001-01-01 05:30:00.123456+05:30").toISOString()).toBe("0001-01-01T00:00:00.123Z");
    expect(instantOfPostgres("2026-01-31 10:00:00-03").toISOString()).toBe("2026-01-31T13:00:00.000Z");
  });
});

describe("what no input may carry", () => {
  it("names the first NUL, in a value or a name, and nesting past the limit", () => {
    expect(unstorableIssue({ a: [{ b: "ok" }, { c: "x\u0000" }] })).toEqual({ path: "a.1.c", message: expect.stringContaining("NUL") });
    expect(unstorableIssue({ "k\u0000": 1 })?.path).toBe("k\\u0000");
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(unstorableIssue(deep)?.message).toBe(`is nested deeper than ${MAX_INPUT_DEPTH} levels`);
    let fits: unknown = "fine";
    for (let i = 0; i < MAX_INPUT_DEPTH; i++) fits = { a: fits };
    expect(unstorableIssue(fits)).toBeUndefined();
  });
});
