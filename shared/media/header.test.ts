import { describe, expect, it } from "vitest";
import { MediaRefused, readMediaHeader } from "./header";
import { MAX_MEDIA_BYTES, widthsFor } from "./limits";

const bytes = (...parts: (number[] | string)[]) => new Uint8Array(parts.flatMap((p) => (typeof p === "string" ? [...p].map((c) => c.charCodeAt(0)) : p)));
const u32 = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
const u16 = (n: number) => [n >> 8, n & 255];
const refusal = (b: Uint8Array) => {
  try {
    readMediaHeader(b);
  } catch (e) {
    if (e instanceof MediaRefused) return e.reason;
    throw e;
  }
  return "accepted";
};

/** An ISO-BMFF box: size, type, body. */
const box = (type: string, ...body: number[][]) => {
  const inner = body.flat();
  return [...u32(8 + inner.length), ...[...type].map((c) => c.charCodeAt(0)), ...inner];
};

describe("an upload's header, read before decoding", () => {
  it("reads each format's size from its own header, whatever the file is called", () => {
    // JPEG: an APP0 segment, then SOF2 (progressive) with height 600 and width 800.
    const jpeg = bytes([0xff, 0xd8], [0xff, 0xe0, ...u16(16)], new Array(14).fill(0), [0xff, 0xc2, ...u16(17), 8, ...u16(600), ...u16(800), 3], new Array(9).fill(0));
    expect(readMediaHeader(jpeg)).toEqual({ format: "jpeg", width: 800, height: 600 });
    // WebP extended (VP8X): 24-bit width-1 and height-1.
    const vp8x = bytes("RIFF", [0, 0, 0, 0], "WEBPVP8X", [10, 0, 0, 0, 0, 0, 0, 0], [0x1f, 0x03, 0x00], [0xdf, 0x01, 0x00]);
    expect(readMediaHeader(vp8x)).toEqual({ format: "webp", width: 800, height: 480 });
    // WebP lossless (VP8L): 14-bit fields after the signature byte.
    const bits = (640 - 1) | ((480 - 1) << 14);
    const vp8l = bytes("RIFF", [0, 0, 0, 0], "WEBPVP8L", [0, 0, 0, 0], [0x2f, bits & 255, (bits >>> 8) & 255, (bits >>> 16) & 255, (bits >>> 24) & 255]);
    expect(readMediaHeader(vp8l)).toEqual({ format: "webp", width: 640, height: 480 });
    // AVIF: brand in the compatible list, size from the ispe property.
    const avif = bytes(box("ftyp", [..."mif1"].map((c) => c.charCodeAt(0)), [0, 0, 0, 0], [..."avifmiaf"].map((c) => c.charCodeAt(0))), box("meta", [0, 0, 0, 0], box("ispe", [0, 0, 0, 0], u32(1200), u32(900))));
    expect(readMediaHeader(avif)).toEqual({ format: "avif", width: 1200, height: 900 });
  });

  it("refuses what is not one of the four formats, a header without a size, and too many pixels", () => {
    expect(refusal(bytes("GIF89a", [1, 0, 1, 0]))).toBe("not_an_image");
    expect(refusal(bytes('<svg xmlns="http://www.w3.org/2000/svg"/>'))).toBe("not_an_image");
    expect(refusal(bytes("\x7fELF", new Array(40).fill(0)))).toBe("not_an_image");
    // HEIC is ISO-BMFF too, but not AVIF.
    expect(refusal(bytes(box("ftyp", [..."heic"].map((c) => c.charCodeAt(0)), [0, 0, 0, 0])))).toBe("not_an_image");
    expect(refusal(bytes([0xff, 0xd8, 0xff, 0xd9]))).toBe("unreadable");
    const png = (w: number, h: number) => bytes([0x89], "PNG\r\n\x1a\n", u32(13), "IHDR", u32(w), u32(h), [8, 6, 0, 0, 0]);
    expect(readMediaHeader(png(4000, 3000))).toEqual({ format: "png", width: 4000, height: 3000 });
    expect(refusal(png(4001, 3000))).toBe("too_many_pixels");
    expect(refusal(png(10_001, 10))).toBe("too_many_pixels");
    expect(refusal(png(0, 10))).toBe("unreadable");
    expect(refusal(new Uint8Array(MAX_MEDIA_BYTES + 1))).toBe("too_large");
  });

  it("makes each width below the image's own, never wider, and its own capped at 1920", () => {
    expect(widthsFor(100)).toEqual([100]);
    expect(widthsFor(160)).toEqual([160]);
    expect(widthsFor(700)).toEqual([160, 320, 640, 700]);
    expect(widthsFor(1920)).toEqual([160, 320, 640, 960, 1280, 1920]);
    expect(widthsFor(4000)).toEqual([160, 320, 640, 960, 1280, 1920]);
  });
});
