/**
 * What an upload may be (docs/media.md, decision 0034): the formats, the byte and pixel limits checked
 * from the header before anything is decoded, and the widths every image is resized to once.
 */

export const MEDIA_FORMATS = ["jpeg", "png", "webp", "avif"] as const;
export type MediaFormat = (typeof MEDIA_FORMATS)[number];

/** The largest upload, in bytes. */
export const MAX_MEDIA_BYTES = 10 * 1024 * 1024;
/**
 * The most pixels an upload may decode to: 12 MP (a phone's 4000x3000). The decoded image, its copy in
 * the resizer and the widths must fit a Worker's 128 MB of memory; CPU is not the limit (decision 0034).
 */
export const MAX_MEDIA_PIXELS = 12_000_000;
/** The longest side, in pixels. */
export const MAX_MEDIA_SIDE = 10_000;

/** The widths an image is served at (never upscaled: an image narrower than one is kept at its own width). */
export const MEDIA_WIDTHS = [160, 320, 640, 960, 1280, 1920] as const;

export const MAX_MEDIA_WIDTH = 1920;

/** The widths made for an image `width` pixels wide: each listed width below it, then its own width capped at the largest. */
export function widthsFor(width: number): number[] {
  const top = Math.min(width, MAX_MEDIA_WIDTH);
  return [...MEDIA_WIDTHS.filter((w) => w < top), top];
}

/** The height at `width` for an image of `source` dimensions (rounded, at least 1). */
export const heightAt = (source: { width: number; height: number }, width: number) =>
  Math.max(1, Math.round((source.height * width) / source.width));

/** What the storefront serves at a width: WebP, and JPEG for browsers without WebP. */
export const SERVED_TYPES = { webp: "image/webp", jpg: "image/jpeg" } as const;
export type ServedExtension = keyof typeof SERVED_TYPES;

/** The R2 key of one served file, or the original (kept to resize again if the widths change): per store and content hash. */
export const mediaKey = (storeId: string, hash: string, file: `${number}.${ServedExtension}` | "original") => `${storeId}/${hash}/${file}`;

/** Where the storefront serves one file of an image: under the store's own hostnames (workers/storefront/media.tsx). */
export const mediaPath = (hash: string, width: number, ext: ServedExtension) => `/media/${hash}/${width}.${ext}`;

/**
 * A store's favicon (Settings → Storefront): square PNGs at these sizes, cropped to the middle square: 32 px for
 * the browser's tab (`rel="icon"`), 180 px for a phone's home screen (`rel="apple-touch-icon"`, which wants PNG).
 */
export const ICON_SIZES = [32, 180] as const;
export type IconSize = (typeof ICON_SIZES)[number];

/** The R2 key of one of a favicon's PNGs: beside the image's other files, under the store's prefix. */
export const iconKey = (storeId: string, hash: string, size: IconSize) => `${storeId}/${hash}/icon-${size}.png`;

/** Where the storefront serves a favicon's PNG (workers/storefront/media.tsx). */
export const iconPath = (hash: string, size: IconSize) => `/media/${hash}/icon-${size}.png`;
