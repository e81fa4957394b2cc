import { MAX_MEDIA_BYTES, MAX_MEDIA_PIXELS, MAX_MEDIA_SIDE, type MediaFormat } from "./limits";

/**
 * An upload's format and dimensions, read from its first bytes only: the magic number decides the format
 * (never the name or the declared type), and the header's width and height are checked against the
 * limits before a decoder allocates anything (the decompression-bomb guard).
 */

export interface MediaHeader {
  format: MediaFormat;
  width: number;
  height: number;
}

/** A refusal a merchant can act on: which rule, and what to do. */
export class MediaRefused extends Error {
  constructor(
    readonly reason: "too_large" | "not_an_image" | "unreadable" | "too_many_pixels" | "unreachable",
    message: string,
  ) {
    super(message);
  }
}

const ascii = (b: Uint8Array, at: number, text: string) => [...text].every((ch, i) => b[at + i] === ch.charCodeAt(0));
const u16be = (b: Uint8Array, at: number) => ((b[at] ?? 0) << 8) | (b[at + 1] ?? 0);
const u32be = (b: Uint8Array, at: number) => (u16be(b, at) * 65536 + u16be(b, at + 2)) >>> 0;
const u24le = (b: Uint8Array, at: number) => (b[at] ?? 0) | ((b[at + 1] ?? 0) << 8) | ((b[at + 2] ?? 0) << 16);

function formatOf(b: Uint8Array): MediaFormat | undefined {
  if (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return "jpeg";
  if (ascii(b, 0, "\x89PNG\r\n\x1a\n")) return "png";
  if (ascii(b, 0, "RIFF") && ascii(b, 8, "WEBP")) return "webp";
  if (ascii(b, 4, "ftyp")) {
    // The ISO-BMFF brands: the major brand and the compatible ones that follow, within the ftyp box.
    const end = Math.min(u32be(b, 0), b.length, 64);
    for (let at = 8; at + 4 <= end; at += 4) if (ascii(b, at, "avif") || ascii(b, at, "avis")) return "avif";
  }
  return undefined;
}

/** JPEG: the first start-of-frame marker (SOF0..SOF15 but DHT, JPG and DAC) holds height then width. */
function jpegSize(b: Uint8Array): [number, number] | undefined {
  let at = 2;
  while (at + 9 < b.length) {
    if (b[at] !== 0xff) return undefined;
    const marker = b[at + 1]!;
    if (marker === 0xff) {
      at += 1;
      continue;
    }
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) return [u16be(b, at + 7), u16be(b, at + 5)];
    if (marker === 0xd9 || marker === 0xda) return undefined;
    at += 2 + u16be(b, at + 2);
  }
  return undefined;
}

function pngSize(b: Uint8Array): [number, number] | undefined {
  return ascii(b, 12, "IHDR") ? [u32be(b, 16), u32be(b, 20)] : undefined;
}

function webpSize(b: Uint8Array): [number, number] | undefined {
  if (ascii(b, 12, "VP8X")) return [u24le(b, 24) + 1, u24le(b, 27) + 1];
  if (ascii(b, 12, "VP8L") && b[20] === 0x2f) {
    const bits = (b[21] ?? 0) | ((b[22] ?? 0) << 8) | ((b[23] ?? 0) << 16) | ((b[24] ?? 0) << 24);
    return [(bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1];
  }
  if (ascii(b, 12, "VP8 ") && b[23] === 0x9d && b[24] === 0x01 && b[25] === 0x2a) {
    return [((b[26] ?? 0) | ((b[27] ?? 0) << 8)) & 0x3fff, ((b[28] ?? 0) | ((b[29] ?? 0) << 8)) & 0x3fff];
  }
  return undefined;
}

/** AVIF: every `ispe` (image spatial extents) property in the header; the largest counts. */
function avifSize(b: Uint8Array): [number, number] | undefined {
  let best: [number, number] | undefined;
  const end = Math.min(b.length, 256 * 1024) - 16;
  for (let at = 4; at <= end; at++) {
    if (b[at] === 0x69 && ascii(b, at, "ispe")) {
      const size: [number, number] = [u32be(b, at + 8), u32be(b, at + 12)];
      if (!best || size[0] * size[1] > best[0] * best[1]) best = size;
    }
  }
  return best;
}

const SIZE_OF: Record<MediaFormat, (b: Uint8Array) => [number, number] | undefined> = { jpeg: jpegSize, png: pngSize, webp: webpSize, avif: avifSize };

const megapixels = (n: number) => `${(n / 1_000_000).toFixed(1)} MP`;

/** The upload's format and size, or the refusal that says why it cannot be used. */
export function readMediaHeader(bytes: Uint8Array): MediaHeader {
  if (bytes.length > MAX_MEDIA_BYTES) {
    throw new MediaRefused("too_large", `The file is ${(bytes.length / 1048576).toFixed(1)} MB; upload an image of at most ${MAX_MEDIA_BYTES / 1048576} MB.`);
  }
  const format = formatOf(bytes);
  if (!format) throw new MediaRefused("not_an_image", "The file is not a JPEG, PNG, WebP or AVIF image (checked by its content, not its name). Export the image in one of these formats.");
  const size = SIZE_OF[format](bytes);
  if (!size || size[0] < 1 || size[1] < 1) throw new MediaRefused("unreadable", `The ${format.toUpperCase()} file's header gives no width and height; the file may be damaged. Export it again.`);
  const [width, height] = size;
  if (width > MAX_MEDIA_SIDE || height > MAX_MEDIA_SIDE || width * height > MAX_MEDIA_PIXELS) {
    throw new MediaRefused(
      "too_many_pixels",
      `The image is ${width}×${height} pixels (${megapixels(width * height)}); the limit is ${megapixels(MAX_MEDIA_PIXELS)} and ${MAX_MEDIA_SIDE} pixels a side. Scale it down (for example to 4000×3000) and upload it again.`,
    );
  }
  return { format, width, height };
}
