import { describe, expect, it } from "vitest";
import { makeStore, testDb } from "../../test/harness";
import { emit } from "./outbox";
import { storeIdByHostname, storeIdByInvitation, storeIdBySlug, storeIdsForUser, storeIdsWithPendingOutbox, storeIdsWithSentOutbox } from "./privileged";
import { withStore } from "./with-store";
import { outboxEvent } from "./schema";
import { and, eq, isNotNull } from "drizzle-orm";

const db = testDb();
/** A second connection (a pool holds one), to hold a lock while `db` works. */
const other = testDb();

describe("privileged id lookups", () => {
  it("are SECURITY DEFINER functions owned by app_privileged that return ids only", async () => {
    const { rows } = await db.pool.query<{ name: string; returns: string; definer: boolean; owner: string; config: string[] | null }>(`
      select p.proname as name, format_type(p.prorettype, null) as returns, p.prosecdef as definer,
             pg_get_userbyid(p.proowner) as owner, p.proconfig as config
      from pg_proc p join pg_namespace n on n.oid = p.pronamespace
      where n.nspname = 'privileged' order by 1`);
    expect(rows.map((r) => r.name)).toEqual([
      "product_ids_with_words",
      "search_word_ids_like",
      "store_id_by_hostname",
      "store_id_by_invitation",
      "store_id_by_slug",
      "store_id_by_token_hash",
      "store_ids_for_user",
      "store_ids_with_domains_to_verify",
      "store_ids_with_marketing_work",
      "store_ids_with_old_activity",
      "store_ids_with_old_idempotency_keys",
      "store_ids_with_open_shipments",
      "store_ids_with_pending_outbox",
      "store_ids_with_preorder_balance_work",
      "store_ids_with_sent_outbox",
      "store_ids_with_unpaid_orders_due",
    ]);
    for (const r of rows) {
      expect({ name: r.name, returns: r.returns, definer: r.definer, owner: r.owner }).toEqual({
        name: r.name,
        returns: "uuid",
        definer: true,
        owner: "app_privileged",
      });
      expect(String(r.config)).toContain("search_path=pg_catalog, public");
    }
  });

  it("list a person's stores, and the store of an open invitation by its token hash only", async () => {
    const a = await makeStore(db);
    const b = await makeStore(db);
    expect(await storeIdsForUser(db, a.ownerUserId)).toEqual([a.id]);
    expect(await storeIdsForUser(db, crypto.randomUUID())).toEqual([]);
    const hash = await withStore(db, b.id, async (tx) => {
      const { rows } = await tx.$client.query<{ token_hash: string }>("select token_hash from staff_invitation limit 1");
      return rows[0]!.token_hash;
    });
    expect(await storeIdByInvitation(db, hash)).toBe(b.id);
    expect(await storeIdByInvitation(db, "0".repeat(64))).toBeNull();
    await withStore(db, b.id, (tx) => tx.$client.query("update staff_invitation set revoked_at = now()"));
    expect(await storeIdByInvitation(db, hash)).toBeNull();
  });

  it("find a store by slug, case-insensitively, and nothing for unknown slugs", async () => {
    const s = await makeStore(db);
    expect(await storeIdBySlug(db, s.slug)).toBe(s.id);
    expect(await storeIdBySlug(db, s.slug.toUpperCase())).toBe(s.id);
    expect(await storeIdBySlug(db, "no-such-store-zz")).toBeNull();
    expect(await storeIdBySlug(db, "")).toBeNull();
    expect(await storeIdBySlug(db, "' or 1=1 --")).toBeNull();
  });

  it("find a store by verified hostname only", async () => {
    const s = await makeStore(db);
    expect(await storeIdByHostname(db, s.hostname)).toBe(s.id);
    expect(await storeIdByHostname(db, `${s.hostname.toUpperCase()}.`)).toBe(s.id);
    expect(await storeIdByHostname(db, s.pendingHostname)).toBeNull();
    expect(await storeIdByHostname(db, "unknown.example.test")).toBeNull();
  });

  it("resolve the demo seed's hostnames", async () => {
    const demo = await storeIdBySlug(db, "demo");
    expect(demo).not.toBeNull();
    expect(await storeIdByHostname(db, "demo.localhost")).toBe(demo);
    expect(await storeIdByHostname(db, "shop.demo.test")).toBe(demo);
    expect(await storeIdByHostname(db, "other.localhost")).toBe(await storeIdBySlug(db, "other"));
  });

  it("list stores with due outbox rows, not those whose rows are processed or not yet due", async () => {
    const due = await makeStore(db); // makeStore emits one due event; made the oldest, so it comes first
    // Test files share runners: another file's relay pass may send this store's row at any moment. Holding
    // the store's relay lock (what a second relay would meet) keeps the row due until the check is done.
    const relayLock = await other.pool.connect();
    await relayLock.query("begin");
    await relayLock.query("select pg_advisory_xact_lock(hashtext($1))", [`outbox-relay:${due.id}`]);
    try {
      await withStore(db, due.id, (tx) => tx.update(outboxEvent).set({ availableAt: new Date("2000-01-01T00:00:00Z"), processedAt: null }).where(eq(outboxEvent.storeId, tx.storeId)));
      const processed = await makeStore(db);
      const later = await makeStore(db);
      await withStore(db, processed.id, (tx) => tx.update(outboxEvent).set({ processedAt: new Date() }).where(eq(outboxEvent.storeId, tx.storeId)));
      await withStore(db, later.id, async (tx) => {
        await tx.update(outboxEvent).set({ processedAt: new Date() }).where(eq(outboxEvent.storeId, tx.storeId));
        await emit(tx, "store.reminder", {}, { availableAt: new Date(Date.now() + 3_600_000) });
      });
      const ids = await storeIdsWithPendingOutbox(db, 5000);
      expect(ids).toContain(due.id);
      expect(ids).not.toContain(processed.id);
      expect(ids).not.toContain(later.id);
    } finally {
      await relayLock.query("rollback");
      relayLock.release();
    }
  });

  it("list stores with outbox rows sent before the cutoff that name no order; not unsent, dead or an order's rows", async () => {
    const sent = await makeStore(db);
    const unsent = await makeStore(db);
    const dead = await makeStore(db);
    const ofOrder = await makeStore(db);
    const recent = await makeStore(db);
    const long = new Date("2001-01-01T00:00:00Z");
    const cutoff = new Date("2001-02-01T00:00:00Z");
    const add = (storeId: string, values: { processedAt?: Date; deadAt?: Date; payload?: Record<string, unknown> }) =>
      withStore(db, storeId, (tx) => tx.insert(outboxEvent).values({ storeId: tx.storeId, kind: "product.updated", createdAt: long, availableAt: long, ...values }));
    await add(sent.id, { processedAt: long });
    await add(unsent.id, {});
    await add(dead.id, { deadAt: long });
    await add(ofOrder.id, { processedAt: long, payload: { orderId: crypto.randomUUID() } });
    await add(recent.id, { processedAt: new Date("2001-03-01T00:00:00Z") });
    const ids = await storeIdsWithSentOutbox(db, cutoff, 5000);
    // The daily prune of another test file may have deleted the row first (it is long past the retention).
    const left = await withStore(db, sent.id, (tx) => tx.select({ id: outboxEvent.id }).from(outboxEvent).where(and(eq(outboxEvent.storeId, tx.storeId), isNotNull(outboxEvent.processedAt))));
    if (left.length > 0) expect(ids).toContain(sent.id);
    for (const s of [unsent, dead, ofOrder, recent]) expect(ids).not.toContain(s.id);
  });

  it("cannot be used to read anything but ids: app_user has no access to what they read", async () => {
    const { rows } = await db.pool.query<{ n: string }>("select count(*)::text as n from store_domain");
    expect(rows[0]?.n).toBe("0");
  });
});
