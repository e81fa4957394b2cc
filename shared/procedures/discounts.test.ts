import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { testDb } from "../../test/harness";
import { failureText, outboxPayloads, storeWithCaller } from "../../test/procedures";

const db = testDb();

interface Discount {
  id: string;
  code: string;
  kind: string;
  value: number;
  startsAt: Date;
  endsAt: Date | null;
  usageLimit: number | null;
  usageCount: number;
  status: string;
  state: string;
}
interface Page {
  items: Discount[];
  page: number;
  pageSize: number;
  total: number;
}

const HOUR = 3_600_000;
const iso = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();

const failure = failureText;

const outbox = (storeId: string, kind: string) => outboxPayloads(db, storeId, kind);

describe("discounts procedures", () => {
  it("creates a code upper-cased and live, emits discount.created, and refuses a duplicate with CONFLICT naming code", async () => {
    const { store, call } = await storeWithCaller(db);
    const d = (await call("discounts.create", { code: "  diwali-25 ", kind: "percentage", value: 25 })) as Discount;
    expect(d).toMatchObject({ code: "DIWALI-25", kind: "percentage", value: 25, endsAt: null, usageLimit: null, usageCount: 0 });
    expect(d).toMatchObject({ status: "active", state: "live" });
    expect(await outbox(store.id, "discount.created")).toEqual([{ discountId: d.id, code: "DIWALI-25" }]);
    expect(await failure(call("discounts.create", { code: "Diwali-25", kind: "fixed_amount", value: 5000 }))).toBe("CONFLICT code");
  });

  it("derives live, scheduled, expired, used_up and disabled at read time", async () => {
    const { store, call } = await storeWithCaller(db);
    const make = (code: string, extra: Record<string, unknown>) =>
      call("discounts.create", { code, kind: "fixed_amount", value: 10000, ...extra }) as Promise<Discount>;
    const live = await make("Q-LIVE", { endsAt: iso(HOUR), usageLimit: 2 });
    const scheduled = await make("Q-SOON", { startsAt: iso(HOUR) });
    const expired = await make("Q-GONE", { startsAt: iso(-2 * HOUR), endsAt: iso(-HOUR) });
    const usedUp = await make("Q-USED", { usageLimit: 1 });
    const off = await make("Q-OFF", {});
    expect([live.state, scheduled.state, expired.state, usedUp.state, off.state]).toEqual(["live", "scheduled", "expired", "live", "live"]);
    await withStore(db, store.id, (tx) => tx.$client.query("update discount set usage_count = 1 where id = $1", [usedUp.id]));
    const disabled = (await call("discounts.disable", { id: off.id })) as Discount;
    expect(disabled).toMatchObject({ status: "disabled", state: "disabled" });
    const again = (await call("discounts.disable", { id: off.id })) as Discount;
    expect(again.state).toBe("disabled");
    expect(await outbox(store.id, "discount.disabled")).toEqual([{ discountId: off.id }]);

    const listed = (await call("discounts.list", { pageSize: 100 })) as Page;
    const states = Object.fromEntries(listed.items.map((d) => [d.code, d.state]));
    expect(states).toMatchObject({ "Q-LIVE": "live", "Q-SOON": "scheduled", "Q-GONE": "expired", "Q-USED": "used_up", "Q-OFF": "disabled" });
    expect(listed.total).toBe(6);
    expect(((await call("discounts.list", { status: "disabled" })) as Page).items.map((d) => d.code)).toEqual(["Q-OFF"]);
    expect(((await call("discounts.list", { query: "q-" })) as Page).total).toBe(5);
  });

  it("pages the list in one query per page", async () => {
    const { call } = await storeWithCaller(db);
    for (let i = 1; i <= 5; i++) await call("discounts.create", { code: `PAGE${i}`, kind: "percentage", value: i });
    const first = (await call("discounts.list", { page: 1, pageSize: 2, query: "page" })) as Page;
    expect(first).toMatchObject({ page: 1, pageSize: 2, total: 5 });
    expect(first.items.map((d) => d.code)).toEqual(["PAGE5", "PAGE4"]);
    expect(((await call("discounts.list", { page: 3, pageSize: 2, query: "page" })) as Page).items.map((d) => d.code)).toEqual(["PAGE1"]);
    expect(await call("discounts.list", { page: 9, pageSize: 2, query: "page" })).toMatchObject({ items: [], total: 5 });
  });

  it("answers 400 naming the field for bad input", async () => {
    const { call } = await storeWithCaller(db);
    const create = (input: Record<string, unknown>) => failure(call("discounts.create", { code: "GOOD1", kind: "percentage", value: 10, ...input }));
    expect(await create({ code: "ab" })).toBe("BAD_REQUEST code");
    expect(await create({ code: "-ABC" })).toBe("BAD_REQUEST code");
    expect(await create({ value: 101 })).toBe("BAD_REQUEST value");
    expect(await create({ value: 0 })).toBe("BAD_REQUEST value");
    expect(await create({ value: 2.5 })).toBe("BAD_REQUEST value");
    expect(await create({ kind: "bogo" })).toBe("BAD_REQUEST kind");
    expect(await create({ startsAt: "tomorrow" })).toBe("BAD_REQUEST startsAt");
    expect(await create({ startsAt: iso(2 * HOUR), endsAt: iso(HOUR) })).toBe("BAD_REQUEST endsAt");
    expect(await create({ endsAt: iso(-HOUR) })).toBe("BAD_REQUEST endsAt");
    expect(await create({ usageLimit: 0 })).toBe("BAD_REQUEST usageLimit");
    expect(await create({ extra: true })).toMatch(/^BAD_REQUEST/);
    expect(await failure(call("discounts.create", { code: "FLAT1", kind: "fixed_amount", value: 250000 }))).toBe("ok");
  });

  it("updates fields, validates the merged result, keeps the kind, and emits discount.updated", async () => {
    const { store, call } = await storeWithCaller(db);
    const d = (await call("discounts.create", { code: "SALE10", kind: "percentage", value: 10, startsAt: iso(-HOUR), endsAt: iso(HOUR) })) as Discount;
    const updated = (await call("discounts.update", { id: d.id, code: "sale20", value: 20, endsAt: null, usageLimit: 50 })) as Discount;
    expect(updated).toMatchObject({ code: "SALE20", kind: "percentage", value: 20, endsAt: null, usageLimit: 50, state: "live" });
    const cleared = (await call("discounts.update", { id: d.id, usageLimit: null })) as Discount;
    expect(cleared.usageLimit).toBeNull();
    expect(await outbox(store.id, "discount.updated")).toEqual([
      { discountId: d.id, fields: ["code", "value", "endsAt", "usageLimit"] },
      { discountId: d.id, fields: ["usageLimit"] },
    ]);

    expect(await failure(call("discounts.update", { id: d.id, value: 150 }))).toBe("BAD_REQUEST value");
    expect(await failure(call("discounts.update", { id: d.id, endsAt: iso(-2 * HOUR) }))).toBe("BAD_REQUEST endsAt");
    await call("discounts.update", { id: d.id, endsAt: iso(HOUR) });
    expect(await failure(call("discounts.update", { id: d.id, startsAt: iso(2 * HOUR) }))).toBe("BAD_REQUEST startsAt");
    expect(await failure(call("discounts.update", { id: d.id, kind: "fixed_amount" }))).toMatch(/^BAD_REQUEST/);
    const other = (await call("discounts.create", { code: "OTHER1", kind: "fixed_amount", value: 500 })) as Discount;
    expect(await failure(call("discounts.update", { id: other.id, code: "SALE20" }))).toBe("CONFLICT code");
    expect(((await call("discounts.update", { id: other.id, value: 100_000 })) as Discount).value).toBe(100_000);
  });

  it("answers NOT_FOUND for another store's discount and leaves it unchanged", async () => {
    const a = await storeWithCaller(db);
    const b = await storeWithCaller(db);
    const theirs = (await b.call("discounts.create", { code: "THEIRS", kind: "percentage", value: 5 })) as Discount;
    expect(await failure(a.call("discounts.update", { id: theirs.id, value: 50 }))).toBe("NOT_FOUND");
    expect(await failure(a.call("discounts.disable", { id: theirs.id }))).toBe("NOT_FOUND");
    expect(await failure(a.call("discounts.update", { id: crypto.randomUUID(), value: 50 }))).toBe("NOT_FOUND");
    expect(((await a.call("discounts.list", { query: "THEIRS" })) as Page).total).toBe(0);
    const [still] = ((await b.call("discounts.list", { query: "THEIRS" })) as Page).items;
    expect(still).toMatchObject({ value: 5, status: "active", state: "live" });
    expect(await outbox(a.store.id, "discount.updated")).toEqual([]);
    expect(await outbox(a.store.id, "discount.disabled")).toEqual([]);
  });

  it("lets staff read discounts but not change them", async () => {
    const { call } = await storeWithCaller(db, "staff");
    expect(((await call("discounts.list", {})) as Page).total).toBe(1);
    expect(await failure(call("discounts.create", { code: "STAFF1", kind: "percentage", value: 5 }))).toBe("FORBIDDEN");
  });
});
