/**
 * Colour contrast as WCAG 2.1 defines it (success criterion 1.4.3; the definitions of "relative luminance"
 * and "contrast ratio"): a pure rule, used by the store's theme (./theme.ts) to refuse brand colours that
 * text could not be read on.
 */

/** WCAG 2.1 AA: the least contrast of normal-size text with what is behind it. */
export const AA_NORMAL_TEXT = 4.5;

const HEX = /^#([0-9a-f]{6})$/i;

/** A colour as six hex digits (`#1a4d8f`), case-insensitive; null for anything else. */
export function parseHex(colour: string): [number, number, number] | null {
  const m = HEX.exec(colour.trim());
  if (!m) return null;
  const n = Number.parseInt(m[1]!, 16);
  return [(n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff];
}

/** One sRGB channel (0..255) made linear: the formula of WCAG 2.1's relative luminance (threshold 0.04045). */
function linear(channel: number): number {
  const c = channel / 255;
  return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
}

/** Relative luminance, 0 (black) to 1 (white). */
export function relativeLuminance([r, g, b]: readonly [number, number, number]): number {
  return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
}

/** The contrast ratio of two colours, 1 (the same) to 21 (black and white); the order does not matter. */
export function contrastRatio(a: readonly [number, number, number], b: readonly [number, number, number]): number {
  const [hi, lo] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

/** The same for two hex colours; throws on one that is not `#rrggbb` (callers validate first). */
export function hexContrast(a: string, b: string): number {
  const x = parseHex(a);
  const y = parseHex(b);
  if (!x || !y) throw new Error(`not a #rrggbb colour: ${x ? b : a}`);
  return contrastRatio(x, y);
}

/** A ratio as people read it: rounded down to one decimal, so 4.49 never shows as a passing 4.5. */
export const formatRatio = (ratio: number): string => `${(Math.floor(ratio * 10) / 10).toFixed(1)}:1`;
