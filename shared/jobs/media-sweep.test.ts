import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { mediaKeys } from "#shared/media/store";
import { pastPrefix, type SweepBucket } from "#shared/media/sweep";
import { makeStore, testDb, type TestStore } from "../../test/harness";
import { jobContext } from "../../test/jobs";
import { tracedWork } from "../../test/proxy";
import { sweepMedia, sweepPrefixes, SWEEP_GRACE_MS } from "./media-sweep";

/**
 * {media}-sweep against miniflare's local R2 and real Postgres. The bucket is shared with the project's
 * other test files (decision 0033), so every sweep with a clock past the grace is given this file's own
 * store prefixes (`sweepPrefixes`, which the job calls with the bucket's), and the job itself runs at the
 * real time: then only files older than a day can go, and nothing this run wrote is.
 */
const db = testDb();
const MEDIA = (env as unknown as Cloudflare.WorkerEnv).MEDIA as SweepBucket;
const DAY = 86_400_000;
/** A clock at which every file this run wrote is older than the grace. */
const later = () => new Date(Date.now() + SWEEP_GRACE_MS + DAY);

const randomHash = () => [...crypto.getRandomValues(new Uint8Array(32))].map((b) => b.toString(16).padStart(2, "0")).join("");

/** An image's files as an upload leaves them (tiny stand-ins: the sweep reads keys and times only); answers the keys. */
async function putImage(storeId: string, hash = randomHash(), options: { icons?: boolean } = {}): Promise<string[]> {
  const keys = [...mediaKeys(storeId, hash, [160, 320]), ...(options.icons ? [`${storeId}/${hash}/icon-32.png`, `${storeId}/${hash}/icon-180.png`] : [])];
  await Promise.all(keys.map((key) => MEDIA.put(key, new Uint8Array([1, 2, 3]), { httpMetadata: { contentType: "application/octet-stream" } })));
  return keys;
}

/** Which of `keys` are still in the bucket. */
async function kept(keys: readonly string[]): Promise<string[]> {
  const found = await Promise.all(keys.map(async (key) => ((await MEDIA.head(key)) ? key : null)));
  return found.filter((k): k is string => k !== null);
}

const sweep = (prefixes: string[], now = later(), options: Parameters<typeof sweepPrefixes>[3] = {}) => {
  const ctx = jobContext(db, now);
  return sweepPrefixes(ctx, MEDIA, prefixes, options).then((outcome) => ({ ...outcome, log: ctx.log.lines }));
};
const prefixOf = (storeId: string) => `${storeId}/`;

/** The store's fixture product shows the image `hash`. */
const nameInProduct = (storeId: string, hash: string) =>
  withStore(db, storeId, (tx) =>
    tx.$client.query(
      `insert into product_media (store_id, product_id, alt, hash, original_type, original_bytes, width, height, widths)
       select store_id, id, 'Photo', $2, 'image/png', 3, 320, 320, '{160,320}' from product where store_id = $1 limit 1`,
      [storeId, hash],
    ),
  );

/** A row of each kind that names an image: a product's image, the theme's draft logo and favicon, its published banner, a collection's image. */
async function nameEverywhere(storeId: string, hashes: { product: string; logo: string; favicon: string; banner: string; collection: string }) {
  const image = (hash: string) => JSON.stringify({ hash, width: 320, height: 320, widths: [160, 320], alt: "" });
  await nameInProduct(storeId, hashes.product);
  await withStore(db, storeId, async (tx) => {
    await tx.$client.query(
      `update store_theme set draft = draft || jsonb_build_object('logo', $2::jsonb, 'favicon', jsonb_build_object('hash', $3::text)),
         published = jsonb_build_object('bannerImage', $4::jsonb), published_at = now() where store_id = $1`,
      [storeId, image(hashes.logo), hashes.favicon, image(hashes.banner)],
    );
    await tx.$client.query("update collection set image = $2::jsonb where store_id = $1", [storeId, image(hashes.collection)]);
  });
}

describe("{media}-sweep: which files go", () => {
  it("a hash no row names, older than the grace, loses every file (each width, the original, a favicon's icons)", async () => {
    const s = await makeStore(db);
    const plain = await putImage(s.id);
    const icon = await putImage(s.id, randomHash(), { icons: true });
    const { counts, after, log } = await sweep([prefixOf(s.id)]);
    expect(await kept([...plain, ...icon])).toEqual([]);
    expect(counts).toMatchObject({ stores: 1, files: plain.length + icon.length, hashes: 2, deletedHashes: 2, deletedFiles: plain.length + icon.length, failedStores: 0 });
    expect(after).toBeUndefined();
    expect(log.filter((l) => l.msg === "media.swept")).toEqual([expect.objectContaining({ level: "info", deletedFiles: plain.length + icon.length })]);
    expect(log.filter((l) => l.level === "warn" || l.level === "error")).toEqual([]);
  });

  it("a hash named by a product's image, the theme's logo, favicon or banner, or a collection's image keeps its files", async () => {
    const s = await makeStore(db);
    const hashes = { product: randomHash(), logo: randomHash(), favicon: randomHash(), banner: randomHash(), collection: randomHash() };
    await nameEverywhere(s.id, hashes);
    const named = (await Promise.all(Object.values(hashes).map((h) => putImage(s.id, h, { icons: h === hashes.favicon })))).flat();
    const orphan = await putImage(s.id);
    const { counts } = await sweep([prefixOf(s.id)]);
    expect(await kept(named)).toEqual(named);
    expect(await kept(orphan)).toEqual([]);
    expect(counts).toMatchObject({ hashes: 6, deletedHashes: 1, youngHashes: 0 });
  });

  it("an orphan inside the grace is kept: the job at the real time deletes nothing young", async () => {
    const s = await makeStore(db);
    const fresh = await putImage(s.id);
    expect((await sweep([prefixOf(s.id)], new Date())).counts).toMatchObject({ hashes: 1, youngHashes: 1, deletedFiles: 0 });
    const result = await sweepMedia(jobContext(db, new Date()), { positionKey: `_sweep/test-${crypto.randomUUID()}.json` });
    expect(result).toMatchObject({ next: null, failedStores: 0 });
    expect(result["stores"]).toBeGreaterThanOrEqual(1);
    expect(await kept(fresh)).toEqual(fresh);
  });

  it("a hash whose newest file is inside the grace keeps all its files", async () => {
    const s = await makeStore(db);
    // One hash's files written a moment apart: at a clock where only the first ones are past the grace, all stay.
    const mixed = randomHash();
    const files = await putImage(s.id, mixed);
    await new Promise((r) => setTimeout(r, 30));
    await MEDIA.put(`${s.id}/${mixed}/original`, new Uint8Array([4]), { httpMetadata: { contentType: "image/png" } });
    const times = (await MEDIA.list({ prefix: `${s.id}/${mixed}/` })).objects.map((o) => o.uploaded.getTime());
    const newest = Math.max(...times);
    expect(Math.min(...times)).toBeLessThan(newest);
    expect((await sweep([prefixOf(s.id)], new Date(newest + SWEEP_GRACE_MS - 1))).counts).toMatchObject({ hashes: 1, youngHashes: 1, deletedFiles: 0 });
    expect(await kept(files)).toEqual(files);
    expect((await sweep([prefixOf(s.id)], new Date(newest + SWEEP_GRACE_MS + 1))).counts).toMatchObject({ hashes: 1, deletedHashes: 1 });
    expect(await kept(files)).toEqual([]);
  });

  it("each store is judged by its own rows: the same hash named in one store is deleted in another that does not name it", async () => {
    const [a, b] = [await makeStore(db), await makeStore(db)];
    const shared = randomHash();
    await nameInProduct(a.id, shared);
    const inA = await putImage(a.id, shared);
    const inB = await putImage(b.id, shared);
    const onlyB = await putImage(b.id);
    // A's sweep: its named hash stays; B's files are not A's to judge.
    await sweep([prefixOf(a.id)]);
    expect(await kept([...inA, ...inB, ...onlyB])).toEqual([...inA, ...inB, ...onlyB]);
    // B's sweep: B names nothing, so its copy goes; A's stays.
    await sweep([prefixOf(b.id)]);
    expect(await kept([...inA, ...inB, ...onlyB])).toEqual(inA);
  });

  it("prefixes and keys media never writes are left alone; a gone store's files go only when the run saw a live store", async () => {
    const live = await makeStore(db);
    const liveOrphan = await putImage(live.id);
    // No store row, as a deleted store leaves its prefix; first in key order, so the run meets it before any live store.
    const goneId = `00000000${crypto.randomUUID().slice(8)}`;
    const goneFiles = await putImage(goneId);
    const strange = [`${live.id}/notes.txt`, `${live.id}/${randomHash()}/readme.txt`, `${live.id}/abc/160.webp`];
    const foreign = [`not-a-store-${crypto.randomUUID()}/x/original`, `${live.id.toUpperCase()}/${randomHash()}/original`];
    for (const key of [...strange, ...foreign]) await MEDIA.put(key, new Uint8Array([1]), { httpMetadata: { contentType: "text/plain" } });
    const foreignPrefixes = foreign.map((k) => `${k.split("/")[0]}/`);

    // Prefixes in key order, as the bucket lists them (a run goes on after a key).
    const alone = await sweep([prefixOf(goneId), ...foreignPrefixes].sort());
    expect(alone.counts).toMatchObject({ stores: 1, goneStores: 1, keptGoneFiles: goneFiles.length, deletedFiles: 0, otherPrefixes: 2 });
    expect(alone.log.filter((l) => l.msg === "media.sweep_gone_stores_kept")).toEqual([expect.objectContaining({ level: "warn", files: goneFiles.length })]);
    expect(await kept(goneFiles)).toEqual(goneFiles);

    const withLive = await sweep([prefixOf(goneId), prefixOf(live.id), ...foreignPrefixes].sort());
    expect(withLive.counts).toMatchObject({ stores: 2, goneStores: 1, keptGoneFiles: 0, deletedFiles: goneFiles.length + liveOrphan.length, otherKeys: strange.length });
    expect(await kept([...goneFiles, ...liveOrphan])).toEqual([]);
    expect(await kept([...strange, ...foreign])).toEqual([...strange, ...foreign]);
  });
});

describe("{media}-sweep: budget, failures, round trips", () => {
  it("a run stops at its budget of files or stores, and the next run goes on where it stopped", async () => {
    const [a, b] = [await makeStore(db), await makeStore(db)];
    const many = (await Promise.all(Array.from({ length: 22 }, () => putImage(a.id)))).flat(); // 110 files
    const few = await putImage(b.id);
    const aFirst = prefixOf(a.id) < prefixOf(b.id);
    const prefixes = aFirst ? [prefixOf(a.id), prefixOf(b.id)] : [prefixOf(b.id), prefixOf(a.id)];
    const firstFiles = aFirst ? many : few;
    const secondFiles = aFirst ? few : many;

    // A budget of stores: one store a run.
    const one = await sweep(prefixes, later(), { budget: { objects: 10_000, stores: 1 } });
    expect(one.after).toBe(pastPrefix(prefixes[0]!));
    expect(await kept(firstFiles)).toEqual([]);
    expect(await kept(secondFiles)).toEqual(secondFiles);
    const two = await sweep(prefixes, later(), { after: one.after, budget: { objects: 10_000, stores: 1 } });
    expect([two.counts.stores, two.after]).toEqual([1, undefined]);
    expect(await kept(secondFiles)).toEqual([]);

    // A budget of files: a run lists a page of at least 100, settles the whole images in it and goes on from the last.
    const c = await makeStore(db);
    const images = await Promise.all(Array.from({ length: 22 }, () => putImage(c.id)));
    const first = await sweep([prefixOf(c.id)], later(), { budget: { objects: 1, stores: 10 } });
    expect(first.after?.startsWith(prefixOf(c.id))).toBe(true);
    expect(first.counts).toMatchObject({ files: 100, deletedHashes: 19, deletedFiles: 95 });
    const left = await kept(images.flat());
    expect(left).toHaveLength(15);
    expect(left.every((k) => k > first.after!)).toBe(true);
    const rest = await sweep([prefixOf(c.id)], later(), { after: first.after, budget: { objects: 1, stores: 10 } });
    expect(rest.counts).toMatchObject({ files: 15, deletedHashes: 3 });
    expect(rest.after).toBeUndefined();
    expect(await kept(images.flat())).toEqual([]);
  });

  it("the job keeps where a run stopped in the bucket, and the next run starts there", async () => {
    // Three stores with files, and the position's own prefix: a run of one prefix leaves at least two for the next.
    for (let i = 0; i < 3; i++) await putImage((await makeStore(db)).id);
    const positionKey = `_sweep/test-${crypto.randomUUID()}.json`;
    const budget = { objects: 1_000_000, stores: 1 };
    const first = await sweepMedia(jobContext(db, new Date()), { positionKey, budget });
    expect(first["from"]).toBeNull();
    expect(typeof first["next"]).toBe("string");
    expect(JSON.parse(await (await MEDIA.get(positionKey))!.text())).toEqual({ after: first["next"] });
    const second = await sweepMedia(jobContext(db, new Date()), { positionKey, budget });
    expect(second["from"]).toBe(first["next"]);
    expect(String(second["next"]) > String(first["next"])).toBe(true);
  });

  it("one store's failure is a warning and the other stores are swept", async () => {
    // In key order, the failing store first.
    const [bad, good] = [await makeStore(db), await makeStore(db)].sort((x, y) => (x.id < y.id ? -1 : 1)) as [TestStore, TestStore];
    const badFiles = await putImage(bad.id);
    const goodFiles = await putImage(good.id);
    const ctx = jobContext(db, later());
    // R2 refusing to list the bad store's files (as an outage or a throttled account does); everything else is
    // the real bucket. (A database failure is taken the same way: the store's visit throws, the run goes on.)
    const failing = new Proxy(MEDIA, {
      get(target, name) {
        if (name === "list") {
          return (options: Parameters<SweepBucket["list"]>[0]) =>
            options.prefix === prefixOf(bad.id) ? Promise.reject(new Error("R2 refused the list (test)")) : target.list(options);
        }
        const value: unknown = Reflect.get(target, name);
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const run = { running: sweepPrefixes(ctx, failing, [prefixOf(bad.id), prefixOf(good.id)]) };
    const { counts, after } = await run.running;
    expect(counts).toMatchObject({ stores: 2, failedStores: 1, deletedFiles: goodFiles.length });
    expect(after).toBeUndefined();
    expect(ctx.log.lines.filter((l) => l.msg === "media.sweep_store_failed")).toEqual([expect.objectContaining({ level: "warn", storeId: bad.id })]);
    expect(await kept(badFiles)).toEqual(badFiles);
    expect(await kept(goodFiles)).toEqual([]);
  });

  it("a store's hashes are judged in one round trip", async () => {
    const s = await makeStore(db);
    const files = (await Promise.all([putImage(s.id), putImage(s.id), putImage(s.id)])).flat();
    const traced = await tracedWork((t) => sweepPrefixes(jobContext(t, later()), MEDIA, [prefixOf(s.id)]));
    expect([traced.result.counts.deletedHashes, traced.trips.turns]).toEqual([3, 1]);
    expect(await kept(files)).toEqual([]);
  });
});
