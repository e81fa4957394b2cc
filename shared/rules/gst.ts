/**
 * GST on an order, in integer minor units (paise). Pure: no database, no clock. The rules and a worked
 * example are in docs/gst.md; in short:
 * - prices are GST-inclusive, so tax is extracted: tax = amount × r / (100 % + r), rounded half up once per
 *   parcel per rate (never per line);
 * - a value-based class (apparel, footwear) takes its rate per line from the unit's value before GST and
 *   after discount (resolveRate);
 * - CGST + SGST (halves; CGST gets the odd paisa first) when the parcel ships from the ship-to state, IGST
 *   otherwise;
 * - a parcel's shipping is split over its rates in proportion to the goods' value at each rate;
 * - an order's discount and shipping are split over parcels by subtotal, a parcel's discount over its lines
 *   by amount, always by largest remainder, so the parts sum to the whole.
 */
import { z } from "zod";
import type { TaxClass } from "../db/schema";

// ISO 3166-2:IN since 2023-11-23: 28 states and 8 union territories.
export const INDIAN_STATE_CODES = [
  "IN-AN", "IN-AP", "IN-AR", "IN-AS", "IN-BR", "IN-CG", "IN-CH", "IN-DH", "IN-DL", "IN-GA", "IN-GJ", "IN-HP",
  "IN-HR", "IN-JH", "IN-JK", "IN-KA", "IN-KL", "IN-LA", "IN-LD", "IN-MH", "IN-ML", "IN-MN", "IN-MP", "IN-MZ",
  "IN-NL", "IN-OD", "IN-PB", "IN-PY", "IN-RJ", "IN-SK", "IN-TN", "IN-TR", "IN-TS", "IN-UK", "IN-UP", "IN-WB",
] as const;
export type IndianStateCode = (typeof INDIAN_STATE_CODES)[number];

export const INDIAN_STATE_NAMES: Readonly<Record<IndianStateCode, string>> = {
  "IN-AN": "Andaman and Nicobar Islands", "IN-AP": "Andhra Pradesh", "IN-AR": "Arunachal Pradesh", "IN-AS": "Assam",
  "IN-BR": "Bihar", "IN-CG": "Chhattisgarh", "IN-CH": "Chandigarh",
  "IN-DH": "Dadra and Nagar Haveli and Daman and Diu", "IN-DL": "Delhi", "IN-GA": "Goa", "IN-GJ": "Gujarat",
  "IN-HP": "Himachal Pradesh", "IN-HR": "Haryana", "IN-JH": "Jharkhand", "IN-JK": "Jammu and Kashmir",
  "IN-KA": "Karnataka", "IN-KL": "Kerala", "IN-LA": "Ladakh", "IN-LD": "Lakshadweep", "IN-MH": "Maharashtra",
  "IN-ML": "Meghalaya", "IN-MN": "Manipur", "IN-MP": "Madhya Pradesh", "IN-MZ": "Mizoram", "IN-NL": "Nagaland",
  "IN-OD": "Odisha", "IN-PB": "Punjab", "IN-PY": "Puducherry", "IN-RJ": "Rajasthan", "IN-SK": "Sikkim",
  "IN-TN": "Tamil Nadu", "IN-TR": "Tripura", "IN-TS": "Telangana", "IN-UK": "Uttarakhand", "IN-UP": "Uttar Pradesh",
  "IN-WB": "West Bengal",
};

/** Union territories without a legislature: their half of an intra-state supply is UTGST, not SGST. */
export const UTGST_TERRITORIES: ReadonlySet<IndianStateCode> = new Set(["IN-AN", "IN-CH", "IN-DH", "IN-LA", "IN-LD"]);

// Codes ISO replaced in 2023, still common in address libraries; accepted and answered as the new code.
const FORMER_CODES: Readonly<Record<string, IndianStateCode>> = { "IN-CT": "IN-CG", "IN-OR": "IN-OD", "IN-TG": "IN-TS", "IN-UT": "IN-UK" };

export const isIndianStateCode = (code: string): code is IndianStateCode => code in INDIAN_STATE_NAMES;

/** An Indian state or union territory (e.g. checkout's shippingAddress.state). */
export const indianStateSchema = z
  .string()
  .transform((code) => FORMER_CODES[code] ?? code)
  .pipe(z.enum(INDIAN_STATE_CODES, { error: "must be an ISO 3166-2:IN state or union territory code such as IN-MH" }));

/**
 * A value-based rate (apparel per piece, footwear per pair): `rateBp` while the unit's value before GST,
 * at that rate, is at most `thresholdMinor`; `rateAboveBp` above it.
 */
export interface ValueRate {
  rateBp: number;
  thresholdMinor: number;
  rateAboveBp: number;
}

/** A class's rate on a day: basis points (1800 = 18 %), or a value-based rate. */
export type ClassRate = number | ValueRate;

/** Rate per tax class, as on one day (shared/rules/gst-rates.ts). */
export type GstRates = Readonly<Record<TaxClass, ClassRate>>;

export interface TaxLine {
  taxClass: TaxClass;
  /** Inclusive of GST, minor units. In parcelTax: the line total after its discount share; in orderMoney: before. */
  amount: number;
  /** Units in the line: required for a value-based class (its rate is judged per unit), else unused. */
  quantity?: number;
}

export interface ParcelTaxInput {
  lines: readonly TaxLine[];
  /** The parcel's share of the order's shipping, inclusive of GST. */
  shipping: number;
  /** The state of the location the parcel ships from. */
  /** Null when the location's state is not known: treated as another state (IGST; the tax is the same). */
  originState: IndianStateCode | null;
  /** The ship-to state (the place of supply). */
  destinationState: IndianStateCode;
  rates: GstRates;
}

export interface RateTax {
  rateBp: number;
  /** Goods at this rate, after discount, inclusive. */
  goods: number;
  /** The share of the parcel's shipping taxed at this rate, inclusive. */
  shipping: number;
  taxable: number;
  tax: number;
  cgst: number;
  sgst: number;
  igst: number;
}

export interface ParcelTax {
  supply: "intra_state" | "inter_state";
  taxable: number;
  tax: number;
  cgst: number;
  sgst: number;
  igst: number;
  /** One entry per distinct rate in the parcel, ascending. */
  byRate: RateTax[];
}

function assertMinor(value: number, what: string): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${what} must be a whole, non-negative number of minor units (got ${value})`);
  }
}

function assertState(code: string, what: string): void {
  if (!isIndianStateCode(code)) throw new RangeError(`${what} must be an ISO 3166-2:IN code (got ${JSON.stringify(code)})`);
}

const total = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0);

/** The GST inside a GST-inclusive amount: amount × r / (10 000 + r) basis points, rounded half up. */
export function taxIn(amount: number, rateBp: number): number {
  assertMinor(amount, "amount");
  if (!Number.isInteger(rateBp) || rateBp < 0 || rateBp > 10_000) throw new RangeError(`rateBp must be 0..10000 (got ${rateBp})`);
  const a = BigInt(amount);
  const d = 10_000n + BigInt(rateBp);
  return Number((2n * a * BigInt(rateBp) + d) / (2n * d));
}

/**
 * A line's rate in basis points. A value-based class is judged on the unit's value before GST and after
 * discount, at its lower rate: that rate iff amount / quantity / (1 + rateBp) ≤ thresholdMinor, in
 * integers amount × 10 000 ≤ thresholdMinor × (10 000 + rateBp) × quantity, exactly (no rounding); else
 * rateAboveBp. `line.amount` is the line total after its share of the discount, inclusive of GST; every
 * unit of a line has the same value, so a line never straddles the threshold.
 */
export function resolveRate(rates: GstRates, line: TaxLine): number {
  const rate = rates[line.taxClass];
  if (rate === undefined) throw new RangeError(`no GST rate for tax class ${JSON.stringify(line.taxClass)}`);
  if (typeof rate === "number") return rate;
  const { quantity } = line;
  if (quantity === undefined || !Number.isSafeInteger(quantity) || quantity < 1) {
    throw new RangeError(`a ${line.taxClass} line needs its quantity, a whole number of at least 1 (got ${quantity})`);
  }
  assertMinor(line.amount, "amount");
  const within = BigInt(line.amount) * 10_000n <= BigInt(rate.thresholdMinor) * (10_000n + BigInt(rate.rateBp)) * BigInt(quantity);
  return within ? rate.rateBp : rate.rateAboveBp;
}

/**
 * Splits `whole` into parts proportional to `weights` (largest remainder): each part is the exact share
 * rounded down, and the units left over go one each to the largest remainders, ties to the earlier part.
 * The parts always sum to `whole` and each is within one unit of its exact share. A part with weight 0
 * gets 0, unless every weight is 0: then the parts are equal (as nearly as whole units allow).
 */
export function splitProportionally(whole: number, weights: readonly number[]): number[] {
  assertMinor(whole, "whole");
  weights.forEach((w, i) => assertMinor(w, `weights[${i}]`));
  if (weights.length === 0) {
    if (whole === 0) return [];
    throw new RangeError("cannot split a non-zero amount over no parts");
  }
  const w = weights.some((x) => x > 0) ? weights.map(BigInt) : weights.map(() => 1n);
  const sum = w.reduce((a, b) => a + b, 0n);
  const t = BigInt(whole);
  const parts = w.map((x) => (t * x) / sum);
  const remainders = w.map((x) => (t * x) % sum);
  const left = Number(t - parts.reduce((a, b) => a + b, 0n));
  const byRemainder = remainders
    .map((r, i) => ({ r, i }))
    .sort((a, b) => (a.r === b.r ? a.i - b.i : a.r > b.r ? -1 : 1))
    .slice(0, left);
  for (const { i } of byRemainder) parts[i] = parts[i]! + 1n;
  return parts.map(Number);
}

/**
 * A parcel's GST. Each line's rate is resolved (resolveRate), goods are grouped by rate; the shipping is split over the rates in proportion to the
 * goods' value at each rate (goods at 0 %, exempt included, carry 0 % shipping); each rate's goods plus
 * shipping is taxed once. Intra-state, each rate's tax is halved into CGST and SGST and an odd paisa goes
 * to CGST, then SGST, alternating over the parcel's rates, so the parcel's CGST is ⌈tax / 2⌉ and its SGST
 * ⌊tax / 2⌋.
 */
export function parcelTax(input: ParcelTaxInput): ParcelTax {
  const { lines, shipping, rates } = input;
  if (input.originState !== null) assertState(input.originState, "originState");
  assertState(input.destinationState, "destinationState");
  assertMinor(shipping, "shipping");
  if (lines.length === 0) throw new RangeError("a parcel has at least one line");
  const goods = new Map<number, number>();
  lines.forEach((line, i) => {
    assertMinor(line.amount, `lines[${i}].amount`);
    const rate = resolveRate(rates, line);
    goods.set(rate, (goods.get(rate) ?? 0) + line.amount);
  });
  const rateList = [...goods.keys()].sort((a, b) => a - b);
  const shippingShares = splitProportionally(shipping, rateList.map((r) => goods.get(r)!));
  const intra = input.originState === input.destinationState;
  let oddToCgst = true;
  const byRate = rateList.map((rateBp, i): RateTax => {
    const g = goods.get(rateBp)!;
    const s = shippingShares[i]!;
    const tax = taxIn(g + s, rateBp);
    let cgst = 0;
    let sgst = 0;
    if (intra) {
      cgst = sgst = Math.floor(tax / 2);
      if (tax % 2 === 1) {
        if (oddToCgst) cgst++;
        else sgst++;
        oddToCgst = !oddToCgst;
      }
    }
    return { rateBp, goods: g, shipping: s, taxable: g + s - tax, tax, cgst, sgst, igst: intra ? 0 : tax };
  });
  const sumOf = (key: "taxable" | "tax" | "cgst" | "sgst" | "igst") => total(byRate.map((r) => r[key]));
  return {
    supply: intra ? "intra_state" : "inter_state",
    taxable: sumOf("taxable"),
    tax: sumOf("tax"),
    cgst: sumOf("cgst"),
    sgst: sumOf("sgst"),
    igst: sumOf("igst"),
    byRate,
  };
}

export interface OrderMoneyInput {
  /** Lines carry their totals before discount (unit price × quantity, inclusive). */
  parcels: readonly { lines: readonly TaxLine[]; originState: IndianStateCode | null }[];
  /** The order's discount (at most the subtotal) and shipping, both inclusive of GST. */
  discount: number;
  shipping: number;
  destinationState: IndianStateCode;
  rates: GstRates;
}

export interface ParcelMoney extends ParcelTax {
  subtotal: number;
  discount: number;
  shipping: number;
  /** subtotal − discount + shipping = taxable + tax. */
  total: number;
  /** Each line's share of the parcel's discount, in line order. */
  lineDiscounts: number[];
}

export interface OrderMoney {
  subtotal: number;
  discount: number;
  shipping: number;
  taxable: number;
  /** Exactly the sum of the parcels' tax. */
  tax: number;
  /** subtotal − discount + shipping. */
  total: number;
  parcels: ParcelMoney[];
}

/** An order's money: its discount and shipping split over the parcels by subtotal, then each parcel's GST. */
export function orderMoney(input: OrderMoneyInput): OrderMoney {
  const { parcels, discount, shipping } = input;
  if (parcels.length === 0) throw new RangeError("an order has at least one parcel");
  const subtotals = parcels.map((p, i) => {
    p.lines.forEach((l, j) => assertMinor(l.amount, `parcels[${i}].lines[${j}].amount`));
    return total(p.lines.map((l) => l.amount));
  });
  const subtotal = total(subtotals);
  assertMinor(subtotal, "subtotal");
  assertMinor(discount, "discount");
  assertMinor(shipping, "shipping");
  if (discount > subtotal) throw new RangeError(`discount ${discount} exceeds the subtotal ${subtotal}`);
  const discounts = splitProportionally(discount, subtotals);
  const shippings = splitProportionally(shipping, subtotals);
  const money = parcels.map((p, i): ParcelMoney => {
    const parcelDiscount = discounts[i]!;
    const parcelShipping = shippings[i]!;
    const lineDiscounts = splitProportionally(parcelDiscount, p.lines.map((l) => l.amount));
    const tax = parcelTax({
      lines: p.lines.map((l, j) => ({ ...l, amount: l.amount - lineDiscounts[j]! })),
      shipping: parcelShipping,
      originState: p.originState,
      destinationState: input.destinationState,
      rates: input.rates,
    });
    const parcelSubtotal = subtotals[i]!;
    const parcelTotal = parcelSubtotal - parcelDiscount + parcelShipping;
    return { ...tax, subtotal: parcelSubtotal, discount: parcelDiscount, shipping: parcelShipping, total: parcelTotal, lineDiscounts };
  });
  return {
    subtotal,
    discount,
    shipping,
    taxable: total(money.map((p) => p.taxable)),
    tax: total(money.map((p) => p.tax)),
    total: subtotal - discount + shipping,
    parcels: money,
  };
}
