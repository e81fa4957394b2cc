/**
 * The media codec bench (bench/results/media-codec.json, decision 0034): what one upload costs inside
 * workerd. It bundles a small Worker around shared/media/codec.ts the way wrangler deploys it (compiled
 * WebAssembly modules), runs it in Miniflare, and times each step as its own request, from Node and from
 * inside (workerd's clock advances locally; in production it stands still during CPU work). The test image
 * is made in the Worker: a 2000x2000 photo-like picture (gradients and noise), as JPEG and WebP (PNG at 1500x1500: the noise makes a 2000x2000 PNG pass the 10 MB limit), and a
 * 4000x3000 JPEG (the 12 MP limit).
 *
 *   npx tsx bench/media-codec.ts        (not part of `npm run bench`: it measures a library, not a path)
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import path from "node:path";
import { Miniflare } from "miniflare";

const ROOT = path.resolve(import.meta.dirname, "..");
const WORK = path.join(ROOT, ".data", "bench-media");
const ROUNDS = Number(process.env.BENCH_MEDIA_ROUNDS ?? 3);

const ENTRY = `
import encodeJpeg, { init as initJpegEncode } from "@jsquash/jpeg/encode";
import encodePng, { init as initPngEncode } from "@jsquash/png/encode";
import encodeWebp, { init as initWebpEncode } from "@jsquash/webp/encode";
import JPEG_ENCODER from "@jsquash/jpeg/codec/enc/mozjpeg_enc.wasm";
import PNG_CODEC from "@jsquash/png/codec/pkg/squoosh_png_bg.wasm";
import WEBP_ENCODER from "@jsquash/webp/codec/enc/webp_enc_simd.wasm";
import { readMediaHeader } from "${ROOT}/shared/media/header.ts";
import { resizeUpload } from "${ROOT}/shared/media/codec.ts";

function picture(width, height) {
  const data = new Uint8ClampedArray(width * height * 4);
  let seed = 7;
  const noise = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff - 0.5) * 24;
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) {
    const i = (y * width + x) * 4, r = Math.hypot(x - width / 2, y - height / 2), n = noise();
    data[i] = 128 + 100 * Math.sin(x / 97) + n;
    data[i + 1] = 128 + 90 * Math.cos(y / 73 + r / 200) + n;
    data[i + 2] = r < width / 4 ? 200 + n : 60 + ((x * y) % 50) + n;
    data[i + 3] = 255;
  }
  return { data, width, height, colorSpace: "srgb" };
}

const files = {};
export default {
  async fetch(request) {
    const step = new URL(request.url).pathname.slice(1);
    const started = performance.now();
    let answer = {};
    if (step === "setup") {
      await Promise.all([initJpegEncode(JPEG_ENCODER), initPngEncode(PNG_CODEC), initWebpEncode(WEBP_ENCODER)]);
      const photo = picture(2000, 2000);
      files["jpeg-2000"] = new Uint8Array(await encodeJpeg(photo, { quality: 85 }));
      files["png-1500"] = new Uint8Array(await encodePng(picture(1500, 1500)));
      files["webp-2000"] = new Uint8Array(await encodeWebp(photo, { quality: 85 }));
      files["jpeg-4000x3000"] = new Uint8Array(await encodeJpeg(picture(4000, 3000), { quality: 85 }));
      answer = Object.fromEntries(Object.entries(files).map(([k, v]) => [k, v.length]));
    } else {
      const bytes = files[step];
      const header = readMediaHeader(bytes);
      const made = await resizeUpload(bytes, header);
      answer = { files: made.length, webpBytes: made.filter((f) => f.ext === "webp").reduce((n, f) => n + f.bytes.length, 0), jpegBytes: made.filter((f) => f.ext === "jpg").reduce((n, f) => n + f.bytes.length, 0) };
    }
    return Response.json({ ...answer, insideMs: Math.round(performance.now() - started) });
  },
};
`;

function bundle(): { modules: { type: "ESModule" | "CompiledWasm"; path: string }[]; bytes: number; gzip: number } {
  rmSync(WORK, { recursive: true, force: true });
  mkdirSync(WORK, { recursive: true });
  writeFileSync(path.join(WORK, "entry.js"), ENTRY);
  const out = path.join(WORK, "out");
  execFileSync(path.join(ROOT, "node_modules/.bin/wrangler"), ["deploy", path.join(WORK, "entry.js"), "--dry-run", "--outdir", out, "--name", "bench-media", "--compatibility-date", "2026-04-01"], { cwd: ROOT, stdio: "pipe" });
  // The entry first: Miniflare's main module.
  const names = ["entry.js", ...readdirSync(out).filter((f) => f.endsWith(".wasm"))];
  const bytes = names.reduce((n, f) => n + statSync(path.join(out, f)).size, 0);
  const gzip = names.reduce((n, f) => n + gzipSync(readFileSync(path.join(out, f))).length, 0);
  return { modules: names.map((f) => ({ type: f.endsWith(".wasm") ? "CompiledWasm" : "ESModule", path: path.join(out, f) })), bytes, gzip };
}

const { modules, bytes, gzip } = bundle();
const mf = new Miniflare({ modules, modulesRoot: path.join(WORK, "out"), compatibilityDate: "2026-04-01", compatibilityFlags: ["nodejs_compat"] });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
try {
  const sizes = await (await mf.dispatchFetch("http://bench/setup")).json();
  const results: Record<string, unknown> = {};
  for (const input of ["jpeg-2000", "png-1500", "webp-2000", "jpeg-4000x3000"]) {
    const wall: number[] = [];
    const inside: number[] = [];
    let answer: Record<string, number> = {};
    for (let round = 0; round < ROUNDS; round++) {
      const t = performance.now();
      answer = (await (await mf.dispatchFetch(`http://bench/${input}`)).json()) as Record<string, number>;
      wall.push(performance.now() - t);
      inside.push(answer.insideMs!);
    }
    const { insideMs: _last, ...made } = answer;
    results[input] = { medianWallMs: Math.round(median(wall)), medianInsideMs: median(inside), ...made };
    console.log(input.padEnd(16), results[input]);
  }
  const report = { measuredAt: new Date().toISOString(), rounds: ROUNDS, inputBytes: sizes, bundle: { bytes, gzip }, results };
  writeFileSync(path.join(ROOT, "bench/results/media-codec.json"), JSON.stringify(report, null, 2) + "\n");
  console.log("bundle", { bytes, gzip });
} finally {
  await mf.dispose();
}
