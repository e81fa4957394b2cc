import decodeAvif, { init as initAvifDecode } from "@jsquash/avif/decode";
import decodeJpeg, { init as initJpegDecode } from "@jsquash/jpeg/decode";
import encodeJpeg, { init as initJpegEncode } from "@jsquash/jpeg/encode";
import decodePng, { init as initPngDecode } from "@jsquash/png/decode";
import encodePng, { init as initPngEncode } from "@jsquash/png/encode";
import decodeWebp, { init as initWebpDecode } from "@jsquash/webp/decode";
import encodeWebp, { init as initWebpEncode } from "@jsquash/webp/encode";
import resize, { initResize } from "@jsquash/resize";
import AVIF_DECODER from "@jsquash/avif/codec/dec/avif_dec.wasm";
import JPEG_DECODER from "@jsquash/jpeg/codec/dec/mozjpeg_dec.wasm";
import JPEG_ENCODER from "@jsquash/jpeg/codec/enc/mozjpeg_enc.wasm";
import PNG_CODEC from "@jsquash/png/codec/pkg/squoosh_png_bg.wasm";
import WEBP_DECODER from "@jsquash/webp/codec/dec/webp_dec.wasm";
import WEBP_ENCODER from "@jsquash/webp/codec/enc/webp_enc_simd.wasm";
import RESIZER from "@jsquash/resize/lib/resize/pkg/squoosh_resize_bg.wasm";
import { MediaRefused, type MediaHeader } from "./header";
import { heightAt, ICON_SIZES, widthsFor, type IconSize, type ServedExtension } from "./limits";

/**
 * The WebAssembly codec (decision 0034: jSquash, i.e. Squoosh's MozJPEG, libwebp, libavif and the
 * Lanczos resizer, measured against @cf-wasm/photon). The modules are bundled as compiled WebAssembly and
 * instantiated on the first upload of an isolate, never at import: the storefront and the pages pay nothing.
 */

/** The decoders build their answers with `new ImageData`, which workerd does not have. */
class Pixels {
  readonly colorSpace = "srgb";
  constructor(
    readonly data: Uint8ClampedArray,
    readonly width: number,
    readonly height: number,
  ) {}
}
const g = globalThis as { ImageData?: unknown };
g.ImageData ??= Pixels;

let ready: Promise<unknown> | undefined;
const loaded = () =>
  (ready ??= Promise.all([
    initJpegDecode(JPEG_DECODER),
    initPngDecode(PNG_CODEC),
    initPngEncode(PNG_CODEC),
    initWebpDecode(WEBP_DECODER),
    initAvifDecode(AVIF_DECODER),
    initResize(RESIZER),
    initWebpEncode(WEBP_ENCODER),
    initJpegEncode(JPEG_ENCODER),
  ]).catch((e: unknown) => {
    ready = undefined;
    throw e;
  }));

/** WebP quality 80 (method 4, libwebp's default) and baseline JPEG quality 80: the figures are in decision 0034. */
const WEBP_OPTIONS = { quality: 80 };
const JPEG_OPTIONS = { quality: 80, progressive: false };

export interface MediaFile {
  width: number;
  height: number;
  ext: ServedExtension;
  bytes: Uint8Array;
}

type Image = NonNullable<Awaited<ReturnType<typeof decodeJpeg>>>;

async function decode(bytes: Uint8Array, header: MediaHeader): Promise<Image> {
  const buffer = bytes.slice().buffer;
  let image: Image | null;
  try {
    if (header.format === "jpeg") image = await decodeJpeg(buffer);
    else if (header.format === "png") image = await decodePng(buffer);
    else if (header.format === "webp") image = await decodeWebp(buffer);
    else image = await decodeAvif(buffer);
  } catch {
    image = null;
  }
  if (!image || image.width !== header.width || image.height !== header.height) {
    throw new MediaRefused("unreadable", `The ${header.format.toUpperCase()} file could not be decoded; it may be damaged. Export it again.`);
  }
  return image;
}

/**
 * The served files of an upload whose header was read (readMediaHeader): each width of `widthsFor`, from
 * the widest down, each resized from the one above it (a cascade: a third of the CPU of resizing every
 * width from the original), in WebP and JPEG.
 */
export async function resizeUpload(bytes: Uint8Array, header: MediaHeader): Promise<MediaFile[]> {
  await loaded();
  let source = await decode(bytes, header);
  const files: MediaFile[] = [];
  for (const width of widthsFor(header.width).reverse()) {
    const height = heightAt(header, width);
    const sized = width === source.width ? source : await resize(source, { width, height, method: "lanczos3", fitMethod: "stretch", premultiply: true, linearRGB: false });
    files.push({ width, height, ext: "webp", bytes: new Uint8Array(await encodeWebp(sized, WEBP_OPTIONS)) });
    files.push({ width, height, ext: "jpg", bytes: new Uint8Array(await encodeJpeg(sized, JPEG_OPTIONS)) });
    source = sized;
  }
  return files.reverse();
}

/**
 * A favicon's PNGs (ICON_SIZES, largest first): the middle square of the upload (`contain` crops to the
 * target's shape), each size resized from the one above it.
 */
export async function iconFiles(bytes: Uint8Array, header: MediaHeader): Promise<{ size: IconSize; bytes: Uint8Array }[]> {
  await loaded();
  let source = await decode(bytes, header);
  const files: { size: IconSize; bytes: Uint8Array }[] = [];
  for (const size of [...ICON_SIZES].reverse()) {
    source = await resize(source, { width: size, height: size, method: "lanczos3", fitMethod: "contain", premultiply: true, linearRGB: false });
    files.push({ size, bytes: new Uint8Array(await encodePng(source)) });
  }
  return files;
}

/** Pixels (RGBA, e.g. drawn by ./demo-images.ts) as a PNG file: what an upload of them would be. */
export async function encodePixelsPng(pixels: { data: Uint8ClampedArray; width: number; height: number }): Promise<Uint8Array> {
  await loaded();
  return new Uint8Array(await encodePng(new Pixels(pixels.data, pixels.width, pixels.height) as unknown as Image));
}
