import { describe, expect, it } from "vitest";
import { isAppError } from "#shared/core/errors";
import { testDb } from "../../test/harness";
import { orderShop, placeTestOrder } from "../../test/orders";
import { addMember, callerFor, outboxPayloads, storeWithCaller } from "../../test/procedures";

const db = testDb();

interface Customer {
  id: string;
  email: string | null;
  phone: string | null;
  firstName: string | null;
  lastName: string | null;
  city: string | null;
  note: string | null;
  acceptsMarketing: boolean;
  createdAt: Date;
  updatedAt: Date;
}
interface Page {
  items: Record<string, unknown>[];
  page: number;
  pageSize: number;
  total: number;
}

const SUMMARY_KEYS = ["acceptsMarketing", "createdAt", "firstName", "id", "lastName", "marketingConsent", "updatedAt"];

const failure = (p: Promise<unknown>) =>
  p.then(
    () => ({ code: "ok", path: undefined }),
    (e: unknown) => {
      if (!isAppError(e)) throw e;
      const issues = e.data?.issues as { path: string }[] | undefined;
      return { code: e.code, path: issues?.[0]?.path };
    },
  );

const eventsOf = (storeId: string, kind: string) => outboxPayloads(db, storeId, kind);

describe("customers procedures", () => {
  it("creates a customer, reads it with contact details and emits customer.created", async () => {
    const { store, call } = await storeWithCaller(db, "staff");
    const made = (await call("customers.create", {
      email: "asha@example.in",
      phone: "+919876543210",
      firstName: " Asha ",
      lastName: "Rao",
      city: "Bengaluru",
      note: "Prefers evening delivery",
    })) as Customer;
    expect(made).toMatchObject({ email: "asha@example.in", phone: "+919876543210", firstName: "Asha", acceptsMarketing: false });
    const got = (await call("customers.get", { id: made.id })) as Customer;
    expect(got).toEqual(made);
    expect(Object.keys(got).sort()).toEqual(
      [...SUMMARY_KEYS, "city", "email", "note", "phone", "marketingConsentSource", "marketingConsentUpdatedAt", "marketingConsentRequestedAt"].sort(),
    );
    expect(got).toMatchObject({ marketingConsent: "none", marketingConsentSource: null, marketingConsentUpdatedAt: null, marketingConsentRequestedAt: null });
    const phoneOnly = (await call("customers.create", { phone: "+14155550123", acceptsMarketing: true })) as Customer;
    expect(phoneOnly).toMatchObject({ email: null, acceptsMarketing: true, marketingConsent: "confirmed", marketingConsentSource: "staff", marketingConsentUpdatedAt: expect.any(Date) });
    expect(await eventsOf(store.id, "customer.created")).toEqual([{ customerId: made.id }, { customerId: phoneOnly.id }]);
  });

  it("lists newest first with paging and search, and never shows contact details", async () => {
    const { call } = await storeWithCaller(db);
    const made: Customer[] = [];
    for (const [firstName, lastName, email, phone] of [
      ["Ravi", "Kumar", "ravi@example.in", undefined],
      ["Meera", "Iyer", undefined, "+919000000001"],
      ["Ravi", "Shah", "r.shah@example.in", "+919000000002"],
    ] as const) {
      made.push((await call("customers.create", { firstName, lastName, email, phone })) as Customer);
    }
    const all = (await call("customers.list", { pageSize: 100 })) as Page;
    expect(all.total).toBe(4);
    expect(all.items.slice(0, 3).map((c) => c.id)).toEqual([made[2]!.id, made[1]!.id, made[0]!.id]);
    for (const item of all.items) expect(Object.keys(item).sort()).toEqual(SUMMARY_KEYS);
    expect(JSON.stringify(all)).not.toMatch(/example\.|\+91|email|phone/);

    const search = async (query: string) => ((await call("customers.list", { query })) as Page).items.map((c) => c.id);
    expect(await search("ravi")).toEqual([made[2]!.id, made[0]!.id]);
    expect(await search("ravi kumar")).toEqual([made[0]!.id]);
    expect(await search("IYER")).toEqual([made[1]!.id]);
    expect(await search("r.shah@")).toEqual([made[2]!.id]);
    expect(await search("9000000001")).toEqual([made[1]!.id]);
    expect(await search("%")).toEqual([]);

    const second = (await call("customers.list", { page: 2, pageSize: 3 })) as Page;
    expect(second).toMatchObject({ page: 2, pageSize: 3, total: 4 });
    expect(second.items).toHaveLength(1);
    expect(((await call("customers.list", { page: 9, pageSize: 3 })) as Page).total).toBe(4);
  });

  it("answers 400 naming the field for bad input and CONFLICT for a duplicate email", async () => {
    const { call } = await storeWithCaller(db);
    expect(await failure(call("customers.create", { firstName: "No contact" }))).toEqual({ code: "BAD_REQUEST", path: "email" });
    expect(await failure(call("customers.create", { email: "not-an-email" }))).toEqual({ code: "BAD_REQUEST", path: "email" });
    expect(await failure(call("customers.create", { phone: "9876543210" }))).toEqual({ code: "BAD_REQUEST", path: "phone" });
    expect(await failure(call("customers.create", { phone: "+0123456789" }))).toEqual({ code: "BAD_REQUEST", path: "phone" });
    expect(await failure(call("customers.create", { email: "a@b.in", firstName: "x".repeat(121) }))).toEqual({ code: "BAD_REQUEST", path: "firstName" });
    expect(await failure(call("customers.create", { email: "a@b.in", note: "x".repeat(5001) }))).toEqual({ code: "BAD_REQUEST", path: "note" });
    expect((await failure(call("customers.create", { email: "a@b.in", storeId: crypto.randomUUID() }))).code).toBe("BAD_REQUEST");
    expect(await failure(call("customers.get", { id: "42" }))).toEqual({ code: "BAD_REQUEST", path: "id" });
    await call("customers.create", { email: "dup@example.in" });
    expect(await failure(call("customers.create", { email: "DUP@example.in" }))).toEqual({ code: "CONFLICT", path: "email" });
  });

  it("updates given fields, clears with null, keeps an email or phone, and emits customer.updated", async () => {
    const { store, call } = await storeWithCaller(db);
    const c = (await call("customers.create", { email: "neha@example.in", firstName: "Neha", city: "Delhi" })) as Customer;
    const updated = (await call("customers.update", { id: c.id, phone: "+919811111111", city: null, acceptsMarketing: true })) as Customer;
    expect(updated).toMatchObject({ email: "neha@example.in", phone: "+919811111111", city: null, firstName: "Neha", acceptsMarketing: true });
    expect(updated.updatedAt.getTime()).toBeGreaterThanOrEqual(c.updatedAt.getTime());
    const phoneOnly = (await call("customers.update", { id: c.id, email: null })) as Customer;
    expect(phoneOnly).toMatchObject({ email: null, phone: "+919811111111" });
    expect(await failure(call("customers.update", { id: c.id, phone: null }))).toEqual({ code: "BAD_REQUEST", path: "phone" });
    expect(await failure(call("customers.update", { id: c.id, email: null, phone: null }))).toEqual({ code: "BAD_REQUEST", path: "email" });
    expect(await failure(call("customers.update", { id: c.id, phone: "12" }))).toEqual({ code: "BAD_REQUEST", path: "phone" });
    expect(await call("customers.get", { id: c.id })).toEqual(phoneOnly);
    expect(await eventsOf(store.id, "customer.updated")).toEqual([
      { customerId: c.id, fields: ["phone", "city", "acceptsMarketing"] },
      { customerId: c.id, fields: ["email"] },
    ]);
  });

  it("treats another store's customers as not found and leaves them unchanged", async () => {
    const a = await storeWithCaller(db);
    const b = await storeWithCaller(db);
    const theirs = (await b.call("customers.create", { email: "secret@example.in", phone: "+919822222222", note: "VIP" })) as Customer;
    const missing = { code: "NOT_FOUND", path: undefined };
    expect(await failure(a.call("customers.get", { id: theirs.id }))).toEqual(missing);
    expect(await failure(a.call("customers.update", { id: theirs.id, note: "hijacked" }))).toEqual(missing);
    expect(await failure(a.call("customers.update", { id: theirs.id }))).toEqual(missing);
    expect(await failure(a.call("customers.delete", { id: theirs.id }))).toEqual(missing);
    expect(await failure(a.call("customers.get", { id: crypto.randomUUID() }))).toEqual(missing);
    expect(((await a.call("customers.list", { query: "secret" })) as Page).total).toBe(0);
    expect(await b.call("customers.get", { id: theirs.id })).toEqual(theirs);
    expect(await eventsOf(b.store.id, "customer.updated")).toEqual([]);
  });

  it("delete: the customer goes for good (records.delete only); their orders keep the email; a later order adds them again without consent", async () => {
    const { s, sql } = await orderShop(db);
    const call = callerFor(db, s.ownerUserId, s.id);
    const c = (await call("customers.create", { email: "gone@example.test", firstName: "Gita", note: "asked to be forgotten", acceptsMarketing: true })) as Customer;
    const placed = await placeTestOrder(db, s, { email: "gone@example.test" });
    const staff = callerFor(db, (await addMember(db, s, "staff")).userId, s.id);
    expect(await failure(staff("customers.delete", { id: c.id }))).toEqual({ code: "FORBIDDEN", path: undefined });
    expect(await call("customers.delete", { id: c.id })).toEqual({ id: c.id, deleted: true });
    expect(await failure(call("customers.get", { id: c.id }))).toEqual({ code: "NOT_FOUND", path: undefined });
    expect(await failure(call("customers.delete", { id: c.id }))).toEqual({ code: "NOT_FOUND", path: undefined });
    expect(await outboxPayloads(db, s.id, "customer.deleted")).toEqual([{ customerId: c.id }]);
    expect(await sql("select email from shop_order where id = $1", [placed.order.id])).toEqual([{ email: "gone@example.test" }]);
    await placeTestOrder(db, s, { email: "Gone@Example.test" });
    expect(await sql("select first_name, note, accepts_marketing from customer where email = 'gone@example.test'")).toEqual([{ first_name: "Asha", note: null, accepts_marketing: false }]);
  });
});
