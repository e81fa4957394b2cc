import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { makeStore, testDb } from "../../test/harness";
import { emit } from "./outbox";
import { outboxEvent, store } from "./schema";
import { membershipOf } from "./statements";
import { withStore } from "./with-store";

const db = testDb();

describe("withStore", () => {
  it("commits the state change and its outbox event together", async () => {
    const s = await makeStore(db);
    const eventId = await withStore(db, s.id, async (tx) => {
      await tx.update(store).set({ name: "Renamed" }).where(eq(store.id, tx.storeId));
      return emit(tx, "store.updated", { field: "name" });
    });
    const after = await withStore(db, s.id, async (tx) => ({
      name: (await tx.select({ name: store.name }).from(store))[0]?.name,
      event: (await tx.select().from(outboxEvent).where(eq(outboxEvent.id, eventId)))[0],
    }));
    expect(after.name).toBe("Renamed");
    expect(after.event).toMatchObject({ storeId: s.id, kind: "store.updated", payload: { field: "name" }, processedAt: null, attempts: 0 });
  });

  it("runs a fixed opening statement inside the store in the opening message, and a read-only unit refuses writes", async () => {
    const s = await makeStore(db);
    const rows = await withStore(db, s.id, async (_tx, openingRows) => openingRows, { opening: membershipOf(s.ownerUserId) });
    expect(rows).toEqual([expect.objectContaining({ id: s.id, name: s.name, user_id: s.ownerUserId, role: "owner" })]);
    const refused = await withStore(db, s.id, (tx) => tx.update(store).set({ name: "Nope" }).where(eq(store.id, tx.storeId)), { readOnly: true }).then(
      () => "written",
      (e: { cause?: { code?: string } }) => e.cause?.code,
    );
    expect(refused).toBe("25006");
  });

  it("rolls back everything, outbox row included, when the callback throws", async () => {
    const s = await makeStore(db);
    let eventId: string | undefined;
    await expect(
      withStore(db, s.id, async (tx) => {
        await tx.update(store).set({ name: "Should not stick" }).where(eq(store.id, tx.storeId));
        eventId = await emit(tx, "store.updated", { field: "name" });
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(eventId).toBeDefined();
    const after = await withStore(db, s.id, async (tx) => ({
      name: (await tx.select({ name: store.name }).from(store))[0]?.name,
      events: await tx.select().from(outboxEvent).where(eq(outboxEvent.id, eventId!)),
    }));
    expect(after.name).toBe(s.name);
    expect(after.events).toHaveLength(0);
  });

  it("rolls back when a statement fails, and the connection stays usable", async () => {
    const s = await makeStore(db);
    await expect(
      withStore(db, s.id, async (tx) => {
        await emit(tx, "store.updated");
        await tx.insert(store).values({ id: tx.storeId, slug: "Not A Valid Slug", name: "x", currency: "INR" });
      }),
    ).rejects.toThrow();
    const pending = await withStore(db, s.id, (tx) => tx.select().from(outboxEvent).where(eq(outboxEvent.kind, "store.updated")));
    expect(pending).toHaveLength(0);
  });

  it("keeps the store setting inside its transaction only", async () => {
    const s = await makeStore(db);
    await withStore(db, s.id, async (tx) => {
      const { rows } = await tx.$client.query<{ v: string }>("select current_setting('app.store_id', true) as v");
      expect(rows[0]?.v).toBe(s.id);
    });
    // The same pooled connection, after commit: no store, so the store row is invisible again.
    const { rows } = await db.pool.query<{ v: string | null; n: string }>(
      "select nullif(current_setting('app.store_id', true), '') as v, (select count(*) from store)::text as n",
    );
    expect(rows[0]).toEqual({ v: null, n: "0" });
  });

  it("keeps concurrent units of different stores apart", async () => {
    const [a, b] = await Promise.all([makeStore(db), makeStore(db)]);
    const names = await Promise.all(
      [a, b, a, b].map((s) => withStore(db, s.id, async (tx) => (await tx.select({ id: store.id }).from(store)).map((r) => r.id))),
    );
    expect(names).toEqual([[a.id], [b.id], [a.id], [b.id]]);
  });

  it("refuses a store id that is not a UUID, before touching the database", async () => {
    await expect(withStore(db, "1'; drop table store; --", async () => 1)).rejects.toThrow(TypeError);
  });

  it("emit refuses a malformed event kind (database check)", async () => {
    const s = await makeStore(db);
    await expect(withStore(db, s.id, (tx) => emit(tx, "NotAKind"))).rejects.toThrow();
  });
});
