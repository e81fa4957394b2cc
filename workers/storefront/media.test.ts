import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { storeUpload } from "#shared/media/store";
import { readMediaHeader } from "#shared/media/header";
import { call } from "../../test/call";
import { makeStore, testDb } from "../../test/harness";
import { makePng } from "../../test/media";
import worker from "./index";
import { imageSources } from "./media";

const db = testDb();
const { MEDIA } = env as Cloudflare.StorefrontEnv;
const get = (host: string, path: string, headers: Record<string, string> = {}) => call(worker, `http://storefront.test${path}`, { headers: { host, ...headers } });

describe("product images on the storefront", () => {
  it("serves each width in WebP and JPEG with its type and immutable caching; another store's image is not there", async () => {
    const a = await makeStore(db);
    const b = await makeStore(db);
    const stored = await storeUpload(MEDIA, a.id, await makePng(400, 300, 7));
    expect(stored.widths).toEqual([160, 320, 400]);

    for (const [file, type, format, width] of [["160.webp", "image/webp", "webp", 160], ["400.jpg", "image/jpeg", "jpeg", 400]] as const) {
      const res = await get(a.hostname, `/media/${stored.hash}/${file}`);
      expect(res.status, file).toBe(200);
      expect(res.headers.get("content-type")).toBe(type);
      expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(readMediaHeader(new Uint8Array(await res.arrayBuffer()))).toEqual({ format, width, height: (300 * width) / 400 });
    }
    // The same key asked on store B's hostname: B's prefix has no such file.
    const other = await get(b.hostname, `/media/${stored.hash}/160.webp`);
    expect(other.status).toBe(404);
    await other.arrayBuffer();
    // Store A again, from the edge cache this time: the same answer.
    const again = await get(a.hostname, `/media/${stored.hash}/160.webp`);
    expect([again.status, again.headers.get("content-type"), again.headers.get("cache-control")]).toEqual([200, "image/webp", "public, max-age=31536000, immutable"]);
    expect(readMediaHeader(new Uint8Array(await again.arrayBuffer())).width).toBe(160);
    // Widths that were not made, the original and malformed names are not served.
    for (const path of [`/media/${stored.hash}/960.webp`, `/media/${stored.hash}/original`, `/media/${stored.hash}/160.png`, "/media/abc/160.webp"]) {
      const res = await get(a.hostname, path);
      expect(res.status, path).toBe(404);
      await res.arrayBuffer();
    }
  });

  it("gives pages srcset and explicit dimensions from the image's row", () => {
    const image = { id: "m", hash: "a".repeat(64), alt: "Silk saree", width: 1200, height: 1600, widths: [160, 320, 640, 960, 1200] };
    expect(imageSources(image)).toEqual({
      src: `/media/${image.hash}/640.webp`,
      srcset: [160, 320, 640, 960, 1200].map((w) => `/media/${image.hash}/${w}.webp ${w}w`).join(", "),
      width: 1200,
      height: 1600,
    });
    expect(imageSources(image, "jpg").src).toBe(`/media/${image.hash}/640.jpg`);
  });
});
