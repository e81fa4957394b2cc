import { describe, expect, it } from "vitest";
import { cartTotals, discountAmount, lineTotal } from "./cart-totals";

describe("cart totals", () => {
  it("sums line totals", () => {
    expect(lineTotal({ unitPrice: 1999, quantity: 3 })).toBe(5997);
    expect(cartTotals([{ unitPrice: 1000, quantity: 2 }, { unitPrice: 250, quantity: 1 }], null)).toEqual({
      subtotal: 2250,
      discount: 0,
      total: 2250,
    });
  });

  it("an empty cart is all zeros, whatever the discount", () => {
    expect(cartTotals([], { kind: "fixed_amount", value: 500 })).toEqual({ subtotal: 0, discount: 0, total: 0 });
  });

  it("rounds a percentage half up on the subtotal", () => {
    expect(discountAmount(1005, { kind: "percentage", value: 10 })).toBe(101); // 100.5 -> 101
    expect(discountAmount(1004, { kind: "percentage", value: 10 })).toBe(100); // 100.4 -> 100
    expect(discountAmount(1006, { kind: "percentage", value: 15 })).toBe(151); // 150.9 -> 151
    expect(discountAmount(999, { kind: "percentage", value: 100 })).toBe(999);
  });

  it("never takes a fixed amount below zero", () => {
    expect(cartTotals([{ unitPrice: 300, quantity: 1 }], { kind: "fixed_amount", value: 500 })).toEqual({
      subtotal: 300,
      discount: 300,
      total: 0,
    });
    expect(discountAmount(1000, { kind: "fixed_amount", value: 250 })).toBe(250);
  });

  it("stays exact for large carts", () => {
    const big = { unitPrice: 100_000_000_000, quantity: 999 };
    expect(lineTotal(big)).toBe(99_900_000_000_000);
    expect(discountAmount(99_900_000_000_001, { kind: "percentage", value: 50 })).toBe(49_950_000_000_001);
  });
});
