import { beforeAll, describe, expect, it } from "vitest";
import { TAX_CLASSES, type TaxClass } from "#shared/db/schema";
import { withStore } from "#shared/db/with-store";
import { makeStore, sqlErrorCode, testDb } from "../../test/harness";
import {
  INDIAN_STATE_CODES,
  INDIAN_STATE_NAMES,
  indianStateSchema,
  orderMoney,
  parcelTax,
  resolveRate,
  splitProportionally,
  taxIn,
  type GstRates,
  type IndianStateCode,
  type OrderMoney,
} from "./gst";
import { indianDate, ratesOn } from "./gst-rates";
import { mulberry32 } from "../../test/prng";

const db = testDb();
const APPAREL = { rateBp: 500, thresholdMinor: 250_000, rateAboveBp: 1800 };
const APPAREL_BEFORE = { rateBp: 500, thresholdMinor: 100_000, rateAboveBp: 1200 };
const AFTER: GstRates = {
  gst_exempt: 0, gst_0: 0, gst_5: 500, gst_18: 1800, gst_40: 4000, gst_3: 300, gst_1_5: 150, gst_0_25: 25, gst_apparel: APPAREL, gst_footwear: APPAREL,
};
const BEFORE: GstRates = { ...AFTER, gst_40: 2800, gst_apparel: APPAREL_BEFORE, gst_footwear: APPAREL_BEFORE };
// Cut and polished diamonds were 3 % until 2018-01-25 (then 0.25 %, 1.5 % from 2022-07-18).
const START: GstRates = { ...BEFORE, gst_1_5: 300 };
const MH = "IN-MH";
const KA = "IN-KA";

describe("taxIn: GST inside an inclusive amount", () => {
  it("is amount × r / (100 % + r), rounded half up", () => {
    expect(taxIn(10_500, 500)).toBe(500); // ₹105 at 5 % is ₹100 + ₹5
    expect(taxIn(129_900, 500)).toBe(6186); // 6185.71
    expect(taxIn(118, 1800)).toBe(18);
    expect(taxIn(16, 2800)).toBe(4); // 3.5 exactly: half up
    expect(taxIn(48, 2800)).toBe(11); // 10.5
    expect(taxIn(150, 4000)).toBe(43); // 42.86
    expect(taxIn(99_999, 0)).toBe(0);
    expect(taxIn(0, 1800)).toBe(0);
  });

  it("stays exact past 2^53 intermediate products and refuses fractions or negatives", () => {
    expect(taxIn(99_900_000_000_000, 4000)).toBe(28_542_857_142_857); // 28 542 857 142 857.14
    expect(() => taxIn(10.5, 500)).toThrow(RangeError);
    expect(() => taxIn(-1, 500)).toThrow(RangeError);
    expect(() => taxIn(100, 10_001)).toThrow(RangeError);
  });
});

describe("splitProportionally (largest remainder)", () => {
  it("gives the leftover units to the largest remainders, ties to the earlier part", () => {
    expect(splitProportionally(10_000, [105_000, 118_000])).toEqual([4709, 5291]); // 4708.52 / 5291.48
    expect(splitProportionally(100, [1, 1, 1])).toEqual([34, 33, 33]);
    expect(splitProportionally(2, [1, 1, 1])).toEqual([1, 1, 0]);
    expect(splitProportionally(7, [0, 5, 0])).toEqual([0, 7, 0]);
  });

  it("splits equally when every weight is 0, and nothing over no parts", () => {
    expect(splitProportionally(5, [0, 0])).toEqual([3, 2]);
    expect(splitProportionally(0, [])).toEqual([]);
    expect(() => splitProportionally(1, [])).toThrow(RangeError);
    expect(() => splitProportionally(1, [1, -1])).toThrow(RangeError);
  });
});

describe("parcelTax", () => {
  const kurta = { taxClass: "gst_5" as const, amount: 129_900 };

  it("intra-state: CGST and SGST, half each", () => {
    expect(parcelTax({ lines: [kurta], shipping: 0, originState: MH, destinationState: MH, rates: AFTER })).toEqual({
      supply: "intra_state",
      taxable: 123_714,
      tax: 6186,
      cgst: 3093,
      sgst: 3093,
      igst: 0,
      byRate: [{ rateBp: 500, goods: 129_900, shipping: 0, taxable: 123_714, tax: 6186, cgst: 3093, sgst: 3093, igst: 0 }],
    });
  });

  it("inter-state: IGST only", () => {
    const t = parcelTax({ lines: [kurta], shipping: 0, originState: MH, destinationState: KA, rates: AFTER });
    expect([t.supply, t.tax, t.cgst, t.sgst, t.igst]).toEqual(["inter_state", 6186, 0, 0, 6186]);
  });

  it("exempt and nil-rated goods carry no tax, nor does their shipping", () => {
    const lines = [{ taxClass: "gst_exempt" as const, amount: 50_000 }, { taxClass: "gst_0" as const, amount: 20_000 }];
    const t = parcelTax({ lines, shipping: 5000, originState: MH, destinationState: MH, rates: AFTER });
    expect(t).toMatchObject({ taxable: 75_000, tax: 0, cgst: 0, sgst: 0, igst: 0 });
    expect(t.byRate).toEqual([{ rateBp: 0, goods: 70_000, shipping: 5000, taxable: 75_000, tax: 0, cgst: 0, sgst: 0, igst: 0 }]);

    // With 18 % goods beside them, only the 18 % goods' share of the shipping (60 %) is taxed.
    const mixed = parcelTax({
      lines: [{ taxClass: "gst_exempt", amount: 40_000 }, { taxClass: "gst_18", amount: 60_000 }],
      shipping: 10_000,
      originState: MH,
      destinationState: KA,
      rates: AFTER,
    });
    expect(mixed.byRate.map((r) => [r.rateBp, r.shipping, r.tax])).toEqual([[0, 4000, 0], [1800, 6000, 10_068]]);
    expect(mixed.igst).toBe(10_068); // 66 000 × 18 / 118 = 10 067.80
  });

  it("mixed rates: the shipping splits by the goods' value, each rate is rounded once", () => {
    const t = parcelTax({
      lines: [
        { taxClass: "gst_5", amount: 60_000 },
        { taxClass: "gst_18", amount: 118_000 },
        { taxClass: "gst_5", amount: 45_000 },
      ],
      shipping: 10_000,
      originState: MH,
      destinationState: MH,
      rates: AFTER,
    });
    // 5 %: goods 105 000 + shipping 4709 = 109 709 → 5224.24; 18 %: 118 000 + 5291 = 123 291 → 18 807.10.
    expect(t.byRate).toEqual([
      { rateBp: 500, goods: 105_000, shipping: 4709, taxable: 104_485, tax: 5224, cgst: 2612, sgst: 2612, igst: 0 },
      { rateBp: 1800, goods: 118_000, shipping: 5291, taxable: 104_484, tax: 18_807, cgst: 9404, sgst: 9403, igst: 0 },
    ]);
    expect([t.taxable, t.tax, t.cgst, t.sgst]).toEqual([208_969, 24_031, 12_016, 12_015]);
  });

  it("odd paisa: CGST first, then SGST, alternating over the parcel's rates", () => {
    const lines = [
      { taxClass: "gst_5" as const, amount: 105 }, // tax 5
      { taxClass: "gst_18" as const, amount: 177 }, // tax 27
      { taxClass: "gst_40" as const, amount: 150 }, // tax 43
    ];
    const t = parcelTax({ lines, shipping: 0, originState: "IN-CH", destinationState: "IN-CH", rates: AFTER });
    expect(t.byRate.map((r) => [r.tax, r.cgst, r.sgst])).toEqual([[5, 3, 2], [27, 13, 14], [43, 22, 21]]);
    expect([t.tax, t.cgst, t.sgst]).toEqual([75, 38, 37]);
  });

  it("refuses unknown states, fractional amounts and an empty parcel", () => {
    const base = { lines: [kurta], shipping: 0, originState: MH, destinationState: MH, rates: AFTER } as const;
    expect(() => parcelTax({ ...base, destinationState: "IN-XX" as IndianStateCode })).toThrow(/destinationState/);
    expect(() => parcelTax({ ...base, shipping: 0.5 })).toThrow(/shipping/);
    expect(() => parcelTax({ ...base, lines: [] })).toThrow(RangeError);
  });
});

describe("orderMoney: the docs/gst.md example", () => {
  // A shopper in Karnataka; a kurta and a jacket ship from Mumbai, two dupattas from Bengaluru; FLAT200, ₹99 shipping.
  const example = (rates: GstRates): OrderMoney =>
    orderMoney({
      parcels: [
        { originState: MH, lines: [{ taxClass: "gst_5", amount: 219_900 }, { taxClass: "gst_18", amount: 320_000 }] },
        { originState: KA, lines: [{ taxClass: "gst_5", amount: 159_800 }] },
      ],
      discount: 20_000,
      shipping: 9900,
      destinationState: KA,
      rates,
    });

  it("splits discount and shipping by parcel subtotal and sums the parcels' tax", () => {
    const m = example(AFTER);
    expect(m).toMatchObject({ subtotal: 699_700, discount: 20_000, shipping: 9900, tax: 65_929, total: 689_600 });
    const [a, b] = m.parcels;
    expect(a).toMatchObject({ subtotal: 539_900, discount: 15_432, shipping: 7639, total: 532_107, lineDiscounts: [6285, 9147] });
    expect(a).toMatchObject({ supply: "inter_state", taxable: 473_678, tax: 58_429, cgst: 0, sgst: 0, igst: 58_429 });
    expect(a!.byRate.map((r) => [r.rateBp, r.goods, r.shipping, r.tax])).toEqual([[500, 213_615, 3111, 10_320], [1800, 310_853, 4528, 48_109]]);
    expect(b).toMatchObject({ subtotal: 159_800, discount: 4568, shipping: 2261, total: 157_493, taxable: 149_993, tax: 7500, cgst: 3750, sgst: 3750, igst: 0 });
  });

  it("refuses a discount above the subtotal and an order without parcels", () => {
    const parcels = [{ originState: MH, lines: [{ taxClass: "gst_5" as const, amount: 100 }] }] as const;
    expect(() => orderMoney({ parcels, discount: 101, shipping: 0, destinationState: MH, rates: AFTER })).toThrow(/discount/);
    expect(() => orderMoney({ parcels: [], discount: 0, shipping: 0, destinationState: MH, rates: AFTER })).toThrow(RangeError);
  });
});

describe("Indian states", () => {
  it("lists the 36 ISO 3166-2:IN codes, each named", () => {
    expect(new Set(INDIAN_STATE_CODES).size).toBe(36);
    expect(Object.keys(INDIAN_STATE_NAMES).sort()).toEqual([...INDIAN_STATE_CODES].sort());
  });

  it("validates with zod, taking the codes ISO replaced in 2023 as their successors", () => {
    expect(indianStateSchema.parse("IN-MH")).toBe("IN-MH");
    expect(indianStateSchema.parse("IN-CT")).toBe("IN-CG");
    expect(indianStateSchema.parse("IN-TG")).toBe("IN-TS");
    for (const bad of ["MH", "IN-XX", "in-mh", "", 27]) {
      const result = indianStateSchema.safeParse(bad);
      expect(result.success).toBe(false);
    }
    expect(indianStateSchema.safeParse("IN-XX").error?.issues[0]?.message).toMatch(/ISO 3166-2:IN/);
  });
});

describe("gst_rate (migrations 0010, 0037) through ratesOn", () => {
  let storeId = "";
  beforeAll(async () => {
    storeId = (await makeStore(db)).id;
  });
  const read = (on: Date | string) => withStore(db, storeId, (tx) => ratesOn(tx, on), { readOnly: true });

  it("answers the slabs before and after 2025-09-22, by the day in India", async () => {
    expect(await read("2025-09-21")).toEqual(BEFORE);
    expect(await read("2025-09-22")).toEqual(AFTER);
    expect(await read("2017-07-01")).toEqual(START);
    expect(indianDate(new Date("2025-09-21T18:29:59.999Z"))).toBe("2025-09-21");
    expect(await read(new Date("2025-09-21T18:29:59.999Z"))).toEqual(BEFORE);
    expect(await read(new Date("2025-09-21T18:30:00.000Z"))).toEqual(AFTER); // 00:00 on the 22nd in India
  });

  it("taxes a 40 % line at 28 % before the change and 40 % after", async () => {
    const line = { taxClass: "gst_40" as const, amount: 140_000 };
    const tax = async (on: string) =>
      parcelTax({ lines: [line], shipping: 0, originState: MH, destinationState: MH, rates: await read(on) }).tax;
    expect(await tax("2025-09-21")).toBe(30_625); // 140 000 × 28 / 128
    expect(await tax("2025-09-22")).toBe(40_000); // 140 000 × 40 / 140
  });

  it("refuses a day before GST began and a malformed day", async () => {
    await expect(read("2017-06-30")).rejects.toThrow(/No GST rate on 2017-06-30/);
    await expect(read("2025-13-01")).rejects.toThrow();
  });

  it("is read-only for the runtime role", async () => {
    expect(await sqlErrorCode(db, "insert into gst_rate values ('gst_5', '2030-01-01', 1200)")).toBe("42501");
    expect(await sqlErrorCode(db, "update gst_rate set rate_bp = 0")).toBe("42501");
    expect(await sqlErrorCode(db, "delete from gst_rate")).toBe("42501");
  });
});

const random = mulberry32;

function randomCart(next: () => number) {
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[int(0, xs.length - 1)]!;
  // Mostly shop-sized amounts, sometimes a few paise, sometimes the largest a line can be.
  const amount = () => pick([() => int(0, 500), () => int(100, 2_000_000), () => int(0, 99_900_000_000_000)])();
  const destinationState = pick(INDIAN_STATE_CODES);
  const parcels = Array.from({ length: int(1, 4) }, () => ({
    originState: next() < 0.5 ? destinationState : pick(INDIAN_STATE_CODES),
    lines: Array.from({ length: int(1, 5) }, () => ({ taxClass: pick<TaxClass>(TAX_CLASSES), amount: amount(), quantity: int(1, 5) })),
  }));
  const subtotal = parcels.flatMap((p) => p.lines).reduce((s, l) => s + l.amount, 0);
  const discount = pick([0, int(0, subtotal), subtotal]);
  return { parcels, discount, shipping: pick([0, int(0, 100_000), int(0, 10_000_000)]), destinationState, rates: pick([BEFORE, AFTER]) };
}

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

describe("property: random carts", () => {
  it("splits always sum to the whole, each part within one unit of its exact share", () => {
    const next = random(11);
    for (let n = 0; n < 2000; n++) {
      const weights = Array.from({ length: 1 + Math.floor(next() * 6) }, () => (next() < 0.2 ? 0 : Math.floor(next() * 1e12)));
      const whole = Math.floor(next() * 1e12);
      const parts = splitProportionally(whole, weights);
      const w = weights.some((x) => x > 0) ? weights : weights.map(() => 1);
      const W = BigInt(sum(w));
      expect(sum(parts)).toBe(whole);
      parts.forEach((p, i) => {
        const diff = BigInt(p) * W - BigInt(whole) * BigInt(w[i]!);
        expect(diff >= -W && diff < W, `seed 11 case ${n} part ${i}`).toBe(true);
      });
    }
  });

  it("order tax = Σ parcel tax, heads add up, halves within a paisa, tax within the amount", () => {
    for (let seed = 1; seed <= 600; seed++) {
      const cart = randomCart(random(seed));
      const m = orderMoney(cart);
      const at = `seed ${seed}`;
      expect(m.tax, at).toBe(sum(m.parcels.map((p) => p.tax)));
      expect([m.subtotal, m.discount, m.shipping], at).toEqual(["subtotal", "discount", "shipping"].map((k) => sum(m.parcels.map((p) => p[k as "subtotal"]))));
      expect(m.total, at).toBe(m.subtotal - m.discount + m.shipping);
      expect(m.total, at).toBe(sum(m.parcels.map((p) => p.total)));
      m.parcels.forEach((p, i) => {
        const input = cart.parcels[i]!;
        expect(p.cgst + p.sgst + p.igst, at).toBe(p.tax);
        if (input.originState === cart.destinationState) expect([p.igst, p.cgst - p.sgst <= 1, p.cgst >= p.sgst], at).toEqual([0, true, true]);
        else expect([p.cgst, p.sgst], at).toEqual([0, 0]);
        expect(p.taxable + p.tax, at).toBe(p.total);
        expect(p.tax >= 0 && p.tax <= p.total, at).toBe(true);
        expect(sum(p.lineDiscounts), at).toBe(p.discount);
        p.lineDiscounts.forEach((d, j) => expect(d <= input.lines[j]!.amount, at).toBe(true));
        expect(sum(p.byRate.map((r) => r.goods)), at).toBe(p.subtotal - p.discount);
        expect(sum(p.byRate.map((r) => r.shipping)), at).toBe(p.shipping);
        expect(new Set(p.byRate.map((r) => r.rateBp)), at).toEqual(new Set(input.lines.map((l, j) => resolveRate(cart.rates, { ...l, amount: l.amount - p.lineDiscounts[j]! }))));
        for (const r of p.byRate) {
          // Rounded to nearest: |tax − amount × r / (1 + r)| ≤ ½.
          const d = 10_000n + BigInt(r.rateBp);
          const off = 2n * BigInt(r.tax) * d - 2n * BigInt(r.goods + r.shipping) * BigInt(r.rateBp);
          expect(off >= -d && off <= d, `${at} rate ${r.rateBp}`).toBe(true);
          expect(Math.abs(r.cgst - r.sgst) <= 1 && r.cgst + r.sgst + r.igst === r.tax, at).toBe(true);
        }
      });
    }
  });
});
