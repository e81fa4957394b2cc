import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BASE_CSS } from "#shared/http/html";
import { hexContrast } from "./contrast";
import { colourProblem, PAGE_BACKGROUNDS, readTheme, THEME_DEFAULTS, themeCss, themeSchema, themeStamp } from "./theme";

const hex = fc
  .tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }))
  .map((c) => `#${c.map((x) => x.toString(16).padStart(2, "0")).join("")}`);

describe("the store's theme", () => {
  it("reads colours against the storefront's own light backgrounds", () => {
    for (const bg of PAGE_BACKGROUNDS.filter((b) => b !== "#ffffff")) expect(BASE_CSS).toContain(`--bg:${bg}`);
    expect(BASE_CSS).toContain("--card:#fff");
  });

  it("accepts a colour exactly when every pair it makes reaches 4.5:1", () => {
    fc.assert(
      fc.property(hex, (c) => {
        const worst = Math.min(hexContrast("#ffffff", c), ...PAGE_BACKGROUNDS.map((bg) => hexContrast(c, bg)));
        return (colourProblem(c) === null) === worst >= 4.5;
      }),
    );
    expect(colourProblem(THEME_DEFAULTS.brandColour)).toBeNull();
    expect(colourProblem(THEME_DEFAULTS.accentColour)).toBeNull();
  });

  it("puts only checked hex colours in the stylesheet, and the stamp follows the CSS", () => {
    const css = themeCss({ ...THEME_DEFAULTS, brandColour: "#7a1f3d" });
    expect(css).toContain(":root{--brand:#7a1f3d;--brand-text:#ffffff;--brand-ink:#7a1f3d;--accent:#2f5bea;--accent-text:#ffffff}");
    expect(themeCss(THEME_DEFAULTS, ".theme-preview")).toMatch(/^\.theme-preview\{--brand:/);
    // A value that is not a colour never reaches CSS, even if a stored theme were tampered with.
    expect(themeCss({ ...THEME_DEFAULTS, brandColour: "red;}body{display:none" })).not.toContain("display");
    expect(themeStamp(THEME_DEFAULTS)).toBe(themeStamp({ ...THEME_DEFAULTS, bannerHeading: "Sale" }));
    expect(themeStamp(THEME_DEFAULTS)).not.toBe(themeStamp({ ...THEME_DEFAULTS, accentColour: "#0b5d3b" }));
  });

  it("reads a stored theme only when it is whole and valid", () => {
    expect(readTheme(THEME_DEFAULTS)).toEqual(THEME_DEFAULTS);
    expect(readTheme(null)).toBeNull();
    expect(readTheme({ ...THEME_DEFAULTS, brandColour: "#ffff00" })).toBeNull();
    expect(readTheme({ brandColour: "#000000" })).toBeNull();
    expect(themeSchema.safeParse({ ...THEME_DEFAULTS, announcementEnabled: true }).success).toBe(false);
  });
});
