import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { makeStore, testDb } from "../../test/harness";
import { jobContext } from "../../test/jobs";
import { ACTIVITY_RETENTION_DAYS, OUTBOX_PRUNE_BATCH, pruneActivity, pruneCutoffs, pruneStore, SENT_OUTBOX_RETENTION_DAYS } from "./activity-prune";

/**
 * {api}-activity-prune's outbox retention against real Postgres: sent rows naming no order go after 30 days;
 * rows not sent (due, dead) and the events of an order (its timeline) stay. The job's clock is passed in.
 * Other test files share the database and a job run prunes every store, so a run keeps its clock at the real
 * time (their rows are fresh) and its old rows in the past; the per-store unit, which touches only its
 * store, is also run with a clock in the future.
 */
const db = testDb();
// Another connection, to hold a store's rows while the job runs (a Database holds one connection).
const holder = testDb();
const DAY = 86_400_000;

interface Row {
  kind: string;
  /** When it was sent; null: not sent. */
  sent: Date | null;
  created?: Date;
  dead?: Date;
  orderId?: string;
}

/** Writes the store's outbox rows as they would be after the relay; answers their ids in the same order. */
async function outbox(storeId: string, rows: Row[]): Promise<string[]> {
  return withStore(db, storeId, async (tx) => {
    const ids: string[] = [];
    for (const r of rows) {
      const created = r.created ?? r.sent ?? new Date();
      const { rows: made } = await tx.$client.query<{ id: string }>(
        `insert into outbox_event (store_id, kind, payload, created_at, available_at, processed_at, dead_at, attempts)
         values ($1, $2, $3, $4, $4, $5, $6, $7) returning id`,
        [tx.storeId, r.kind, JSON.stringify(r.orderId ? { orderId: r.orderId } : {}), created, r.sent, r.dead ?? null, r.dead ? 8 : 0],
      );
      ids.push(made[0]!.id);
    }
    return ids;
  });
}

/** Which of `ids` the store still has. */
const kept = (storeId: string, ids: string[]) =>
  withStore(db, storeId, async (tx) => {
    const { rows } = await tx.$client.query<{ id: string }>("select id from outbox_event where store_id = $1 and id = any($2::uuid[])", [tx.storeId, ids]);
    return ids.filter((id) => rows.some((r) => r.id === id));
  });

const ago = (now: Date, days: number) => new Date(now.getTime() - days * DAY);

describe("{api}-activity-prune: Idempotency-Keys", () => {
  it("a store's unit deletes its keys older than 24 hours, keeps younger ones, and nothing of another store", async () => {
    const a = await makeStore(db);
    const b = await makeStore(db);
    const real = new Date();
    const keys = (storeId: string) =>
      withStore(db, storeId, (tx) => tx.$client.query<{ key: string }>("select key from idempotency_key order by key")).then((r) => r.rows.map((row) => row.key));
    await withStore(db, a.id, (tx) =>
      tx.$client.query(
        `insert into idempotency_key (store_id, owner, key, procedure, request_hash, created_at)
         values ($1, $2, 'old', 'products.create', repeat('0', 64), $3), ($1, $2, 'young', 'products.create', repeat('0', 64), $4)`,
        [a.id, `grant:${crypto.randomUUID()}`, ago(real, 1.5), ago(real, 0.5)],
      ),
    );
    // The fixture's own key was made just now: kept, like 'young'.
    expect(await pruneStore(db, a.id, pruneCutoffs(real))).toEqual({ deleted: 0, outboxDeleted: 0, keysDeleted: 1 });
    expect(await keys(a.id)).toEqual(["fixture", "young"]);
    expect(await keys(b.id)).toEqual(["fixture"]);
  });
});

describe("{api}-activity-prune: sent outbox rows", () => {
  it("a store's unit deletes its sent rows past the retention that name no order, and nothing of another store", async () => {
    const a = await makeStore(db);
    const b = await makeStore(db);
    const real = new Date();
    // The unit's clock: 29 days ahead, so rows sent two days ago are past the 30 days and those of 12 hours are not.
    const now = new Date(real.getTime() + (SENT_OUTBOX_RETENTION_DAYS - 1) * DAY);
    const [old, young, due, dead, ofOrder] = await outbox(a.id, [
      { kind: "product.updated", sent: ago(real, 2) },
      { kind: "product.updated", sent: ago(real, 0.5) },
      { kind: "customer.updated", sent: null, created: ago(real, 2) },
      { kind: "customer.updated", sent: null, created: ago(real, 3), dead: ago(real, 2) },
      { kind: "order.paid", sent: ago(real, 2), orderId: crypto.randomUUID() },
    ]);
    const [other] = await outbox(b.id, [{ kind: "product.updated", sent: ago(real, 2) }]);

    // (The fixture's Idempotency-Key, made just now, is past its 24 hours on this clock.)
    expect(await pruneStore(db, a.id, pruneCutoffs(now))).toEqual({ deleted: 0, outboxDeleted: 1, keysDeleted: 1 });
    expect(await kept(a.id, [old!, young!, due!, dead!, ofOrder!])).toEqual([young, due, dead, ofOrder]);
    expect(await kept(b.id, [other!])).toEqual([other]);

    expect(await pruneStore(db, a.id, pruneCutoffs(now))).toEqual({ deleted: 0, outboxDeleted: 0, keysDeleted: 0 });
  });

  it("a run by the job's clock deletes only sent rows older than 30 days, in every store listed, and leaves the rest", async () => {
    const a = await makeStore(db);
    const b = await makeStore(db);
    const now = new Date();
    const [old, young, due, dead, ofOrder] = await outbox(a.id, [
      { kind: "product.updated", sent: ago(now, SENT_OUTBOX_RETENTION_DAYS + 1) },
      { kind: "product.updated", sent: ago(now, SENT_OUTBOX_RETENTION_DAYS - 1) },
      { kind: "customer.updated", sent: null, created: ago(now, 40) },
      { kind: "customer.updated", sent: null, created: ago(now, 45), dead: ago(now, 40) },
      { kind: "order.refunded", sent: ago(now, 200), orderId: crypto.randomUUID() },
    ]);
    const bRows = await outbox(b.id, [
      { kind: "product.updated", sent: ago(now, SENT_OUTBOX_RETENTION_DAYS - 1) },
      { kind: "customer.updated", sent: null, created: ago(now, 40) },
    ]);

    const ctx = { ...jobContext(db, now), job: "{api}-activity-prune" as const };
    const result = await pruneActivity(ctx);
    expect(result).toMatchObject({ sentOutboxCutoff: ago(now, SENT_OUTBOX_RETENTION_DAYS).toISOString(), failedStores: 0 });
    expect(result.outboxDeleted).toBeGreaterThanOrEqual(1); // other old rows may exist in a reused test database
    expect(await kept(a.id, [old!, young!, due!, dead!, ofOrder!])).toEqual([young, due, dead, ofOrder]);
    expect(await kept(b.id, bRows)).toEqual(bRows);
    // Store b had nothing past the retention: the lists did not name it.
    expect(ctx.log.lines.filter((l) => l.msg === "job.store" && l.storeId === b.id)).toEqual([]);
  });

  it("a store with more than a unit's batch is visited again until its old rows are gone", async () => {
    const s = await makeStore(db);
    const now = new Date();
    const n = OUTBOX_PRUNE_BATCH + 10;
    await withStore(db, s.id, (tx) =>
      tx.$client.query(
        `insert into outbox_event (store_id, kind, created_at, available_at, processed_at)
         select $1, 'product.updated', $2, $2, $2 from generate_series(1, $3)`,
        [tx.storeId, ago(now, SENT_OUTBOX_RETENTION_DAYS + 5), n],
      ),
    );
    const ctx = jobContext(db, now);
    await pruneActivity(ctx);
    const left = await withStore(db, s.id, async (tx) => (await tx.$client.query<{ n: number }>("select count(*)::int as n from outbox_event where store_id = $1 and processed_at is not null", [tx.storeId])).rows[0]!.n);
    expect(left).toBe(0);
  });

  it("one store's failure never stops the others and is recorded for its merchant (the shared store loop)", async () => {
    const shops = [await makeStore(db), await makeStore(db), await makeStore(db)];
    const now = new Date();
    const old = ago(now, ACTIVITY_RETENTION_DAYS + 5);
    const activity = (storeId: string) =>
      withStore(db, storeId, async (tx) => (await tx.$client.query<{ n: number }>("select count(*)::int as n from api_activity where store_id = $1 and last_at < $2", [storeId, ago(now, ACTIVITY_RETENTION_DAYS)])).rows[0]!.n);
    for (const s of shops) {
      await withStore(db, s.id, (tx) =>
        tx.$client.query(
          `insert into api_activity (store_id, grant_id, procedure, kind, via, bucket_start, last_at)
           select $1, id, 'products.update', 'write', 'token', $2, $2 from api_grant where store_id = $1 limit 1`,
          [s.id, old],
        ),
      );
      expect(await activity(s.id)).toBe(1);
    }
    const bad = shops[1]!;
    const job = "{api}-activity-prune" as const;
    const ctx = { ...jobContext(db, now), job };
    // A real failure of one store's unit: its delete waits for rows another transaction holds, and the
    // statement is cancelled (what a statement timeout or an operator's cancel does).
    const { run } = await withStore(holder, bad.id, async (tx) => {
      await tx.$client.query("select id from api_activity where store_id = $1 for update", [bad.id]);
      const me = (await tx.$client.query<{ pid: number }>("select pg_backend_pid() as pid")).rows[0]!.pid;
      const running = pruneActivity(ctx);
      for (let waited = 0; ; waited += 50) {
        const { rows } = await tx.$client.query<{ pid: number }>("select pid from pg_stat_activity where $1 = any (pg_blocking_pids(pid))", [me]);
        if (rows[0]) {
          await tx.$client.query("select pg_cancel_backend($1)", [rows[0].pid]);
          break;
        }
        if (waited > 15_000) throw new Error("the prune never waited for the held rows");
        await new Promise((r) => setTimeout(r, 50));
      }
      // Not awaited here: the job finishes the other stores whatever this transaction does.
      return { run: running };
    });
    const result = await run;
    expect(result["failedStores"]).toBeGreaterThanOrEqual(1);
    expect(ctx.log.lines.filter((l) => l.msg === "job.store_failed" && l.storeId === bad.id)).toEqual([expect.objectContaining({ level: "error" })]);
    expect(await activity(shops[0]!.id)).toBe(0);
    expect(await activity(shops[2]!.id)).toBe(0);
    expect(await activity(bad.id)).toBe(1);
    const failures = (storeId: string) =>
      withStore(db, storeId, async (tx) => (await tx.$client.query<{ error: string; failures: number }>("select error, failures from job_failure where store_id = $1 and job = $2", [storeId, job])).rows);
    expect(await failures(bad.id)).toEqual([{ error: expect.any(String), failures: 1 }]);
    expect(await failures(shops[0]!.id)).toEqual([]);
    expect(await failures(shops[2]!.id)).toEqual([]);
  });
});
