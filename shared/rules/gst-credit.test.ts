import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { allocateCredit, creditOfLine, minus, NOTHING, plus, type Charged } from "./gst-credit";

/** Refunds credited against invoice lines (docs/gst.md "Credit notes"): generated invoices and refund sequences. */

const COMPONENTS = ["total", "taxable", "cgst", "sgst", "igst"] as const;

/** A line as an invoice charges it: intra-state (CGST + SGST) or inter-state (IGST), at a GST rate. */
const chargedLine = fc
  .record({ taxable: fc.integer({ min: 0, max: 5_000_000 }), rateBp: fc.constantFrom(0, 25, 150, 300, 500, 1800, 4000), intra: fc.boolean() })
  .map(({ taxable, rateBp, intra }): Charged => {
    const tax = Math.round((taxable * rateBp) / 10_000);
    const cgst = intra ? Math.ceil(tax / 2) : 0;
    const sgst = intra ? tax - cgst : 0;
    const igst = intra ? 0 : tax;
    return { total: taxable + tax, taxable, cgst, sgst, igst };
  });

describe("allocateCredit", () => {
  it("a sequence of refunds never credits a component past what was charged, and the last of everything reverses it exactly", () => {
    fc.assert(
      fc.property(
        fc.array(chargedLine, { minLength: 1, maxLength: 6 }),
        fc.array(fc.record({ share: fc.double({ min: 0, max: 0.6, noNaN: true }), returned: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 }) }), { maxLength: 5 }),
        (lines, refunds) => {
          let remaining = lines.map((l) => ({ ...l }));
          const charged = lines.reduce(plus, NOTHING);
          for (const r of refunds) {
            const left = remaining.reduce((n, l) => n + l.total, 0);
            const amount = Math.floor(left * r.share);
            const targets = remaining.map((l, i) => ({ remaining: l, first: Math.floor(l.total * (r.returned[i] ?? 0)) }));
            const { credited, uncredited } = allocateCredit(amount, targets);
            expect(uncredited).toBe(0);
            expect(credited.reduce((n, c) => n + c.total, 0)).toBe(amount);
            credited.forEach((c, i) => {
              for (const k of COMPONENTS) {
                expect(c[k]).toBeGreaterThanOrEqual(0);
                expect(c[k]).toBeLessThanOrEqual(remaining[i]![k]);
              }
              expect(c.taxable + c.cgst + c.sgst + c.igst).toBe(c.total);
            });
            remaining = remaining.map((l, i) => minus(l, credited[i]!));
          }
          // The rest, and then some: everything left comes back, the excess is not credited.
          const left = remaining.reduce((n, l) => n + l.total, 0);
          const last = allocateCredit(left + 700, remaining.map((l) => ({ remaining: l, first: 0 })));
          expect(last.uncredited).toBe(700);
          const all = lines.map((_, i) => minus(lines[i]!, minus(remaining[i]!, last.credited[i]!)));
          expect(all.reduce(plus, NOTHING)).toEqual(charged);
          last.credited.forEach((c, i) => expect(c).toEqual(remaining[i]));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("a return's units are credited first, at their line's rate", () => {
    const cheap: Charged = { total: 105_000, taxable: 100_000, cgst: 2_500, sgst: 2_500, igst: 0 };
    const dear: Charged = { total: 118_000, taxable: 100_000, cgst: 9_000, sgst: 9_000, igst: 0 };
    const { credited } = allocateCredit(52_500, [
      { remaining: cheap, first: 52_500 },
      { remaining: dear, first: 0 },
    ]);
    expect(credited).toEqual([{ total: 52_500, taxable: 50_000, cgst: 1_250, sgst: 1_250, igst: 0 }, NOTHING]);
    // More than the returned units (their shipping too): the rest over every line's remaining value.
    const more = allocateCredit(52_500 + 10_000, [
      { remaining: cheap, first: 52_500 },
      { remaining: dear, first: 0 },
    ]);
    expect(more.credited.map((c) => c.total)).toEqual([52_500 + 3_079, 6_921]);
  });

  it("refuses a credit past a line's remaining value or in fractions of a paisa", () => {
    expect(() => creditOfLine({ total: 100, taxable: 100, cgst: 0, sgst: 0, igst: 0 }, 101)).toThrow(RangeError);
    expect(() => allocateCredit(10.5, [])).toThrow(RangeError);
    expect(() => allocateCredit(10, [{ remaining: NOTHING, first: 1 }])).toThrow(RangeError);
    expect(allocateCredit(10, [])).toEqual({ credited: [], uncredited: 10 });
  });
});
