import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { testDb } from "../../test/harness";
import { orderShop, placeTestOrder } from "../../test/orders";
import { mulberry32 } from "../../test/prng";
import { callerFor, failureText, storeWithCaller, type Caller } from "../../test/procedures";
import { COUNT_CAP } from "./paging";
import { MAX_PREFIX, MAX_SEARCH_WORDS, searchWords } from "./search";

/**
 * Word-prefix search (migration 0030, ./search.ts) through the procedures, against real Postgres: what it
 * finds, the tokens kept by every kind of write, pages and counts of common and rare words alike.
 */
const db = testDb();

interface Page {
  items: { id: string; firstName?: string | null; number?: number }[];
  total: number;
  totalCapped?: true;
}

const names = async (call: Caller, query: string) =>
  ((await call("customers.list", { query, pageSize: 100 })) as Page).items.map((c) => c.firstName);

/** Customers inserted directly (created a second apart, the first newest), as an import would write them. */
async function insertCustomers(storeId: string, rows: { email: string; first: string; last?: string; phone?: string }[]) {
  await withStore(db, storeId, (tx) =>
    tx.$client.query(
      `insert into customer (store_id, email, first_name, last_name, phone, created_at)
       select $1, r.email, r.first, r.last, r.phone, now() - r.i * interval '1 second'
       from json_to_recordset($2::json) as r(email text, first text, last text, phone text, i int)`,
      [storeId, JSON.stringify(rows.map((r, i) => ({ ...r, i })))],
    ),
  );
}

describe("search words", () => {
  it("split at ASCII punctuation and spaces only, keeping letters of any script and digits; at most MAX_SEARCH_WORDS", () => {
    expect(searchWords("Priya.SHARMA+tag@Example.co.in")).toEqual(["Priya", "SHARMA", "tag", "Example", "co", "in"]);
    expect(searchWords("  प्रिया  Ünal_42 ")).toEqual(["प्रिया", "Ünal", "42"]);
    expect(searchWords("%_-@.")).toEqual([]);
    expect(searchWords("a b c d e f g h")).toHaveLength(MAX_SEARCH_WORDS);
  });
});

describe("customers.list search", () => {
  it("finds the customers with a word beginning with each of the query's words, in the name, email or phone", async () => {
    const { store, call } = await storeWithCaller(db);
    await insertCustomers(store.id, [
      { email: "priya.sharma@mail.test", first: "Priya", last: "Sharma", phone: "+919876543210" },
      { email: "rahul@sharmaji.test", first: "Rahul", last: "Verma" },
      { email: "asha@example.test", first: "Asha", last: "Iyer", phone: "+14155550100" },
      { email: "anand@example.test", first: "प्रिया", last: "Nair" },
    ]);
    expect(await names(call, "sharma")).toEqual(["Priya", "Rahul"]);
    expect(await names(call, "SHAR pri")).toEqual(["Priya"]);
    expect(await names(call, "priya sharma@mail")).toEqual(["Priya"]);
    expect(await names(call, "harma")).toEqual([]);
    expect(await names(call, "प्रि")).toEqual(["प्रिया"]);
    // The phone by its digits, with or without the country code; "+" and spaces are no part of a word.
    expect(await names(call, "98765")).toEqual(["Priya"]);
    expect(await names(call, "+91 98765")).toEqual(["Priya"]);
    expect(await names(call, "1415")).toEqual(["Asha"]);
    expect(await names(call, "example iyer")).toEqual(["Asha"]);
    expect(await names(call, "-")).toEqual([]);
    expect(((await call("customers.list", { query: "sharma" })) as Page).total).toBe(2);
  });

  it("follows every write: an edit replaces the words, a delete takes them, a new customer is found at once", async () => {
    const { store, call } = await storeWithCaller(db);
    const c = (await call("customers.create", { email: "old.name@mail.test", firstName: "Kavya" })) as { id: string };
    expect(await names(call, "old")).toEqual(["Kavya"]);
    await call("customers.update", { id: c.id, email: "new.name@mail.test", lastName: "Rao", phone: "+919812345678" });
    expect(await names(call, "old")).toEqual([]);
    expect(await names(call, "new rao 9812")).toEqual(["Kavya"]);
    await call("customers.delete", { id: c.id });
    expect(await names(call, "new")).toEqual([]);
    const left = await withStore(db, store.id, (tx) => tx.$client.query("select 1 from customer_search_token where customer_id = $1", [c.id]));
    expect(left.rowCount).toBe(0);
  });

  it("answers as a model of word-prefix search does, on generated customers and queries", async () => {
    const seed = 19;
    const random = mulberry32(seed);
    const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
    const parts = ["ab", "Abc", "b", "BA", "abd", "c9", "9c", "a"];
    const seps = [".", "-", "_", " ", "+", "'"];
    const text = (n: number) => Array.from({ length: n }, () => pick(parts)).map((p, i) => (i ? pick(seps) : "") + p).join("");
    const { store, call } = await storeWithCaller(db);
    const rows = Array.from({ length: 40 }, (_, i) => ({ email: `${text(2)}${i}@${pick(parts)}.test`, first: `g${i}`, last: text(1 + Math.floor(random() * 3)) }));
    await insertCustomers(store.id, rows);
    // The model: lower-case ASCII, split at every non-alphanumeric ASCII character.
    const wordsOf = (s: string) => s.toLowerCase().split(/[^0-9a-z]+/).filter(Boolean);
    for (let q = 0; q < 40; q++) {
      const query = text(1 + Math.floor(random() * 2));
      const want = rows
        .filter((r) => {
          const own = [...wordsOf(r.first), ...wordsOf(r.last), ...wordsOf(r.email)];
          return searchWords(query).every((w) => own.some((o) => o.startsWith(w.toLowerCase())));
        })
        .map((r) => r.first);
      // (The store's fixture customer is no part of the model.)
      const found = (await names(call, query)).filter((n) => n !== "Fixture");
      expect({ seed, query, found }).toEqual({ seed, query, found: want });
    }
  });

  it("another store's customers are never found, whatever the query", async () => {
    const a = await storeWithCaller(db);
    const b = await storeWithCaller(db);
    await insertCustomers(b.store.id, [{ email: "only.b@elsewhere.test", first: "Bee" }]);
    expect(await names(b.call, "only")).toEqual(["Bee"]);
    expect(await names(a.call, "only")).toEqual([]);
    expect(await names(a.call, "elsewhere bee")).toEqual([]);
  });

  it("a common word pages in the list's order and its count stops at the cap; a further word is checked on its rows", async () => {
    const { store, call } = await storeWithCaller(db);
    // More customers than COUNT_CAP have the word "common"; every 7th also "rare" (fewer than the cap);
    // names number them newest first.
    const n = 1050;
    await insertCustomers(
      store.id,
      Array.from({ length: n }, (_, i) => ({ email: `c${i}@common.test`, first: `n${i}`, ...(i % 7 === 0 ? { last: "Rare" } : {}) })),
    );
    const common = (await call("customers.list", { query: "common", pageSize: 5, page: 3 })) as Page;
    expect(common.items.map((c) => c.firstName)).toEqual(["n10", "n11", "n12", "n13", "n14"]);
    expect(common).toMatchObject({ total: COUNT_CAP, totalCapped: true });
    // Two words: the longer one ("common") leads; the other is checked on its rows.
    const both = (await call("customers.list", { query: "rare common", pageSize: 3, page: 2 })) as Page;
    expect(both.items.map((c) => c.firstName)).toEqual(["n21", "n28", "n35"]);
    expect(both.total).toBe(Math.ceil(n / 7));
    expect(Object.keys(both)).not.toContain("totalCapped");
  });

  it("a customer with several words beginning alike is found and counted once", async () => {
    const { store, call } = await storeWithCaller(db);
    // 150 customers (under COUNT_CAP) with ten words beginning with "zz" each: one "zz" token each, so
    // 1,500 "zz…" words count as 150.
    const words = Array.from({ length: 10 }, (_, i) => `zz${i}`).join(" ");
    await insertCustomers(store.id, Array.from({ length: 150 }, (_, i) => ({ email: `m${i}@many.test`, first: `m${i}`, last: words })));
    const found = (await call("customers.list", { query: "zz", pageSize: 2 })) as Page;
    expect(found.total).toBe(150);
    expect(found.items.map((c) => c.firstName)).toEqual(["m0", "m1"]);
  });
});

describe("orders.list search", () => {
  it("finds orders by the beginnings of the email's words, newest first, and follows an email's change", async () => {
    const { s, sql } = await orderShop(db);
    const call = callerFor(db, s.ownerUserId, s.id);
    for (const [i, email] of ["kiran@alpha.test", "kiran.rao@beta.test", "dev@alpha.test"].entries()) {
      await placeTestOrder(db, s, { email, at: new Date(Date.UTC(2025, 9, i + 1, 6)) });
    }
    const numbers = async (query: string) => ((await call("orders.list", { query })) as Page).items.map((o) => o.number);
    expect(await numbers("kiran")).toEqual([1003, 1002]);
    expect(await numbers("alp")).toEqual([1004, 1002]);
    expect(await numbers("kiran alpha")).toEqual([1002]);
    expect(await numbers("alpha kiran")).toEqual([1002]);
    // A number finds that order and the orders with an email word beginning with it.
    await placeTestOrder(db, s, { email: "1002nd.buyer@alpha.test", at: new Date(Date.UTC(2025, 9, 4, 6)) });
    expect(await numbers("1002")).toEqual([1005, 1002]);
    expect(await numbers("#1002")).toEqual([1002]);
    // Beside another filter, each order it finds is checked.
    expect(((await call("orders.list", { query: "kir", status: "open" })) as Page).items.map((o) => o.number)).toEqual([1003, 1002]);
    // A word longer than the kept prefixes finds the rows with its first MAX_PREFIX characters.
    const long = "x".repeat(MAX_PREFIX + 8);
    await placeTestOrder(db, s, { email: `${long}@alpha.test`, at: new Date(Date.UTC(2025, 9, 9, 6)) });
    expect(await numbers(long)).toEqual([1006]);
    expect(await numbers(`${"x".repeat(MAX_PREFIX)}y`)).toEqual([1006]);
    // An email changed (as a correction by hand would): the old words go, the new ones are found.
    await sql("update shop_order set email = 'neha@gamma.test' where number = 1003");
    expect(await numbers("rao")).toEqual([]);
    expect(await numbers("neha gamma")).toEqual([1003]);
    const left = await sql<{ n: number }>("select count(*)::int as n from order_search_token where token = 'rao'");
    expect(left[0]!.n).toBe(0);
  });

  it("hostile queries are answered (punctuation only separates words) or refused with the field named (a NUL, at every door), never a server error", async () => {
    const { s } = await orderShop(db);
    const call = callerFor(db, s.ownerUserId, s.id);
    for (const key of ["orders.list", "customers.list"]) {
      for (const query of ["%_\\", "'; drop table shop_order; --", "😀 \u0301 ́x", "a".repeat(200), "a ".repeat(100), "\uFFFF\uFFFE", "#", "-1", "99999999999"]) {
        const page = (await call(key, { query })) as Page;
        expect({ key, query, ok: Array.isArray(page.items) }).toEqual({ key, query, ok: true });
      }
      expect(await failureText(call(key, { query: "nul\u0000byte" }))).toBe("BAD_REQUEST query");
      expect(await failureText(call(key, { query: "a".repeat(201) }))).toBe("BAD_REQUEST query");
      expect(await failureText(call(key, { query: 42 }))).toBe("BAD_REQUEST query");
    }
  });
});
