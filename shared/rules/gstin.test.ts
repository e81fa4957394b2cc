import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { INDIAN_STATE_CODES } from "./gst";
import { checkGstin, GST_STATE_CODES, gstinCheckCharacter, gstinSchema, gstStateCodeOf, stateOfGstin } from "./gstin";

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LETTERS = ALPHABET.slice(10);
const chars = (from: string, n: number) => fc.array(fc.constantFrom(...from), { minLength: n, maxLength: n }).map((a) => a.join(""));

/** A valid GSTIN: any allowed state code, a PAN-shaped part, an entity number, Z, and its check character. */
const validGstin = fc
  .tuple(fc.constantFrom(...Object.keys(GST_STATE_CODES)), chars(LETTERS, 5), chars("0123456789", 4), chars(LETTERS, 1), chars(ALPHABET.slice(1), 1))
  .map(([state, a, b, c, entity]) => {
    const first14 = `${state}${a}${b}${c}${entity}Z`;
    return first14 + gstinCheckCharacter(first14);
  });

const reasonOf = (gstin: string) => {
  const result = checkGstin(gstin);
  return result.ok ? "ok" : result.reason;
};

describe("GSTIN validation", () => {
  it("accepts the research's examples, Ladakh (38) and Other Territory (97) included", () => {
    for (const gstin of ["27AAPFU0939F1ZV", "27ABCDE1234F1Z0", "29ABCDE1234F1ZW", "07ABCDE1234F1Z2", "38ABCDE1234F1ZX", "97ABCDE1234F1ZT"]) {
      expect(reasonOf(gstin), gstin).toBe("ok");
    }
    expect(checkGstin("27AAPFU0939F1ZV")).toMatchObject({ stateCode: "27", state: "IN-MH" });
    expect(checkGstin("38ABCDE1234F1ZX")).toMatchObject({ state: "IN-LA" });
    expect(checkGstin("97ABCDE1234F1ZT")).toMatchObject({ state: null });
  });

  it("names the failure: checksum, state code, format, length", () => {
    expect(reasonOf("27AAPFU0939F1ZO")).toMatch(/check character/);
    expect(reasonOf("25ABCDE1234F1Z4")).toMatch(/state code 25/);
    expect(reasonOf("99ABCDE1234F1ZP")).toMatch(/state code 99/);
    expect(reasonOf("27AAPFU0939F1YV")).toMatch(/regular taxpayer/); // position 14 is not Z
    expect(reasonOf("27AAPFU0939F0ZV")).toMatch(/regular taxpayer/); // entity number 0
    expect(reasonOf("27AAPFU0939F1Z")).toMatch(/15 characters \(got 14\)/);
  });

  it("normalises at the door: trims, drops spaces, upper-cases; the error says GSTIN and why", () => {
    expect(gstinSchema.parse(" 27aapfu0939f1zv ")).toBe("27AAPFU0939F1ZV");
    expect(gstinSchema.parse("27 AAPFU 0939F 1ZV")).toBe("27AAPFU0939F1ZV");
    const failed = gstinSchema.safeParse("27AAPFU0939F1ZO");
    expect(failed.success).toBe(false);
    expect(failed.error?.issues[0]?.message).toMatch(/^GSTIN has a wrong check character/);
  });

  it("accepts generated valid GSTINs and refuses every single-character substitution of them", () => {
    fc.assert(
      fc.property(validGstin, fc.integer({ min: 0, max: 14 }), fc.constantFrom(...ALPHABET), (gstin, at, replacement) => {
        expect(reasonOf(gstin)).toBe("ok");
        fc.pre(gstin[at] !== replacement);
        const changed = gstin.slice(0, at) + replacement + gstin.slice(at + 1);
        expect(reasonOf(changed)).not.toBe("ok");
      }),
      { numRuns: 2_000 },
    );
  });

  it("refuses every substitution at every position of one GSTIN (exhaustive)", () => {
    const gstin = "27AAPFU0939F1ZV";
    for (let at = 0; at < 15; at++) {
      for (const replacement of ALPHABET) {
        if (gstin[at] === replacement) continue;
        expect(reasonOf(gstin.slice(0, at) + replacement + gstin.slice(at + 1)), `${at}:${replacement}`).not.toBe("ok");
      }
    }
  });

  it("maps GST state codes to every ISO state code and back", () => {
    const isoCodes = Object.values(GST_STATE_CODES).filter((iso) => iso !== null);
    expect(new Set(isoCodes)).toEqual(new Set(INDIAN_STATE_CODES));
    expect(isoCodes.length).toBe(INDIAN_STATE_CODES.length);
    for (const iso of INDIAN_STATE_CODES) expect(GST_STATE_CODES[gstStateCodeOf(iso)]).toBe(iso);
    expect(stateOfGstin("29ABCDE1234F1ZW")).toBe("IN-KA");
  });
});
