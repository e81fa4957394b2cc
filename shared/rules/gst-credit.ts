import { splitProportionally } from "./gst";

/**
 * How a refund is credited against tax invoices (docs/gst.md "Credit notes"; CGST Act s.34): pure, in paise.
 *
 * Every invoice line (goods or shipping) was charged a total made of its taxable value and its CGST, SGST
 * and IGST. What is still creditable of a line is what it was charged less what earlier credit notes
 * credited. A refund is spread over the lines in two tiers: first over the lines it is for (a return's
 * units, up to their value), then what is left over every line's remaining value (a refund that also
 * gives back shipping, or a refund with no return), each tier in proportion, never past what a line has
 * left. Each line's share is split over its components in proportion to what remains of them, so a refund
 * of everything reverses exactly what was charged, component by component, and several partial refunds
 * never credit more than was charged.
 */

export interface Charged {
  /** Taxable value plus tax. */
  total: number;
  taxable: number;
  cgst: number;
  sgst: number;
  igst: number;
}

export const NOTHING: Charged = { total: 0, taxable: 0, cgst: 0, sgst: 0, igst: 0 };

export const plus = (a: Charged, b: Charged): Charged => ({
  total: a.total + b.total,
  taxable: a.taxable + b.taxable,
  cgst: a.cgst + b.cgst,
  sgst: a.sgst + b.sgst,
  igst: a.igst + b.igst,
});

export const minus = (a: Charged, b: Charged): Charged => ({
  total: a.total - b.total,
  taxable: a.taxable - b.taxable,
  cgst: a.cgst - b.cgst,
  sgst: a.sgst - b.sgst,
  igst: a.igst - b.igst,
});

/** `amount` (at most `remaining.total`) of a line, split over its components as they remain. */
export function creditOfLine(remaining: Charged, amount: number): Charged {
  if (!Number.isSafeInteger(amount) || amount < 0 || amount > remaining.total) {
    throw new RangeError(`a line's credit must be whole paise between 0 and ${remaining.total}, got ${amount}`);
  }
  if (amount === 0) return NOTHING;
  const [taxable, cgst, sgst, igst] = splitProportionally(amount, [remaining.taxable, remaining.cgst, remaining.sgst, remaining.igst]) as [number, number, number, number];
  return { total: amount, taxable, cgst, sgst, igst };
}

export interface CreditTarget {
  /** What is left to credit of the line. */
  remaining: Charged;
  /** The value the refund is for first (a returned unit's share of the line), at most `remaining.total`. */
  first: number;
}

export interface CreditAllocation {
  /** Per target, in order. */
  credited: Charged[];
  /** The part of the refund no invoice line had left (money for goods not invoiced: no credit note). */
  uncredited: number;
}

/** Spreads `amount` over the targets: first over `first`, then over what remains of every line. */
export function allocateCredit(amount: number, targets: readonly CreditTarget[]): CreditAllocation {
  if (!Number.isSafeInteger(amount) || amount < 0) throw new RangeError(`a refund must be whole paise, got ${amount}`);
  targets.forEach((t, i) => {
    if (t.first < 0 || t.first > t.remaining.total) throw new RangeError(`targets[${i}].first must be between 0 and its remaining ${t.remaining.total}`);
  });
  const firsts = targets.map((t) => t.first);
  const firstAmount = Math.min(amount, firsts.reduce((a, b) => a + b, 0));
  const tierOne = targets.length > 0 && firstAmount > 0 ? splitProportionally(firstAmount, firsts) : targets.map(() => 0);
  const room = targets.map((t, i) => t.remaining.total - tierOne[i]!);
  const restAmount = Math.min(amount - firstAmount, room.reduce((a, b) => a + b, 0));
  const tierTwo = targets.length > 0 && restAmount > 0 ? splitProportionally(restAmount, room) : targets.map(() => 0);
  return {
    credited: targets.map((t, i) => creditOfLine(t.remaining, tierOne[i]! + tierTwo[i]!)),
    uncredited: amount - firstAmount - restAmount,
  };
}
