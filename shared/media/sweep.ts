import { isUuid } from "../db/ids";
import { ICON_SIZES } from "./limits";
import type { MediaBucket } from "./store";

/**
 * The bucket as the media sweep reads it (docs/media.md "Files no row names"): listed by store prefix and
 * page by page, each file's key and upload time; and one small object of its own, where a run that stopped
 * on its budget says where the next one goes on (an R2Bucket is one).
 */
export interface SweepBucket extends MediaBucket {
  list(options: { prefix?: string; delimiter?: string; startAfter?: string; cursor?: string; limit?: number }): Promise<{
    objects: { key: string; uploaded: Date }[];
    delimitedPrefixes: string[];
    truncated: boolean;
    cursor?: string;
  }>;
  get(key: string): Promise<{ text(): Promise<string> } | null>;
}

/** A file of an image under a store's prefix: `<sha256>/<width>.webp|jpg`, `…/original` or `…/icon-<size>.png`. */
export interface MediaFile {
  key: string;
  hash: string;
  uploaded: Date;
}

const FILE = /^([0-9a-f]{64})\/(?:\d{1,4}\.(?:webp|jpg)|original|icon-\d{1,4}\.png)$/;

/** The file `key` names under `prefix` (a store's `<storeId>/`), or null for a key media never writes. */
export function mediaFileOf(prefix: string, object: { key: string; uploaded: Date }): MediaFile | null {
  const hash = object.key.startsWith(prefix) ? FILE.exec(object.key.slice(prefix.length))?.[1] : undefined;
  return hash ? { key: object.key, hash, uploaded: object.uploaded } : null;
}

/** The store a top-level prefix (`<storeId>/`) is the files of, or null for a prefix media never writes. */
export function storeIdOfPrefix(prefix: string): string | null {
  const id = prefix.endsWith("/") ? prefix.slice(0, -1) : "";
  return isUuid(id) && id === id.toLowerCase() ? id : null;
}

/** A key after every key under `prefix` and before the next prefix of the same length (`<id>/` → `<id>0`). */
export function pastPrefix(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}

/**
 * The files a writer checks to know an image's set is complete (storeUpload writes `original` last, storeIcon
 * the largest icon last): deleted after the others, so a writer that finds one finds the whole set.
 */
const MARKERS = new Set(["original", `icon-${ICON_SIZES[ICON_SIZES.length - 1]}.png`]);
const isMarker = (key: string) => MARKERS.has(key.slice(key.lastIndexOf("/") + 1));

/** Deletes image files: the markers after the others, at most 1,000 keys a call (R2's limit). */
export async function deleteMediaFiles(bucket: Pick<MediaBucket, "delete">, keys: readonly string[]): Promise<void> {
  for (const part of [keys.filter((k) => !isMarker(k)), keys.filter(isMarker)]) {
    for (let at = 0; at < part.length; at += 1000) await bucket.delete(part.slice(at, at + 1000));
  }
}
