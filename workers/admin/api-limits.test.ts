import { describe, expect, it } from "vitest";
import { recordRead } from "#shared/pipeline/activity";
import { pruneActivity } from "#shared/jobs/activity-prune";
import { withStore } from "#shared/db/with-store";
import { createLogger } from "#shared/core/log";
import { makeStore, testDb } from "../../test/harness";
import { api, createToken, rpc, rpcJson, sessionFor } from "../../test/admin";

const db = testDb();

async function ownerToken(areas: string[]) {
  const store = await makeStore(db);
  const browser = await sessionFor(db, store.ownerUserId, store.id);
  return { store, browser, ...(await createToken(browser, areas)) };
}

const activityOf = (storeId: string, grantId: string) =>
  withStore(db, storeId, (tx) =>
    tx.$client.query<{ procedure: string; kind: string; count: number; bucket_start: Date }>(
      "select procedure, kind, count, bucket_start from api_activity where grant_id = $1 order by last_at",
      [grantId],
    ),
  ).then((r) => r.rows);

describe("per-grant rate limit", () => {
  it("allows exactly 120 of 200 calls in a minute, then 429 with Retry-After (concurrent batches)", async () => {
    const { token } = await ownerToken(["products:read"]);
    const statuses: number[] = [];
    let limited: Response | undefined;
    for (let batch = 0; batch < 8; batch++) {
      const answers = await Promise.all(Array.from({ length: 25 }, () => api(token, "products/list", { pageSize: 1 })));
      for (const res of answers) {
        statuses.push(res.status);
        if (res.status === 429) limited = res;
      }
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(120);
    expect(statuses.filter((s) => s === 429)).toHaveLength(80);
    expect(Number(limited!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(limited!.headers.get("ratelimit")).toMatch(/^"default";r=0;t=\d+$/);
    expect(((await limited!.json()) as { json: { code: string } }).json.code).toBe("TOO_MANY_REQUESTS");
  });

  it("counts per grant: another grant of the same member is not limited", async () => {
    const { browser, token } = await ownerToken(["products:read"]);
    const second = await createToken(browser, ["products:read"]);
    for (let i = 0; i < 5; i++) await Promise.all(Array.from({ length: 25 }, () => api(token, "products/list", { pageSize: 1 })));
    expect((await api(token, "products/list", {})).status).toBe(429);
    expect((await api(second.token, "products/list", {})).status).toBe(200);
  });
});

describe("api_activity", () => {
  it("folds reads into one row per grant, procedure and 10-minute bucket; logs each write", async () => {
    const { store, token, grant } = await ownerToken(["products:write"]);
    for (let i = 0; i < 5; i++) expect((await api(token, "products/list", {})).status).toBe(200);
    const reads = await activityOf(store.id, grant.id);
    expect(reads.reduce((n, r) => n + r.count, 0)).toBe(5);
    expect(reads.length).toBeLessThanOrEqual(2); // two only if the calls straddled a bucket boundary
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await api(token, "products/create", { title: `Activity ${i}`, variants: [{ priceMinor: 100 }] });
      expect(res.status).toBe(200);
      ids.push((await rpcJson<{ id: string }>(res)).id);
    }
    const all = await activityOf(store.id, grant.id);
    expect(all.filter((r) => r.kind === "write").map((r) => [r.procedure, r.count])).toEqual([
      ["products.create", 1],
      ["products.create", 1],
      ["products.create", 1],
    ]);
    // A refused call is not logged.
    await api(token, "products/create", { title: "" });
    expect((await activityOf(store.id, grant.id)).length).toBe(all.length);
  });

  it("5 reads in one bucket are exactly one row with count 5 (controlled clock); a new bucket starts a new row", async () => {
    const { store, grant } = await ownerToken(["products:read"]);
    // A bucket start an hour ago (recent, so the prune test never touches these rows).
    const base = Math.floor((Date.now() - 3_600_000) / 600_000) * 600_000;
    for (let i = 0; i < 5; i++) {
      await recordRead(db, { storeId: store.id, grantId: grant.id, procedure: "products.list", via: "token", at: new Date(base + i * 60_000) });
    }
    await recordRead(db, { storeId: store.id, grantId: grant.id, procedure: "products.list", via: "token", at: new Date(base + 10 * 60_000) });
    const rows = await activityOf(store.id, grant.id);
    expect(rows.map((r) => [r.count, r.bucket_start.getTime()])).toEqual([
      [5, base],
      [1, base + 600_000],
    ]);
  });

  it("apiActivity.list shows a grant's activity to its member", async () => {
    const { browser, token, grant } = await ownerToken(["products:read"]);
    await api(token, "products/list", {});
    const page = await rpcJson<{ items: { grantId: string; procedure: string; count: number }[]; total: number }>(
      await rpc(browser, "apiActivity/list", { grantId: grant.id }),
    );
    expect(page.total).toBe(1);
    expect(page.items[0]).toMatchObject({ grantId: grant.id, procedure: "products.list", count: 1 });
  });

  it("{api}-activity-prune deletes rows older than 90 days, per store, by a controlled clock", async () => {
    const a = await ownerToken(["products:read"]);
    const b = await ownerToken(["products:read"]);
    // The job's clock is passed in. Kept near the real time so rows of other tests (all fresh) survive.
    const now = new Date();
    const day = 86_400_000;
    for (const { store, grant } of [a, b]) {
      await recordRead(db, { storeId: store.id, grantId: grant.id, procedure: "products.list", via: "token", at: new Date(now.getTime() - 91 * day) });
      await recordRead(db, { storeId: store.id, grantId: grant.id, procedure: "products.get", via: "token", at: new Date(now.getTime() - 89 * day) });
    }
    const result = await pruneActivity({ db, log: createLogger({}, "error"), now });
    expect(result.deleted).toBeGreaterThanOrEqual(2); // other old rows may exist in a reused test database
    for (const { store, grant } of [a, b]) {
      expect((await activityOf(store.id, grant.id)).map((r) => r.procedure)).toEqual(["products.get"]);
    }
  });
});
