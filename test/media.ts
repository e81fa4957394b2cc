import encodeAvif, { init as initAvifEncode } from "@jsquash/avif/encode";
import encodeJpeg, { init as initJpegEncode } from "@jsquash/jpeg/encode";
import encodePng, { init as initPngEncode } from "@jsquash/png/encode";
import AVIF_ENCODER from "@jsquash/avif/codec/enc/avif_enc.wasm";
import JPEG_ENCODER from "@jsquash/jpeg/codec/enc/mozjpeg_enc.wasm";
import PNG_CODEC from "@jsquash/png/codec/pkg/squoosh_png_bg.wasm";

/** Test images made in code (no binary fixtures): a gradient with a seed's tint, encoded with the codec's own encoders. */

let ready: Promise<unknown> | undefined;
const encoders = () => (ready ??= Promise.all([initJpegEncode(JPEG_ENCODER), initPngEncode(PNG_CODEC)]));

function pixels(width: number, height: number, seed: number) {
  const data = new Uint8ClampedArray(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4;
      data[i] = (x * 255) / width;
      data[i + 1] = (y * 255) / height;
      data[i + 2] = (seed * 37) % 256;
      data[i + 3] = 255;
    }
  }
  return { data, width, height, colorSpace: "srgb" as const } as unknown as Parameters<typeof encodeJpeg>[0];
}

/** A JPEG `width`x`height`; a different `seed` gives different bytes (another content hash). */
export async function makeJpeg(width: number, height: number, seed = 1): Promise<Uint8Array> {
  await encoders();
  return new Uint8Array(await encodeJpeg(pixels(width, height, seed), { quality: 80 }));
}

export async function makePng(width: number, height: number, seed = 1): Promise<Uint8Array> {
  await encoders();
  return new Uint8Array(await encodePng(pixels(width, height, seed)));
}

let avifReady: Promise<unknown> | undefined;

/** An AVIF (the encoder is test-only: the product decodes AVIF, never writes it). */
export async function makeAvif(width: number, height: number, seed = 1): Promise<Uint8Array> {
  await (avifReady ??= initAvifEncode(AVIF_ENCODER as never));
  return new Uint8Array(await encodeAvif(pixels(width, height, seed), { quality: 50, speed: 10 }));
}

/** The first 33 bytes of a PNG that claims `width`x`height` (signature and IHDR, no pixels): a decompression bomb's header. */
export function pngHeaderOnly(width: number, height: number): Uint8Array {
  const b = new Uint8Array(33);
  b.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
  const view = new DataView(b.buffer);
  view.setUint32(16, width);
  view.setUint32(20, height);
  b.set([8, 6, 0, 0, 0], 24);
  return b;
}

/** A Windows executable's first bytes ("MZ", the DOS stub's message), as if renamed to photo.jpg. */
export const EXECUTABLE = new TextEncoder().encode("MZ\x90\x00\x03\x00\x00\x00This program cannot be run in DOS mode.\r\n");

export const base64 = (bytes: Uint8Array) => btoa(Array.from(bytes, (b) => String.fromCharCode(b)).join(""));
