import { errorFields } from "../core/log";
import { plan } from "../db/plan";
import { sendStoreUnit } from "../db/unit";
import { deleteMediaFiles, mediaFileOf, pastPrefix, storeIdOfPrefix, type MediaFile, type SweepBucket } from "../media/sweep";
import { namedMediaHashes } from "./statements";
import type { JobContext } from "./types";

/**
 * {media}-sweep (daily; docs/media.md "Files no row names"): deletes the image files in R2 that no row of
 * their store names: left when a delete after a commit failed, when an upload's files were written and its
 * row was refused, or when a Worker died between the two. The bucket is walked by store prefix (`<storeId>/`),
 * each store's files page by page; the files are grouped by content hash and the store's own unit asks, in
 * one statement under its row-level security, which hashes a row still names. A hash nobody names whose
 * files were all uploaded more than SWEEP_GRACE_MS ago loses its files: an upload in flight (its files
 * written, its row not yet committed) lasts seconds, so it never loses them. A run is bounded (SWEEP_BUDGET)
 * and the next goes on from the key it stopped at, kept in the bucket (SWEEP_POSITION_KEY).
 */

/** How old every file of a hash must be before it may go: an upload in flight must never lose its files. */
export const SWEEP_GRACE_MS = 24 * 60 * 60 * 1000;

/** What one run does at most; a run that reaches either stops and the next one goes on from there. */
export interface SweepBudget {
  /** Files listed (R2 list calls are about a thousand files each). */
  objects: number;
  /** Top-level prefixes visited (stores, and prefixes that are no store's). */
  stores: number;
}

export const SWEEP_BUDGET: SweepBudget = { objects: 200_000, stores: 2_000 };

/** Where a run that stopped on its budget leaves the key the next run starts after (not a store's prefix: never swept). */
export const SWEEP_POSITION_KEY = "_sweep/position.json";

// Files a list call asks for: at least a whole image's (15 files at most) so each page settles a hash.
const PAGE_MAX = 1000;
const PAGE_MIN = 100;
// A large store's hashes go to the database in parts of this many files (one statement each).
const SETTLE_EVERY = 10_000;

export interface SweepCounts {
  /** Stores visited (their prefix listed). */
  stores: number;
  /** Files listed. */
  files: number;
  /** Hashes judged, and of those the ones whose files were deleted. */
  hashes: number;
  deletedHashes: number;
  deletedFiles: number;
  /** Hashes no row names whose newest file is younger than the grace: kept for a later run. */
  youngHashes: number;
  /** Stores whose row is gone (their files are orphans too), and whose files were kept because the run saw no live store. */
  goneStores: number;
  keptGoneFiles: number;
  /** Prefixes and keys media never writes (not a store id; not `<sha256>/<file>`): left alone. */
  otherPrefixes: number;
  otherKeys: number;
  failedStores: number;
}

const zero = (): SweepCounts => ({
  stores: 0,
  files: 0,
  hashes: 0,
  deletedHashes: 0,
  deletedFiles: 0,
  youngHashes: 0,
  goneStores: 0,
  keptGoneFiles: 0,
  otherPrefixes: 0,
  otherKeys: 0,
  failedStores: 0,
});

type SweepContext = Pick<JobContext, "db" | "log" | "now">;

/** The job: from where the last run stopped, over the bucket's prefixes, within SWEEP_BUDGET; keeps where it stopped. */
export async function sweepMedia(ctx: SweepContext & Pick<JobContext, "env">, options: { budget?: SweepBudget; positionKey?: string } = {}): Promise<Record<string, unknown>> {
  const bucket = ctx.env["MEDIA"] as SweepBucket | undefined;
  if (!bucket) throw new Error("The worker has no MEDIA binding: add [[env.worker.r2_buckets]] binding = \"MEDIA\" (the admin's bucket) to wrangler.toml.");
  const positionKey = options.positionKey ?? SWEEP_POSITION_KEY;
  const from = await readPosition(bucket, positionKey);
  const outcome = await sweepPrefixes(ctx, bucket, storePrefixes(bucket, from), { after: from, budget: options.budget });
  if (outcome.after !== from) {
    if (outcome.after === undefined) await bucket.delete([positionKey]);
    else await bucket.put(positionKey, new TextEncoder().encode(JSON.stringify({ after: outcome.after })), { httpMetadata: { contentType: "application/json" } });
  }
  return { ...outcome.counts, from: from ?? null, next: outcome.after ?? null };
}

async function readPosition(bucket: SweepBucket, key: string): Promise<string | undefined> {
  const object = await bucket.get(key);
  if (!object) return undefined;
  try {
    const after = (JSON.parse(await object.text()) as { after?: unknown }).after;
    return typeof after === "string" ? after : undefined;
  } catch {
    return undefined;
  }
}

/** The bucket's top-level prefixes (`<storeId>/` and any other), in key order, from the one holding the key after `after`. */
async function* storePrefixes(bucket: SweepBucket, after: string | undefined): AsyncGenerator<string> {
  let cursor: string | undefined;
  do {
    const page = await bucket.list({ delimiter: "/", limit: PAGE_MAX, ...(cursor ? { cursor } : after ? { startAfter: after } : {}) });
    yield* page.delimitedPrefixes;
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
}

/** One run's state: its clock's cutoff, its budget and counts, and the files of gone stores it holds. */
interface Run {
  cutoff: number;
  budget: SweepBudget;
  counts: SweepCounts;
  /** A store whose row exists was visited: the database is the bucket's, so a gone store's files may go. */
  liveStoreSeen: boolean;
  /** Files of gone stores visited before any live store: deleted at the end of the run if one is seen. */
  gone: { keys: string[]; hashes: number };
}

/**
 * Sweeps the given top-level prefixes, in key order as R2 lists them (the job gives the bucket's; a test its
 * own stores'), starting after the key `after` (a prefix wholly before it is skipped), within the budget. Answers the
 * counts and where the next run goes on (undefined: every prefix given was swept to its end).
 *
 * A store whose row is gone is swept like the others (no row names its files any more), but only once the
 * same run has found a store that exists: a database that knows none of the bucket's stores is the wrong
 * one (or an empty one), and the files are kept with a warning.
 */
export async function sweepPrefixes(
  ctx: SweepContext,
  bucket: SweepBucket,
  prefixes: Iterable<string> | AsyncIterable<string>,
  options: { after?: string; budget?: SweepBudget } = {},
): Promise<{ counts: SweepCounts; after: string | undefined }> {
  const run: Run = { cutoff: ctx.now.getTime() - SWEEP_GRACE_MS, budget: options.budget ?? SWEEP_BUDGET, counts: zero(), liveStoreSeen: false, gone: { keys: [], hashes: 0 } };
  const { counts } = run;
  let after = options.after;
  let visited = 0;
  let stopped = false;
  for await (const prefix of prefixes) {
    if (after !== undefined && pastPrefix(prefix) <= after) continue;
    if (visited >= run.budget.stores || counts.files >= run.budget.objects) {
      stopped = true;
      break;
    }
    visited++;
    const storeId = storeIdOfPrefix(prefix);
    if (!storeId) {
      counts.otherPrefixes++;
      after = pastPrefix(prefix);
      continue;
    }
    counts.stores++;
    try {
      const visit = await sweepStore(ctx, bucket, storeId, prefix, after !== undefined && after.startsWith(prefix) ? after : undefined, run);
      if (!visit.exists) counts.goneStores++;
      if (!visit.done) {
        after = visit.after;
        stopped = true;
        break;
      }
      after = pastPrefix(prefix);
    } catch (e) {
      counts.failedStores++;
      ctx.log.warn("media.sweep_store_failed", { storeId, ...errorFields(e), next: "Nothing of the store was deleted after the failure; a later run sweeps it again." });
      after = pastPrefix(prefix);
    }
  }
  if (run.gone.keys.length > 0) {
    if (run.liveStoreSeen) await deleteOrphans(bucket, run, run.gone.keys, run.gone.hashes);
    else {
      counts.keptGoneFiles += run.gone.keys.length;
      ctx.log.warn("media.sweep_gone_stores_kept", {
        files: run.gone.keys.length,
        next: "The database knows none of the stores this run visited: check that the worker's DATABASE_URL is the admin's. The files are kept.",
      });
    }
  }
  if (counts.deletedFiles > 0) ctx.log.info("media.swept", { ...counts });
  return { counts, after: stopped ? after : undefined };
}

interface StoreVisit {
  /** The store's row exists. */
  exists: boolean;
  /** Listed to the end of the store's prefix. */
  done: boolean;
  /** The last key settled, when not done: the next run starts after it. */
  after: string | undefined;
}

/**
 * One store's files from the key after `start`, page by page while the budget lasts, settled a part at a
 * time: the hashes of whole images (the image still being listed waits for its last file) go to the store's
 * unit in one statement, and the files of those no row names and older than the grace are deleted.
 */
async function sweepStore(ctx: SweepContext, bucket: SweepBucket, storeId: string, prefix: string, start: string | undefined, run: Run): Promise<StoreVisit> {
  const { counts } = run;
  const visit: StoreVisit = { exists: true, done: false, after: start };
  let pending: MediaFile[] = [];
  let lastKey = start;
  let cursor: string | undefined;
  for (;;) {
    const limit = Math.min(PAGE_MAX, Math.max(PAGE_MIN, run.budget.objects - counts.files));
    const page = await bucket.list({ prefix, limit, ...(cursor ? { cursor } : start ? { startAfter: start } : {}) });
    counts.files += page.objects.length;
    for (const object of page.objects) {
      const file = mediaFileOf(prefix, object);
      if (file) pending.push(file);
      else counts.otherKeys++;
      lastKey = object.key;
    }
    visit.done = !page.truncated;
    cursor = page.cursor;
    const stopping = !visit.done && counts.files >= run.budget.objects;
    if (visit.done || stopping || pending.length >= SETTLE_EVERY) {
      // The last image may have files on the next page: it waits, unless the listing is done.
      const open = visit.done ? undefined : pending.at(-1)?.hash;
      const settled = pending.filter((f) => f.hash !== open);
      pending = pending.filter((f) => f.hash === open);
      if (settled.length > 0) {
        visit.exists = await settle(ctx, bucket, storeId, settled, run);
        visit.after = settled.at(-1)!.key;
      }
      // Stopping with nothing settled (keys media never writes, or one hash's files filling a page): go on past them.
      if (stopping && (pending.length === 0 || visit.after === start)) visit.after = lastKey;
    }
    if (visit.done || stopping) return visit;
  }
}

/**
 * The files of whole images judged: the store's unit says whether the store exists and which hashes a row
 * names; the files of the others, all older than the grace, go (a gone store's are held until the run has
 * seen a live store). Answers whether the store exists.
 */
async function settle(ctx: SweepContext, bucket: SweepBucket, storeId: string, files: MediaFile[], run: Run): Promise<boolean> {
  const byHash = new Map<string, MediaFile[]>();
  for (const f of files) {
    const group = byHash.get(f.hash);
    if (group) group.push(f);
    else byHash.set(f.hash, [f]);
  }
  const hashes = [...byHash.keys()];
  const { exists, named } = await sendStoreUnit(ctx.db, storeId, (q) =>
    plan([namedMediaHashes(q, hashes)] as const, ([[row]]) => ({ exists: row!.store_exists, named: new Set(row!.named) })),
  );
  run.counts.hashes += hashes.length;
  run.liveStoreSeen ||= exists;
  const orphans: MediaFile[][] = [];
  for (const [hash, group] of byHash) {
    if (named.has(hash)) continue;
    if (group.some((f) => f.uploaded.getTime() >= run.cutoff)) run.counts.youngHashes++;
    else orphans.push(group);
  }
  const keys = orphans.flat().map((f) => f.key);
  if (exists || run.liveStoreSeen) await deleteOrphans(bucket, run, keys, orphans.length);
  else {
    run.gone.keys.push(...keys);
    run.gone.hashes += orphans.length;
  }
  return exists;
}

async function deleteOrphans(bucket: SweepBucket, run: Run, keys: string[], hashes: number): Promise<void> {
  await deleteMediaFiles(bucket, keys);
  run.counts.deletedFiles += keys.length;
  run.counts.deletedHashes += hashes;
}
