import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { TaxClass } from "#shared/db/schema";
import { withStore } from "#shared/db/with-store";
import { discountAmount } from "#shared/storefront/cart-totals";
import { makeStore, testDb } from "../../test/harness";
import { orderMoney, parcelTax, resolveRate, taxIn, type GstRates, type TaxLine } from "./gst";
import { ratesOn } from "./gst-rates";

/** Value-based (apparel, footwear) and special (3 %, 1.5 %, 0.25 %) rates: issue 22 item 4, docs/gst.md. */
const db = testDb();
const APPAREL = { rateBp: 500, thresholdMinor: 250_000, rateAboveBp: 1800 };
const RATES: GstRates = {
  gst_exempt: 0, gst_0: 0, gst_5: 500, gst_18: 1800, gst_40: 4000, gst_3: 300, gst_1_5: 150, gst_0_25: 25, gst_apparel: APPAREL, gst_footwear: APPAREL,
};
const MH = "IN-MH";
const KA = "IN-KA";

/** The rule as docs/gst.md writes it, independently of resolveRate: 5 % iff amount × 100 ≤ 250 000 × 105 × quantity. */
const expectedApparelRate = (amountAfterDiscount: number, quantity: number): number =>
  BigInt(amountAfterDiscount) * 100n <= 250_000n * 105n * BigInt(quantity) ? 500 : 1800;

/** One kurta line, its order's discount of a kind, one parcel: the parcel's rates. */
function kurta(unitPrice: number, quantity: number, terms: { kind: "percentage" | "fixed_amount"; value: number } | null) {
  const amount = unitPrice * quantity;
  const m = orderMoney({
    parcels: [{ originState: MH, lines: [{ taxClass: "gst_apparel", amount, quantity }] }],
    discount: discountAmount(amount, terms),
    shipping: 0,
    destinationState: MH,
    rates: RATES,
  });
  return m.parcels[0]!;
}

describe("resolveRate: apparel and footwear by the unit's value before GST and after discount", () => {
  it("flips above ₹2,625.00 inclusive a unit (₹2,500 before 5 % GST), per unit of the line", () => {
    const line = (amount: number, quantity = 1, taxClass: TaxClass = "gst_apparel"): TaxLine => ({ taxClass, amount, quantity });
    expect(resolveRate(RATES, line(262_500))).toBe(500);
    expect(resolveRate(RATES, line(262_501))).toBe(1800);
    expect(resolveRate(RATES, line(787_500, 3, "gst_footwear"))).toBe(500); // three pairs of ₹2,625.00
    expect(resolveRate(RATES, line(787_501, 3, "gst_footwear"))).toBe(1800);
    expect(resolveRate(RATES, line(0))).toBe(500);
    expect(resolveRate(RATES, line(500_000, 1, "gst_18"))).toBe(1800); // a fixed class ignores value and quantity
    const before = { ...RATES, gst_apparel: { rateBp: 500, thresholdMinor: 100_000, rateAboveBp: 1200 } };
    expect([resolveRate(before, line(105_000)), resolveRate(before, line(105_001))]).toEqual([500, 1200]);
  });

  it("refuses a value-based line without a whole quantity of at least 1", () => {
    expect(() => resolveRate(RATES, { taxClass: "gst_apparel", amount: 100 })).toThrow(/quantity/);
    expect(() => resolveRate(RATES, { taxClass: "gst_apparel", amount: 100, quantity: 0 })).toThrow(RangeError);
    expect(() => resolveRate(RATES, { taxClass: "gst_apparel", amount: 100, quantity: 1.5 })).toThrow(RangeError);
  });

  it("the issue's kurtas: ₹2,600 is 5 % with or without 10 % off; ₹2,700 is 18 %, and 5 % with 10 % off", () => {
    const tenOff = { kind: "percentage", value: 10 } as const;
    expect(kurta(260_000, 1, null)).toMatchObject({ tax: 12_381, byRate: [{ rateBp: 500 }] }); // 260 000 × 5 / 105 = 12 380.95
    expect(kurta(260_000, 1, tenOff)).toMatchObject({ tax: 11_143, byRate: [{ rateBp: 500 }] }); // 234 000 × 5 / 105
    expect(kurta(270_000, 1, null)).toMatchObject({ tax: 41_186, byRate: [{ rateBp: 1800 }] }); // 270 000 × 18 / 118 = 41 186.44
    expect(kurta(270_000, 1, tenOff)).toMatchObject({ tax: 11_571, byRate: [{ rateBp: 500 }] }); // 243 000 ≤ 262 500
    // A fixed amount off: ₹2,700 less ₹75.00 is exactly ₹2,625.00 (5 %); less ₹74.99 is a paisa over (18 %).
    expect(kurta(270_000, 1, { kind: "fixed_amount", value: 7500 }).byRate[0]!.rateBp).toBe(500);
    expect(kurta(270_000, 1, { kind: "fixed_amount", value: 7499 }).byRate[0]!.rateBp).toBe(1800);
    // Two units share the line's discount: ₹150.00 off two ₹2,700 kurtas is ₹2,625.00 each.
    expect(kurta(270_000, 2, { kind: "fixed_amount", value: 15_000 }).byRate[0]!.rateBp).toBe(500);
    expect(kurta(270_000, 2, { kind: "fixed_amount", value: 14_999 }).byRate[0]!.rateBp).toBe(1800);
  });

  it("a percent off that leaves a unit above ₹2,625.00 keeps it at 18 %; one that ends exactly at or under it is 5 %", () => {
    // ₹3,000 less 10 % is ₹2,700.00 a piece: still over, 18 % of what is paid.
    expect(kurta(300_000, 1, { kind: "percentage", value: 10 })).toMatchObject({ total: 270_000, tax: 41_186, byRate: [{ rateBp: 1800 }] }); // 270 000 × 18 / 118 = 41 186.44
    expect(kurta(300_000, 3, { kind: "percentage", value: 10 })).toMatchObject({ total: 810_000, byRate: [{ rateBp: 1800 }] });
    // 25 % off ₹3,500.00 is exactly ₹2,625.00 (5 %); off ₹3,500.02 it is ₹2,625.01, the percent rounded half up to the paisa (18 %).
    expect(kurta(350_000, 1, { kind: "percentage", value: 25 })).toMatchObject({ total: 262_500, tax: 12_500, byRate: [{ rateBp: 500 }] });
    expect(kurta(350_002, 1, { kind: "percentage", value: 25 })).toMatchObject({ total: 262_501, tax: 40_043, byRate: [{ rateBp: 1800 }] }); // 40 042.53
    expect(kurta(349_999, 1, { kind: "percentage", value: 25 })).toMatchObject({ total: 262_499, byRate: [{ rateBp: 500 }] });
    // Two units share the rounded discount: ₹7,000.02 less 25 % is ₹5,250.01, ₹2,625.005 a piece: over.
    expect(kurta(350_001, 2, { kind: "percentage", value: 25 })).toMatchObject({ total: 525_001, tax: 80_085, byRate: [{ rateBp: 1800 }] });
    expect(kurta(350_000, 2, { kind: "percentage", value: 25 })).toMatchObject({ total: 525_000, byRate: [{ rateBp: 500 }] });
  });
});

describe("property: the threshold with every discount kind, shared across lines and parcels", () => {
  const state = fc.constantFrom(MH, KA);
  const near = fc.integer({ min: 262_500 - 400, max: 262_500 + 400 }); // just under, at and over ₹2,625.00
  const far = fc.integer({ min: 1, max: 2_000_000 });
  const apparelLine = fc.record({
    taxClass: fc.constantFrom<TaxClass>("gst_apparel", "gst_footwear"),
    unit: fc.oneof(near, fc.integer({ min: 200_000, max: 350_000 })),
    quantity: fc.integer({ min: 1, max: 4 }),
  });
  const otherLine = fc.record({ taxClass: fc.constantFrom<TaxClass>("gst_5", "gst_18", "gst_3", "gst_1_5", "gst_0_25", "gst_exempt"), unit: far, quantity: fc.integer({ min: 1, max: 3 }) });
  const parcel = fc.record({ originState: state, lines: fc.array(fc.oneof(apparelLine, apparelLine, otherLine), { minLength: 1, maxLength: 4 }) });
  const terms = fc.oneof(
    fc.constant(null),
    fc.record({ kind: fc.constant("percentage" as const), value: fc.integer({ min: 0, max: 100 }) }),
    fc.record({ kind: fc.constant("fixed_amount" as const), value: fc.integer({ min: 0, max: 3_000_000 }) }),
  );

  it("each line's rate is the rule's at its value after discount; per rate goods + shipping is taxed once; taxable + tax = amount", () => {
    // What the generated cases reached, per discount kind: a value-based line at 5 % and at 18 % after a
    // discount that took something off it, and one the discount brought from 18 % down to 5 %.
    const reached = new Set<string>();
    fc.assert(
      fc.property(fc.array(parcel, { minLength: 1, maxLength: 3 }), terms, fc.integer({ min: 0, max: 20_000 }), state, (parcels, t, shipping, destinationState) => {
        const input = parcels.map((p) => ({ originState: p.originState, lines: p.lines.map((l) => ({ taxClass: l.taxClass, amount: l.unit * l.quantity, quantity: l.quantity })) }));
        const subtotal = input.flatMap((p) => p.lines).reduce((s, l) => s + l.amount, 0);
        const m = orderMoney({ parcels: input, discount: discountAmount(subtotal, t), shipping, destinationState, rates: RATES });
        m.parcels.forEach((p, i) => {
          const goods = new Map<number, number>();
          input[i]!.lines.forEach((l, j) => {
            const after = l.amount - p.lineDiscounts[j]!;
            const valueBased = l.taxClass === "gst_apparel" || l.taxClass === "gst_footwear";
            const rate = valueBased ? expectedApparelRate(after, l.quantity) : (RATES[l.taxClass] as number);
            goods.set(rate, (goods.get(rate) ?? 0) + after);
            if (valueBased) {
              const kind = t?.kind ?? "none";
              if (kind === "none" || p.lineDiscounts[j]! > 0) reached.add(`${kind} ${rate}`);
              if (p.lineDiscounts[j]! > 0 && expectedApparelRate(l.amount, l.quantity) === 1800 && rate === 500) reached.add(`${kind} 1800→500`);
            }
          });
          expect(new Map(p.byRate.map((r) => [r.rateBp, r.goods]))).toEqual(goods);
          for (const r of p.byRate) {
            expect(r.tax).toBe(taxIn(r.goods + r.shipping, r.rateBp));
            expect(r.taxable + r.tax).toBe(r.goods + r.shipping);
          }
          expect(p.taxable + p.tax).toBe(p.total);
          expect(p.cgst + p.sgst + p.igst).toBe(p.tax);
        });
        expect(m.taxable + m.tax).toBe(m.total);
      }),
      { numRuns: 400 },
    );
    expect([...reached].sort()).toEqual([
      "fixed_amount 1800", "fixed_amount 1800→500", "fixed_amount 500",
      "none 1800", "none 500",
      "percentage 1800", "percentage 1800→500", "percentage 500",
    ]);
  });

  it("without a discount, a unit is 5 % iff its inclusive price is at most ₹2,625.00", () => {
    fc.assert(
      fc.property(near, fc.integer({ min: 1, max: 5 }), (unit, quantity) => {
        expect(kurta(unit, quantity, null).byRate[0]!.rateBp).toBe(unit <= 262_500 ? 500 : 1800);
      }),
    );
  });

  it("a discount never raises a unit's rate (it only lowers the value)", () => {
    fc.assert(
      fc.property(near, fc.integer({ min: 1, max: 5 }), terms, (unit, quantity, t) => {
        expect(kurta(unit, quantity, t).byRate[0]!.rateBp).toBeLessThanOrEqual(kurta(unit, quantity, null).byRate[0]!.rateBp);
      }),
    );
  });
});

describe("3 %, 1.5 % and 0.25 %: CGST and SGST halves of the paise", () => {
  it("halves each rate's tax, the odd paisa to CGST then SGST in ascending rate order", () => {
    const lines: TaxLine[] = [
      { taxClass: "gst_3", amount: 5_150_000 }, // 150 000 (₹51,500 of gold at 3 %)
      { taxClass: "gst_1_5", amount: 1_016_015 }, // 15 015
      { taxClass: "gst_0_25", amount: 100_651 }, // 251: CGST 0.125 % and SGST 0.125 % of it, 126 + 125
    ];
    const t = parcelTax({ lines, shipping: 0, originState: MH, destinationState: MH, rates: RATES });
    expect(t.byRate.map((r) => [r.rateBp, r.tax, r.cgst, r.sgst])).toEqual([
      [25, 251, 126, 125],
      [150, 15_015, 7507, 7508],
      [300, 150_000, 75_000, 75_000],
    ]);
    expect([t.tax, t.cgst, t.sgst, t.igst]).toEqual([165_266, 82_633, 82_633, 0]);
    const inter = parcelTax({ lines, shipping: 0, originState: MH, destinationState: KA, rates: RATES });
    expect([inter.tax, inter.igst, inter.cgst]).toEqual([165_266, 165_266, 0]);
  });
});

describe("gst_rate (migration 0037) through ratesOn", () => {
  let storeId = "";
  beforeAll(async () => {
    storeId = (await makeStore(db)).id;
  });
  const read = (on: string) => withStore(db, storeId, (tx) => ratesOn(tx, on), { readOnly: true });

  it("dates the diamond rates: 3 %, 0.25 % from 2018-01-25, 1.5 % from 2022-07-18", async () => {
    const diamonds = async (on: string) => {
      const r = await read(on);
      return [r.gst_1_5, r.gst_0_25, r.gst_3];
    };
    expect(await diamonds("2018-01-24")).toEqual([300, 25, 300]);
    expect(await diamonds("2018-01-25")).toEqual([25, 25, 300]);
    expect(await diamonds("2022-07-17")).toEqual([25, 25, 300]);
    expect(await diamonds("2022-07-18")).toEqual([150, 25, 300]);
    expect(await diamonds("2026-01-01")).toEqual([150, 25, 300]);
  });

  it("answers apparel and footwear with their threshold and both rates: ₹1,000 / 12 % before 2025-09-22, ₹2,500 / 18 % from it", async () => {
    const before = await read("2025-09-21");
    const after = await read("2025-09-22");
    expect([before.gst_apparel, before.gst_footwear]).toEqual(Array(2).fill({ rateBp: 500, thresholdMinor: 100_000, rateAboveBp: 1200 }));
    expect([after.gst_apparel, after.gst_footwear]).toEqual(Array(2).fill(APPAREL));
  });
});
