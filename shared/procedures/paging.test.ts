import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { testDb } from "../../test/harness";
import { storeWithCaller } from "../../test/procedures";
import { COUNT_CAP, hasNextPage, pageOf, totalText } from "./paging";

const db = testDb();

interface Page {
  items: { id: string }[];
  page: number;
  pageSize: number;
  total: number;
  totalCapped?: true;
}

describe("paged lists' totals", () => {
  it("are exact up to COUNT_CAP; above it, total is COUNT_CAP and totalCapped is true (absent otherwise)", () => {
    const p = { page: 1, pageSize: 20 };
    expect(pageOf([], p, 0)).toEqual({ items: [], page: 1, pageSize: 20, total: 0 });
    expect(pageOf([], p, COUNT_CAP)).toEqual({ items: [], page: 1, pageSize: 20, total: COUNT_CAP });
    expect(Object.keys(pageOf([], p, COUNT_CAP))).not.toContain("totalCapped");
    expect(pageOf([], p, COUNT_CAP + 1)).toEqual({ items: [], page: 1, pageSize: 20, total: COUNT_CAP, totalCapped: true });
    expect(pageOf([], p, 5 * COUNT_CAP)).toEqual({ items: [], page: 1, pageSize: 20, total: COUNT_CAP, totalCapped: true });
  });

  it("read as \"200+\" past the cap, and a full page past the cap has a next one", () => {
    expect(COUNT_CAP).toBe(200);
    const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ id: String(i) }));
    expect(totalText(pageOf([], { page: 1, pageSize: 20 }, 199))).toBe("199");
    expect(totalText(pageOf([], { page: 1, pageSize: 20 }, COUNT_CAP + 1))).toBe("200+");
    // Exact totals: a next page while rows remain.
    expect(hasNextPage(pageOf(rows(20), { page: 1, pageSize: 20 }, 21))).toBe(true);
    expect(hasNextPage(pageOf(rows(20), { page: 1, pageSize: 20 }, 20))).toBe(false);
    // Capped: within the counted rows as before, and beyond them while pages come back full.
    expect(hasNextPage(pageOf(rows(20), { page: 3, pageSize: 20 }, COUNT_CAP + 1))).toBe(true);
    expect(hasNextPage(pageOf(rows(20), { page: 60, pageSize: 20 }, COUNT_CAP + 1))).toBe(true);
    expect(hasNextPage(pageOf(rows(7), { page: 60, pageSize: 20 }, COUNT_CAP + 1))).toBe(false);
  });

  it("a list with more matching rows than the cap stops counting there; a filter under the cap counts exactly", async () => {
    const { store, call } = await storeWithCaller(db);
    // The fixture's own customer, plus COUNT_CAP + 1 more: three of them named Needle.
    await withStore(db, store.id, (tx) =>
      tx.$client.query(
        `insert into customer (store_id, email, first_name, created_at)
         select $1, 'p' || g || '@paging.test', case when g <= 3 then 'Needle' end, now() - g * interval '1 second'
         from generate_series(1, $2::int) g`,
        [store.id, COUNT_CAP + 1],
      ),
    );
    const all = (await call("customers.list", { pageSize: 5 })) as Page;
    expect(all).toMatchObject({ page: 1, pageSize: 5, total: COUNT_CAP, totalCapped: true });
    expect(all.items).toHaveLength(5);
    const beyond = (await call("customers.list", { page: 5000, pageSize: 5 })) as Page;
    expect(beyond).toEqual({ items: [], page: 5000, pageSize: 5, total: COUNT_CAP, totalCapped: true });

    const needles = (await call("customers.list", { query: "needle" })) as Page;
    expect(needles).toMatchObject({ total: 3 });
    expect(needles.items).toHaveLength(3);
    expect(Object.keys(needles)).not.toContain("totalCapped");
  });
});
