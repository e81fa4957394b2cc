import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AA_NORMAL_TEXT, contrastRatio, formatRatio, hexContrast, parseHex, relativeLuminance } from "./contrast";

const colour = fc.tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }));
const hex = colour.map(([r, g, b]) => `#${[r, g, b].map((c) => c.toString(16).padStart(2, "0")).join("")}`);

describe("WCAG 2.1 contrast", () => {
  it("black on white is 21:1, a colour on itself 1:1", () => {
    expect(hexContrast("#000000", "#ffffff")).toBe(21);
    expect(hexContrast("#FFFFFF", "#000000")).toBe(21);
    fc.assert(fc.property(colour, (c) => contrastRatio(c, c) === 1));
  });

  it("is symmetric and always within 1..21", () => {
    fc.assert(
      fc.property(colour, colour, (a, b) => {
        const ratio = contrastRatio(a, b);
        return ratio === contrastRatio(b, a) && ratio >= 1 && ratio <= 21;
      }),
    );
  });

  it("grows as one colour darkens against white (luminance is monotonic in each channel)", () => {
    fc.assert(
      fc.property(colour, fc.integer({ min: 0, max: 2 }), (c, i) => {
        const darker = [...c] as [number, number, number];
        darker[i] = Math.max(0, darker[i]! - 1);
        return relativeLuminance(darker) <= relativeLuminance(c) && contrastRatio(darker, [255, 255, 255]) >= contrastRatio(c, [255, 255, 255]);
      }),
    );
  });

  it("matches published figures: #767676 on white passes AA at 4.54, #777777 fails at 4.48", () => {
    expect(hexContrast("#767676", "#ffffff")).toBeCloseTo(4.54, 2);
    expect(hexContrast("#777777", "#ffffff")).toBeCloseTo(4.48, 2);
    expect(hexContrast("#777777", "#ffffff")).toBeLessThan(AA_NORMAL_TEXT);
    // The linear segment's threshold: a channel of 10 (0.0392) is on the straight part.
    expect(relativeLuminance([10, 10, 10])).toBeCloseTo(10 / 255 / 12.92, 10);
  });

  it("reads #rrggbb only, and rounds a ratio down for display", () => {
    fc.assert(fc.property(hex, (h) => parseHex(h) !== null && parseHex(h.toUpperCase()) !== null));
    for (const bad of ["", "#fff", "123456", "#12345g", "#1234567", "red", "rgb(0,0,0)"]) expect(parseHex(bad), bad).toBeNull();
    expect(formatRatio(4.4999)).toBe("4.4:1");
    expect(formatRatio(21)).toBe("21.0:1");
    expect(() => hexContrast("#fff", "#000000")).toThrow(/#fff/);
  });
});
