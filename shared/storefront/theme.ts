import { z } from "zod";
import { AA_NORMAL_TEXT, formatRatio, hexContrast, parseHex } from "./contrast";

/**
 * The store's own look (issue 23 item 2; docs/storefront-theme.md): brand and accent colours, an
 * announcement bar and a home-page banner, kept as a draft the merchant edits and previews in the admin and
 * a published copy the storefront shows (migration 0041). The storefront applies the published theme
 * through CSS custom properties (`themeCss`) served by the store's `/theme.css`, never per-store code.
 *
 * The logo, the favicon and the banner's image are files in the store's media (R2, shared/media: checked by
 * content, resized at upload); the theme holds what a page needs of each (the hash that names its files, the
 * original's size, the widths made), so they are drafted, previewed and published with the rest of the look
 * and reach the storefront with the held facts, with no read of their own.
 */

/**
 * The light page backgrounds the colours are read against (shared/http/html.ts BASE_CSS: --bg and --card;
 * theme.test.ts checks they still match). A colour is used as text on them (links, the store's name) and
 * as the fill behind white text (the announcement bar, the banner, buttons), so both must reach WCAG AA.
 */
export const PAGE_BACKGROUNDS = ["#f7f7f8", "#ffffff"] as const;
/** The text on a brand or accent fill. */
export const TEXT_ON_COLOUR = "#ffffff";

/** Why a colour is refused, or null when text stays readable with it (every pair at least 4.5:1). */
export function colourProblem(colour: string): string | null {
  if (!parseHex(colour)) return "Give a colour as # and six hex digits, e.g. #1a4d8f.";
  const onFill = hexContrast(TEXT_ON_COLOUR, colour);
  const onPage = Math.min(...PAGE_BACKGROUNDS.map((bg) => hexContrast(colour, bg)));
  if (onFill >= AA_NORMAL_TEXT && onPage >= AA_NORMAL_TEXT) return null;
  return (
    `Too light to read: white text on ${colour} is ${formatRatio(onFill)} and ${colour} text on the page is ${formatRatio(onPage)}; ` +
    `WCAG 2.1 AA needs at least ${AA_NORMAL_TEXT}:1. Choose a darker shade.`
  );
}

const colour = (what: string) =>
  z
    .string()
    .trim()
    .toLowerCase()
    .superRefine((value, ctx) => {
      const problem = colourProblem(value);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    })
    .describe(`${what} as #rrggbb; refused when text on it, or it as text on the page, would be under WCAG 2.1 AA contrast (4.5:1)`);

/** A link the merchant gives: a path of the store (`/collections/sale`) or an https address; "" for none. */
const link = z
  .string()
  .trim()
  .max(500)
  .refine((v) => v === "" || /^\/(?![/\\])\S*$/.test(v) || (/^https:\/\/\S+$/.test(v) && URL.canParse(v)), {
    message: "Give a path of the store (starting with /) or an https:// address.",
  });

const text = (max: number) => z.string().trim().max(max, `At most ${max} characters.`);

/** Every field of a theme with its rule: the draft, the published copy and an update use the same. */
export const themeFields = {
  brandColour: colour("The brand colour: the store's name, links, the announcement bar and the banner"),
  accentColour: colour("The accent colour: buttons and the banner's link"),
  announcementEnabled: z.boolean().describe("Show the announcement bar on every page"),
  announcementText: text(200).describe("The announcement bar's text (at most 200 characters)"),
  announcementLink: link.describe("Where the announcement bar leads: a path of the store or an https address; empty for none"),
  bannerHeading: text(100).describe("The home page banner's heading; the banner shows while this is not empty"),
  bannerText: text(500).describe("The banner's text (at most 500 characters)"),
  bannerLinkLabel: text(60).describe("The words of the banner's link, e.g. Shop the sale"),
  bannerLink: link.describe("Where the banner leads: a path of the store or an https address; empty for none"),
};

const mediaHash = z.string().regex(/^[0-9a-f]{64}$/);

/** A theme image (the logo, the banner's image): its files are the widths made, in WebP and JPEG. */
export const themeImageSchema = z.strictObject({
  hash: mediaHash,
  width: z.number().int().min(1).max(10_000),
  height: z.number().int().min(1).max(10_000),
  widths: z.array(z.number().int().min(1).max(1920)).min(1).max(6),
  /** What it shows; "" when it is decoration (the banner's heading says what matters). */
  alt: z.string().max(200).default(""),
});
export type ThemeImage = z.output<typeof themeImageSchema>;

/**
 * The theme's images, set and removed by theme.setImage / theme.removeImage (an upload each), never by
 * theme.updateDraft. A theme stored before they existed reads as having none.
 */
export const themeImageFields = {
  logo: themeImageSchema.nullable().default(null),
  favicon: z.strictObject({ hash: mediaHash }).nullable().default(null),
  bannerImage: themeImageSchema.nullable().default(null),
};
export type ThemeImageSlot = keyof typeof themeImageFields;
export const THEME_IMAGE_SLOTS = Object.keys(themeImageFields) as ThemeImageSlot[];

export const themeSchema = z.strictObject({ ...themeFields, ...themeImageFields }).superRefine((t, ctx) => {
  if (t.announcementEnabled && t.announcementText === "") ctx.addIssue({ code: "custom", path: ["announcementText"], message: "Write the announcement, or turn the bar off." });
  if (t.bannerLink !== "" && t.bannerLinkLabel === "") ctx.addIssue({ code: "custom", path: ["bannerLinkLabel"], message: "Give the link's words (e.g. Shop the sale)." });
});

export type Theme = z.output<typeof themeSchema>;

/** A store's starting draft: the platform's own colours, no bar, no banner. */
export const THEME_DEFAULTS: Theme = {
  brandColour: "#1b1f24",
  accentColour: "#2f5bea",
  announcementEnabled: false,
  announcementText: "",
  announcementLink: "",
  bannerHeading: "",
  bannerText: "",
  bannerLinkLabel: "",
  bannerLink: "",
  logo: null,
  favicon: null,
  bannerImage: null,
};

/** A stored theme (a jsonb column, the HOSTS namespace) as a Theme; null for none or anything malformed. */
export function readTheme(value: unknown): Theme | null {
  if (value === null || value === undefined) return null;
  const parsed = themeSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/**
 * The theme's custom properties for `selector` (`:root` on the storefront, the preview's box in the admin).
 * The values are hex colours that passed `colourProblem`, so nothing else can reach the stylesheet. In the
 * dark scheme the store's name keeps the page's own text colour (a dark brand colour would not read there).
 */
export function themeCss(theme: Theme, selector = ":root"): string {
  const brand = parseHex(theme.brandColour) ? theme.brandColour : THEME_DEFAULTS.brandColour;
  const accent = parseHex(theme.accentColour) ? theme.accentColour : THEME_DEFAULTS.accentColour;
  return (
    `${selector}{--brand:${brand};--brand-text:${TEXT_ON_COLOUR};--brand-ink:${brand};--accent:${accent};--accent-text:${TEXT_ON_COLOUR}}\n` +
    `@media (prefers-color-scheme:dark){${selector}{--brand-ink:var(--fg)}}\n`
  );
}

/**
 * A short stamp of the theme's look: the `/theme.css?t=` that changes exactly when the CSS does. Two FNV-1a-style
 * hashes of the CSS (different starts and multipliers: 64 bits), so two looks of a store practically never share
 * an address a browser keeps for a year. Not a secret: the CSS is public.
 */
export function themeStamp(theme: Theme): string {
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  for (const ch of themeCss(theme)) {
    const code = ch.charCodeAt(0);
    a = Math.imul(a ^ code, 0x01000193) >>> 0;
    b = Math.imul(b ^ code, 0x5bd1e995) >>> 0;
  }
  return a.toString(36).padStart(7, "0") + b.toString(36).padStart(7, "0");
}

/**
 * The rules that use the theme's properties, for the storefront's stylesheet and the admin's preview of a
 * draft alike (each falls back to the platform's look while no theme is published).
 */
export const THEME_RULES = `
.announcement{background:var(--brand,#1b1f24);color:var(--brand-text,#fff);text-align:center;padding:.5rem 1rem;margin:0;font-size:.9rem}
.announcement a{color:inherit;text-decoration:underline}
header.shop{border-bottom:3px solid var(--brand,var(--line,#ccc));padding-bottom:.5rem}
header.shop a.brand{color:var(--brand-ink,inherit)}
.banner{background:var(--brand,#1b1f24);color:var(--brand-text,#fff);border-radius:12px;padding:1.5rem;margin:1rem 0}
.banner h2,.banner h3{margin:0 0 .5rem;font-size:1.5rem}.banner p{margin:.25rem 0}
.banner a.cta{display:inline-block;margin-top:.75rem;padding:.55rem 1rem;border-radius:8px;background:var(--accent,#2f5bea);color:var(--accent-text,#fff);font-weight:600;text-decoration:none}
.banner img{display:block;width:100%;height:auto;max-height:22rem;object-fit:cover;border-radius:8px;margin:0 0 1rem}
header.shop a.brand img{display:block;height:2.5rem;width:auto;max-width:min(60vw,16rem);object-fit:contain}
.banner a.cta:focus-visible,.announcement a:focus-visible{outline:3px solid currentColor;outline-offset:2px}
`;
