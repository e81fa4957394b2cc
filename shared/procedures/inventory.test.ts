import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { isAppError } from "#shared/core/errors";
import { testDb } from "../../test/harness";
import { storeWithCaller, type Caller } from "../../test/procedures";

const db = testDb();

interface Location {
  id: string;
  name: string;
  sellsOnline: boolean;
  city: string | null;
}
interface Level {
  variantId: string;
  productId: string;
  productTitle: string;
  sku: string | null;
  locationId: string;
  locationName: string;
  onHand: number;
  reserved: number;
  available: number;
}
interface Adjusted {
  onHand: number;
  reserved: number;
  available: number;
  restocked: boolean;
}
interface Page<T> {
  items: T[];
  page: number;
  pageSize: number;
  total: number;
}

const failure = (p: Promise<unknown>) =>
  p.then(
    () => ({ code: "ok", path: undefined, message: "" }),
    (e: unknown) => {
      if (!isAppError(e)) throw e;
      const issues = e.data?.issues as { path: string }[] | undefined;
      return { code: e.code, path: issues?.[0]?.path, message: e.message };
    },
  );

async function setup(call: Caller, sku = "TEE-1") {
  const product = (await call("products.create", { title: "Linen Tee", variants: [{ sku, priceMinor: 99900 }] })) as {
    id: string;
    variants: { id: string }[];
  };
  const online = (await call("locations.create", { name: "Mumbai warehouse", city: "Mumbai" })) as Location;
  const offline = (await call("locations.create", { name: "Pune counter", sellsOnline: false })) as Location;
  return { productId: product.id, variantId: product.variants[0]!.id, online, offline };
}

const rowsOf = <T>(storeId: string, text: string, values: unknown[] = []) =>
  withStore(db, storeId, async (tx) => (await tx.$client.query(text, values)).rows as T[]);

const eventsOf = (storeId: string, kind: string) =>
  rowsOf<{ payload: Record<string, unknown> }>(storeId, "select payload from outbox_event where kind = $1 order by created_at, id", [kind]).then(
    (rows) => rows.map((r) => r.payload),
  );

describe("locations procedures", () => {
  it("creates locations, lists them by name, refuses a duplicate name and emits location.created", async () => {
    const { store, call } = await storeWithCaller(db, "staff");
    const { online, offline } = await setup(call);
    expect(online).toMatchObject({ name: "Mumbai warehouse", sellsOnline: true, city: "Mumbai" });
    expect(offline).toMatchObject({ sellsOnline: false, city: null });
    const listed = (await call("locations.list")) as { items: Location[] };
    expect(listed.items.map((l) => l.name)).toEqual(["Fixture warehouse", "Mumbai warehouse", "Pune counter"]);
    expect(await failure(call("locations.create", { name: " Mumbai warehouse " }))).toMatchObject({ code: "CONFLICT", path: "name" });
    expect(await failure(call("locations.create", { name: "  " }))).toMatchObject({ code: "BAD_REQUEST", path: "name" });
    expect(await failure(call("locations.create", { name: "X", city: "c".repeat(121) }))).toMatchObject({ code: "BAD_REQUEST", path: "city" });
    expect((await eventsOf(store.id, "location.created")).map((p) => p.locationId)).toEqual([online.id, offline.id]);
  });
});

describe("inventory procedures", () => {
  it("adjusts stock, records the adjustment, emits inventory.adjusted and lists levels with filters", async () => {
    const { store, call } = await storeWithCaller(db, "staff");
    const { productId, variantId, online, offline } = await setup(call);
    const first = (await call("inventory.adjust", { variantId, locationId: online.id, delta: 7, reason: "received", note: "PO 12" })) as Adjusted;
    expect(first).toEqual({ variantId, locationId: online.id, onHand: 7, reserved: 0, available: 7, restocked: true });
    const second = (await call("inventory.adjust", { variantId, locationId: online.id, delta: -2, reason: "damaged" })) as Adjusted;
    expect(second).toMatchObject({ onHand: 5, available: 5, restocked: false });
    await call("inventory.adjust", { variantId, locationId: offline.id, delta: 3, reason: "recount" });

    const adjustments = await rowsOf<{ delta: number; on_hand_after: number; reason: string; note: string | null; member_id: string }>(
      store.id,
      "select delta, on_hand_after, reason, note, member_id from inventory_adjustment where variant_id = $1 order by created_at",
      [variantId],
    );
    expect(adjustments.map((a) => [a.delta, a.on_hand_after, a.reason, a.note])).toEqual([
      [7, 7, "received", "PO 12"],
      [-2, 5, "damaged", null],
      [3, 3, "recount", null],
    ]);
    expect(new Set(adjustments.map((a) => a.member_id)).size).toBe(1);
    expect(await eventsOf(store.id, "inventory.adjusted")).toEqual([
      { variantId, locationId: online.id, delta: 7, onHandAfter: 7, reason: "received" },
      { variantId, locationId: online.id, delta: -2, onHandAfter: 5, reason: "damaged" },
      { variantId, locationId: offline.id, delta: 3, onHandAfter: 3, reason: "recount" },
    ]);

    const byVariant = (await call("inventory.levels", { variantId })) as Page<Level>;
    expect(byVariant.total).toBe(2);
    expect(byVariant.items.map((l) => [l.locationName, l.onHand, l.available, l.productTitle, l.sku, l.productId])).toEqual([
      ["Mumbai warehouse", 5, 5, "Linen Tee", "TEE-1", productId],
      ["Pune counter", 3, 3, "Linen Tee", "TEE-1", productId],
    ]);
    expect(((await call("inventory.levels", { locationId: offline.id })) as Page<Level>).items).toHaveLength(1);
    expect(((await call("inventory.levels", { productId })) as Page<Level>).total).toBe(2);
    expect(((await call("inventory.levels", { query: "tee-1" })) as Page<Level>).total).toBe(2);
    expect(((await call("inventory.levels", { query: "linen" })) as Page<Level>).total).toBe(2);
    expect(((await call("inventory.levels", { query: "100%" })) as Page<Level>).total).toBe(0);
    const all = (await call("inventory.levels", { pageSize: 2 })) as Page<Level>;
    expect(all).toMatchObject({ total: 3, page: 1, pageSize: 2 });
    expect(((await call("inventory.levels", { pageSize: 2, page: 5 })) as Page<Level>).total).toBe(3);
  });

  it("emits inventory.restocked only when online availability goes from zero or less to above zero", async () => {
    const { store, call } = await storeWithCaller(db);
    const { productId, variantId, online, offline } = await setup(call);
    const adjust = async (locationId: string, delta: number) =>
      ((await call("inventory.adjust", { variantId, locationId, delta, reason: "correction" })) as Adjusted).restocked;
    expect(await adjust(offline.id, 5)).toBe(false);
    expect(await eventsOf(store.id, "inventory.restocked")).toEqual([]);
    expect(await adjust(online.id, 3)).toBe(true);
    expect(await adjust(online.id, 2)).toBe(false);
    expect(await adjust(online.id, -5)).toBe(false);
    expect(await adjust(offline.id, 4)).toBe(false);
    expect(await adjust(online.id, 1)).toBe(true);
    // Reserved stock is not available: with 3 on hand and 3 reserved, one more unit is a restock.
    await adjust(online.id, 2);
    await withStore(db, store.id, (tx) =>
      tx.$client.query("update inventory_level set reserved = 3 where variant_id = $1 and location_id = $2", [variantId, online.id]),
    );
    expect(await adjust(online.id, 1)).toBe(true);
    expect(await eventsOf(store.id, "inventory.restocked")).toEqual([
      { variantId, productId, available: 3 },
      { variantId, productId, available: 1 },
      { variantId, productId, available: 1 },
    ]);
  });

  it("refuses to take on-hand below zero and writes nothing", async () => {
    const { store, call } = await storeWithCaller(db);
    const { variantId, online } = await setup(call);
    await call("inventory.adjust", { variantId, locationId: online.id, delta: 1, reason: "received" });
    const count = () =>
      rowsOf<{ levels: number; adjustments: number; events: number }>(
        store.id,
        `select (select sum(on_hand)::int from inventory_level where variant_id = $1) as levels,
                (select count(*)::int from inventory_adjustment where variant_id = $1) as adjustments,
                (select count(*)::int from outbox_event) as events`,
        [variantId],
      );
    const before = await count();
    const refused = await failure(call("inventory.adjust", { variantId, locationId: online.id, delta: -2, reason: "shrinkage" }));
    expect(refused).toMatchObject({ code: "BAD_REQUEST", path: "delta" });
    expect(refused.message).toContain("below zero (on hand 1)");
    const fresh = (await call("locations.create", { name: "Empty" })) as Location;
    expect(await failure(call("inventory.adjust", { variantId, locationId: fresh.id, delta: -1, reason: "shrinkage" }))).toMatchObject({
      path: "delta",
    });
    const after = await count();
    expect(after).toEqual([{ ...before[0]!, events: before[0]!.events + 1 }]);
  });

  it("loses no update when adjusts of one variant run concurrently", async () => {
    const { store, call } = await storeWithCaller(db);
    const { variantId, online } = await setup(call);
    const results = (await Promise.all(
      Array.from({ length: 10 }, () => call("inventory.adjust", { variantId, locationId: online.id, delta: 1, reason: "received" })),
    )) as Adjusted[];
    expect(results.map((r) => r.onHand).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(results.filter((r) => r.restocked)).toHaveLength(1);
    const levels = (await call("inventory.levels", { variantId })) as Page<Level>;
    expect(levels.items.map((l) => l.onHand)).toEqual([10]);
    expect(await eventsOf(store.id, "inventory.restocked")).toHaveLength(1);
  });

  it("emits one restock when concurrent adjusts fill several online locations at once", async () => {
    const { store, call } = await storeWithCaller(db);
    const { variantId, online } = await setup(call);
    const second = (await call("locations.create", { name: "Chennai warehouse" })) as Location;
    const results = (await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        call("inventory.adjust", { variantId, locationId: i % 2 ? second.id : online.id, delta: 1, reason: "received" }),
      ),
    )) as Adjusted[];
    expect(results.filter((r) => r.restocked)).toHaveLength(1);
    expect(await eventsOf(store.id, "inventory.restocked")).toHaveLength(1);
    expect(((await call("inventory.levels", { variantId })) as Page<Level>).items.map((l) => l.onHand)).toEqual([4, 4]);
  });

  it("answers 400 naming the field for bad input", async () => {
    const { call } = await storeWithCaller(db);
    const { variantId, online } = await setup(call);
    const base = { variantId, locationId: online.id, delta: 1, reason: "received" };
    expect(await failure(call("inventory.adjust", { ...base, delta: 0 }))).toMatchObject({ code: "BAD_REQUEST", path: "delta" });
    expect(await failure(call("inventory.adjust", { ...base, delta: 1_000_001 }))).toMatchObject({ code: "BAD_REQUEST", path: "delta" });
    expect(await failure(call("inventory.adjust", { ...base, delta: 1.5 }))).toMatchObject({ code: "BAD_REQUEST", path: "delta" });
    expect(await failure(call("inventory.adjust", { ...base, reason: "stolen" }))).toMatchObject({ code: "BAD_REQUEST", path: "reason" });
    expect(await failure(call("inventory.adjust", { ...base, variantId: "nope" }))).toMatchObject({ code: "BAD_REQUEST", path: "variantId" });
    expect(await failure(call("inventory.adjust", { ...base, note: "n".repeat(501) }))).toMatchObject({ code: "BAD_REQUEST", path: "note" });
    expect(await failure(call("inventory.adjust", { ...base, storeId: crypto.randomUUID() }))).toMatchObject({ code: "BAD_REQUEST" });
    expect(await failure(call("inventory.levels", { locationId: "x" }))).toMatchObject({ code: "BAD_REQUEST", path: "locationId" });
    expect(await failure(call("inventory.adjust", { ...base, variantId: crypto.randomUUID() }))).toMatchObject({ code: "NOT_FOUND" });
  });

  it("treats another store's variants and locations as not found and leaves them unchanged", async () => {
    const a = await storeWithCaller(db);
    const b = await storeWithCaller(db);
    const mine = await setup(a.call, "A-1");
    const theirs = await setup(b.call, "B-1");
    await b.call("inventory.adjust", { variantId: theirs.variantId, locationId: theirs.online.id, delta: 4, reason: "received" });
    const snapshot = () =>
      rowsOf(b.store.id, "select variant_id, location_id, on_hand, reserved, updated_at from inventory_level order by id").then(async (levels) => ({
        levels,
        adjustments: await rowsOf(b.store.id, "select count(*)::int as n from inventory_adjustment"),
        events: await rowsOf(b.store.id, "select count(*)::int as n from outbox_event"),
      }));
    const before = await snapshot();
    const probes = [
      { variantId: theirs.variantId, locationId: theirs.online.id },
      { variantId: theirs.variantId, locationId: mine.online.id },
      { variantId: mine.variantId, locationId: theirs.online.id },
    ];
    for (const ids of probes) {
      const refused = await failure(a.call("inventory.adjust", { ...ids, delta: 1, reason: "received" }));
      expect(refused.code).toBe("NOT_FOUND");
    }
    expect(((await a.call("inventory.levels", { variantId: theirs.variantId })) as Page<Level>).total).toBe(0);
    expect(((await a.call("inventory.levels", { locationId: theirs.online.id })) as Page<Level>).total).toBe(0);
    expect(await snapshot()).toEqual(before);
    expect(((await a.call("inventory.levels", { variantId: mine.variantId })) as Page<Level>).total).toBe(0);
  });
});
