import { crc32, deflateSync } from "node:zlib";

/**
 * A small PNG made in Node for the walkthroughs' uploads (test/media.ts makes images with the codec's
 * encoders, which load as WebAssembly modules inside workerd only): 8-bit RGB, a gradient tinted by `seed`,
 * so another seed is another image (another content hash).
 */
export function makePng(width: number, height: number, seed = 1): Buffer {
  const rows = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    const row = y * (width * 3 + 1); // each row starts with its filter type, 0 (none)
    for (let x = 0; x < width; x++) {
      rows[row + 1 + x * 3] = Math.floor((x * 255) / width);
      rows[row + 2 + x * 3] = Math.floor((y * 255) / height);
      rows[row + 3 + x * 3] = (seed * 37) % 256;
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits, RGB, deflate, no filter method beyond the rows', no interlace
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", header), chunk("IDAT", deflateSync(rows)), chunk("IEND", Buffer.alloc(0))]);
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typed = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed));
  return Buffer.concat([length, typed, crc]);
}
