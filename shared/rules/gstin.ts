/**
 * GSTIN: the 15-character GST registration number (docs/gst.md "Tax identity"). Pure: no database.
 * - positions 1-2: the GST state code (01-24, 26, 27, 29-38 and 97; 25, 28, 96 and 99 are not a taxpayer's);
 * - 3-12: the holder's PAN ([A-Z]{5}[0-9]{4}[A-Z]); 13: the registration count in that state (1-9, then A-Z);
 * - 14: always Z; 15: a check character, a base-36 weighted sum mod 36 of the first 14.
 * Only regular taxpayers' GSTINs are accepted: TDS/TCS, UIN and non-resident OIDAR numbers follow other patterns.
 */
import { z } from "zod";
import type { IndianStateCode } from "./gst";

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const FORMAT = /^[0-9]{2}[A-Z]{5}[0-9]{4}[A-Z][1-9A-Z]Z[0-9A-Z]$/;

/** GST state code → ISO 3166-2:IN code (the code base's state codes, shared/rules/gst.ts); 97 has none. */
export const GST_STATE_CODES: Readonly<Record<string, IndianStateCode | null>> = {
  "01": "IN-JK", "02": "IN-HP", "03": "IN-PB", "04": "IN-CH", "05": "IN-UK", "06": "IN-HR", "07": "IN-DL", "08": "IN-RJ",
  "09": "IN-UP", "10": "IN-BR", "11": "IN-SK", "12": "IN-AR", "13": "IN-NL", "14": "IN-MN", "15": "IN-MZ", "16": "IN-TR",
  "17": "IN-ML", "18": "IN-AS", "19": "IN-WB", "20": "IN-JH", "21": "IN-OD", "22": "IN-CG", "23": "IN-MP", "24": "IN-GJ",
  // 26: Dadra and Nagar Haveli and Daman and Diu since the merger of 26 Jan 2020 (25 was Daman and Diu before it).
  "26": "IN-DH", "27": "IN-MH", "29": "IN-KA", "30": "IN-GA", "31": "IN-LD", "32": "IN-KL", "33": "IN-TN", "34": "IN-PY",
  // 37: Andhra Pradesh since 2014 (28 was the undivided state); 38: Ladakh; 97: Other Territory (no ISO code).
  "35": "IN-AN", "36": "IN-TS", "37": "IN-AP", "38": "IN-LA", "97": null,
};

const ISO_TO_GST = new Map(
  Object.entries(GST_STATE_CODES).flatMap(([gst, iso]) => (iso ? [[iso, gst] as const] : [])),
);

/** The GST state code of a state or union territory (e.g. IN-MH → 27). */
export const gstStateCodeOf = (state: IndianStateCode): string => ISO_TO_GST.get(state)!;

/** The check character of a GSTIN's first 14 characters (upper case, of the base-36 alphabet). */
export function gstinCheckCharacter(first14: string): string {
  let sum = 0;
  for (let i = 0; i < 14; i++) {
    const product = ALPHABET.indexOf(first14[i]!) * (i % 2 === 0 ? 1 : 2);
    sum += Math.floor(product / 36) + (product % 36);
  }
  return ALPHABET[(36 - (sum % 36)) % 36]!;
}

/** Trim, drop inner spaces and upper-case, as people type and paste them. */
export const normalizeGstin = (raw: string): string => raw.replace(/\s+/g, "").toUpperCase();

export type GstinCheck = { ok: true; gstin: string; stateCode: string; state: IndianStateCode | null } | { ok: false; reason: string };

/** Checks a (normalised) GSTIN: format, then state code, then the check character; the reason says what to fix. */
export function checkGstin(gstin: string): GstinCheck {
  if (gstin.length !== 15) return { ok: false, reason: `must be 15 characters (got ${gstin.length})` };
  if (!FORMAT.test(gstin)) {
    return {
      ok: false,
      reason:
        "must be a regular taxpayer's GSTIN: 2-digit state code, 10-character PAN (5 letters, 4 digits, 1 letter), entity number 1-9 or A-Z, Z, check character",
    };
  }
  const stateCode = gstin.slice(0, 2);
  if (!(stateCode in GST_STATE_CODES)) return { ok: false, reason: `has state code ${stateCode}, which is not a GST state or union territory code` };
  const expected = gstinCheckCharacter(gstin);
  if (gstin[14] !== expected) return { ok: false, reason: "has a wrong check character (last character): check the number for a typo" };
  return { ok: true, gstin, stateCode, state: GST_STATE_CODES[stateCode]! };
}

/** A GSTIN at the door: normalised, then checked; the value is the normalised GSTIN. */
export const gstinSchema = z
  .string()
  .max(40)
  .transform(normalizeGstin)
  .superRefine((gstin, ctx) => {
    const result = checkGstin(gstin);
    if (!result.ok) ctx.addIssue({ code: "custom", message: `GSTIN ${result.reason}` });
  });

/** The ISO state a valid GSTIN belongs to (null for 97, Other Territory). */
export const stateOfGstin = (gstin: string): IndianStateCode | null => GST_STATE_CODES[gstin.slice(0, 2)] ?? null;
