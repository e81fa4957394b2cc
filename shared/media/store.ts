import { appUrlProblem } from "../apps/url";
import { readAtMost } from "../core/bounded";
import { MediaRefused, readMediaHeader, type MediaHeader } from "./header";
import { ICON_SIZES, iconKey, MAX_MEDIA_BYTES, mediaKey, SERVED_TYPES, widthsFor, type ServedExtension } from "./limits";

/**
 * Where product images' files live (R2, the MEDIA binding): written once per store and content hash, so an
 * upload is safe to repeat and the same photo on two products is one set of files.
 */

/** The part of an R2 bucket media uses (an R2Bucket is one). */
export interface MediaBucket {
  head(key: string): Promise<unknown>;
  put(key: string, value: Uint8Array, options: { httpMetadata: { contentType: string; cacheControl?: string } }): Promise<unknown>;
  delete(keys: string[]): Promise<void>;
}

/** The door's media service (procedures/define.ts `Services`): the bucket, and whether URLs on this machine may be fetched. */
export interface MediaService {
  bucket: MediaBucket;
  /** APP_ENV development or test: an image URL may be on loopback (the app-webhook URL policy). */
  allowLocalUrls: boolean;
}

/** An upload as stored: what its row records. */
export interface StoredMedia extends MediaHeader {
  hash: string;
  originalType: `image/${MediaHeader["format"]}`;
  originalBytes: number;
  widths: number[];
}

const IMMUTABLE = "public, max-age=31536000, immutable";

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes.slice()));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Bytes as base64 (`image.base64` of the media procedures), in chunks: a large file never overflows the call stack. */
export function base64Of(bytes: Uint8Array): string {
  let text = "";
  for (let at = 0; at < bytes.length; at += 0x8000) text += String.fromCharCode(...bytes.subarray(at, at + 0x8000));
  return btoa(text);
}

/** Every key of one image's files: each width in WebP and JPEG, and the original. */
export function mediaKeys(storeId: string, hash: string, widths: readonly number[]): string[] {
  const served = widths.flatMap((w) => (Object.keys(SERVED_TYPES) as ServedExtension[]).map((ext) => mediaKey(storeId, hash, `${w}.${ext}`)));
  return [...served, mediaKey(storeId, hash, "original")];
}

/**
 * Checks an upload by its header (format, bytes, pixels: before decoding), resizes it to the widths and
 * writes its files under the store's prefix. The original is written last: when it is there, every width
 * is, so a repeated upload of the same bytes skips the work.
 */
export async function storeUpload(bucket: MediaBucket, storeId: string, bytes: Uint8Array): Promise<StoredMedia> {
  const header = readMediaHeader(bytes);
  const hash = await sha256Hex(bytes);
  const stored: StoredMedia = { ...header, hash, originalType: `image/${header.format}`, originalBytes: bytes.length, widths: [] };
  // The codec (WebAssembly) is loaded by the first upload only: the registry's readers (the docs script in
  // Node, the storefront) never load it.
  const files = (await bucket.head(mediaKey(storeId, hash, "original"))) ? undefined : await (await import("./codec")).resizeUpload(bytes, header);
  if (files) {
    await Promise.all(files.map((f) => bucket.put(mediaKey(storeId, hash, `${f.width}.${f.ext}`), f.bytes, { httpMetadata: { contentType: SERVED_TYPES[f.ext], cacheControl: IMMUTABLE } })));
    await bucket.put(mediaKey(storeId, hash, "original"), bytes, { httpMetadata: { contentType: stored.originalType } });
  }
  return { ...stored, widths: widthsFor(header.width) };
}

/**
 * A favicon upload: checked as any upload, cropped to its middle square and written as PNGs (ICON_SIZES)
 * beside the image's other files. The largest is written last: when it is there, both are.
 */
export async function storeIcon(bucket: MediaBucket, storeId: string, bytes: Uint8Array): Promise<{ hash: string }> {
  const header = readMediaHeader(bytes);
  const hash = await sha256Hex(bytes);
  const largest = ICON_SIZES[ICON_SIZES.length - 1]!;
  if (!(await bucket.head(iconKey(storeId, hash, largest)))) {
    const files = await (await import("./codec")).iconFiles(bytes, header);
    const put = (f: (typeof files)[number]) => bucket.put(iconKey(storeId, hash, f.size), f.bytes, { httpMetadata: { contentType: "image/png", cacheControl: IMMUTABLE } });
    await Promise.all(files.filter((f) => f.size !== largest).map(put));
    await put(files.find((f) => f.size === largest)!);
  }
  return { hash };
}

/**
 * An image fetched from a URL as an app webhook is sent (shared/apps/url.ts): https to a public host, no
 * redirect followed, at most MAX_MEDIA_BYTES read, 15 s at most.
 */
export async function fetchImage(url: string, allowLocalUrls: boolean): Promise<Uint8Array> {
  const problem = appUrlProblem(url, allowLocalUrls);
  if (problem) throw new MediaRefused("unreachable", `The image URL is refused by the rule app webhooks follow: ${problem}`);
  let res: Response;
  try {
    res = await fetch(url, { redirect: "manual", signal: AbortSignal.timeout(15_000), headers: { accept: "image/avif,image/webp,image/png,image/jpeg" } });
  } catch {
    throw new MediaRefused("unreachable", "The image URL could not be fetched (no connection, or no answer within 15 s). Check it opens in a browser, or upload the file instead.");
  }
  if (res.status !== 200) {
    await res.body?.cancel();
    const why = res.status >= 300 && res.status < 400 ? "redirects elsewhere (redirects are not followed): give the final URL" : `answered ${res.status}`;
    throw new MediaRefused("unreachable", `The image URL ${why}.`);
  }
  const bytes = res.body ? await readAtMost(res.body, MAX_MEDIA_BYTES) : new Uint8Array(0);
  if (!bytes) throw new MediaRefused("too_large", `The image at the URL is larger than ${MAX_MEDIA_BYTES / 1048576} MB; use a smaller one.`);
  return bytes;
}

/** The door's `media` service from its bindings (none without a MEDIA bucket: the procedures then answer 503). */
export function mediaServiceOf(env: { MEDIA?: MediaBucket; APP_ENV?: string }): { media?: () => MediaService } {
  const bucket = env.MEDIA;
  if (!bucket) return {};
  const allowLocalUrls = env.APP_ENV === "development" || env.APP_ENV === "test";
  return { media: () => ({ bucket, allowLocalUrls }) };
}
