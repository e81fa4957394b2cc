/**
 * Cart arithmetic, in integer minor units (paise for INR). Pure: no database, no clock.
 *
 * A discount applies to the whole subtotal, once:
 * - percentage: subtotal × percent / 100, rounded half up to a whole minor unit (₹10.005 → ₹10.01),
 *   computed on the subtotal rather than per line, so a cart's discount never drifts by line count;
 * - fixed_amount: the value, but never more than the subtotal (a total never goes below 0).
 */
export interface PricedLine {
  unitPrice: number;
  quantity: number;
}

export interface DiscountTerms {
  kind: "percentage" | "fixed_amount";
  value: number;
}

export interface CartTotals {
  subtotal: number;
  discount: number;
  total: number;
}

export const lineTotal = (line: PricedLine): number => Number(BigInt(line.unitPrice) * BigInt(line.quantity));

export function discountAmount(subtotal: number, terms: DiscountTerms | null): number {
  if (!terms || subtotal <= 0) return 0;
  if (terms.kind === "fixed_amount") return Math.min(terms.value, subtotal);
  const percent = BigInt(Math.min(Math.max(terms.value, 0), 100));
  return Number((BigInt(subtotal) * percent + 50n) / 100n);
}

export function cartTotals(lines: readonly PricedLine[], terms: DiscountTerms | null): CartTotals {
  const subtotal = lines.reduce((sum, line) => sum + lineTotal(line), 0);
  const discount = discountAmount(subtotal, terms);
  return { subtotal, discount, total: subtotal - discount };
}
