import { describe, expect, it } from "vitest";
import { customer, discount, inventoryAdjustment, inventoryLevel, location, page, product, productVariant, shopOrder } from "#shared/db/schema";
import { withStore } from "#shared/db/with-store";
import { testDb } from "../../test/harness";
import { failureText, storeWithCaller } from "../../test/procedures";

const db = testDb();

const DAY = 86_400_000;
const HOUR = 3_600_000;
const dateOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const aroundToday = { from: dateOf(Date.now() - DAY), to: dateOf(Date.now() + DAY) };
const at = (iso: string) => new Date(iso);

const failure = failureText;

/** What a fresh test store's fixture rows (all made just now) add up to. */
const fixtureOnly = {
  currency: "INR",
  products: { total: 1, active: 0, draft: 1, archived: 0, createdInRange: 1 },
  variants: { total: 1, preorder: 0 },
  customers: { total: 1, newInRange: 1, acceptsMarketing: 0 },
  inventory: { unitsOnHand: 5, unitsAvailable: 5, stockValueMinor: 5000, unitsReceivedInRange: 5, adjustmentsInRange: 1 },
  discounts: { live: 1, total: 1 },
  pages: { published: 0, draft: 1 },
  orders: { placed: 1, cancelled: 0, salesMinor: 1000, paidMinor: 0 },
};
const UTC = { utcOffset: "+00:00" };

describe("analytics.summary", () => {
  it("counts a fresh store's fixture rows exactly", async () => {
    const { call } = await storeWithCaller(db);
    expect(await call("analytics.summary", aroundToday)).toEqual({ ...fixtureOnly, range: { ...aroundToday, ...UTC } });
  });

  it("matches a known set of rows, with the range running from `from` 00:00 UTC up to the day after `to`", async () => {
    const { store, call } = await storeWithCaller(db);
    await withStore(db, store.id, async (tx) => {
      const sid = store.id;
      const [p1, , p3, p4] = await tx
        .insert(product)
        .values([
          { storeId: sid, title: "P1", handle: "p1", status: "active", createdAt: at("2020-01-01T00:00:00Z") },
          { storeId: sid, title: "P2", handle: "p2", status: "archived", createdAt: at("2020-01-31T23:59:59.999Z") },
          { storeId: sid, title: "P3", handle: "p3", status: "active", createdAt: at("2020-02-01T00:00:00Z") },
          { storeId: sid, title: "P4", handle: "p4", status: "draft", createdAt: at("2019-12-31T23:59:59Z") },
        ])
        .returning({ id: product.id });
      const [v1, v2, v3, v4] = await tx
        .insert(productVariant)
        .values([
          { storeId: sid, productId: p1!.id, priceMinor: 25_000 },
          { storeId: sid, productId: p1!.id, priceMinor: 1_999, preorder: true },
          { storeId: sid, productId: p3!.id, priceMinor: 100, preorder: true },
          { storeId: sid, productId: p4!.id, priceMinor: 100_000_000_000 },
        ])
        .returning({ id: productVariant.id });
      const [loc] = await tx.insert(location).values({ storeId: sid, name: "Second" }).returning({ id: location.id });
      const locationId = loc!.id;
      await tx.insert(inventoryLevel).values([
        { storeId: sid, locationId, variantId: v1!.id, onHand: 10, reserved: 3 },
        { storeId: sid, locationId, variantId: v2!.id, onHand: 0 },
        { storeId: sid, locationId, variantId: v3!.id, onHand: 7, reserved: 7 },
        { storeId: sid, locationId, variantId: v4!.id, onHand: 50 },
      ]);
      const adjustment = (delta: number, reason: "received" | "damaged" | "returned", createdAt: string) => ({
        storeId: sid,
        locationId,
        variantId: v1!.id,
        delta,
        onHandAfter: 10,
        reason,
        createdAt: at(createdAt),
      });
      await tx.insert(inventoryAdjustment).values([
        adjustment(10, "received", "2020-01-05T10:00:00Z"),
        adjustment(-2, "damaged", "2020-01-10T10:00:00Z"),
        adjustment(4, "returned", "2020-01-31T23:59:00Z"),
        adjustment(100, "received", "2020-02-01T00:00:00Z"),
        adjustment(7, "received", "2019-12-31T23:00:00Z"),
      ]);
      await tx.insert(customer).values([
        { storeId: sid, email: "c1@example.test", acceptsMarketing: true, createdAt: at("2020-01-15T00:00:00Z") },
        { storeId: sid, email: "c2@example.test", acceptsMarketing: true, createdAt: at("2019-06-01T00:00:00Z") },
        { storeId: sid, phone: "+919876543210", createdAt: at("2020-01-20T00:00:00Z") },
      ]);
      const now = Date.now();
      await tx.insert(discount).values([
        { storeId: sid, code: "LIVE-FLAT", kind: "fixed_amount", value: 5000, endsAt: new Date(now + DAY), usageLimit: 10, usageCount: 9 },
        { storeId: sid, code: "LATER", kind: "percentage", value: 5, startsAt: new Date(now + DAY) },
        { storeId: sid, code: "OVER", kind: "percentage", value: 5, startsAt: new Date(now - 2 * DAY), endsAt: new Date(now - HOUR) },
        { storeId: sid, code: "USED", kind: "percentage", value: 5, usageLimit: 3, usageCount: 3 },
        { storeId: sid, code: "OFF", kind: "percentage", value: 5, status: "disabled" },
      ]);
      await tx.insert(page).values([
        { storeId: sid, title: "Terms", handle: "terms", status: "published", publishedAt: new Date() },
        { storeId: sid, title: "Privacy", handle: "privacy", status: "published", publishedAt: new Date() },
        { storeId: sid, title: "Draft", handle: "draft" },
      ]);
    });

    const january = { from: "2020-01-01", to: "2020-01-31" };
    expect(await call("analytics.summary", january)).toEqual({
      currency: "INR",
      range: { ...january, ...UTC },
      products: { total: 5, active: 2, draft: 2, archived: 1, createdInRange: 2 },
      variants: { total: 5, preorder: 2 },
      customers: { total: 4, newInRange: 2, acceptsMarketing: 2 },
      inventory: {
        unitsOnHand: 5 + 10 + 0 + 7 + 50,
        unitsAvailable: 5 + 7 + 0 + 0 + 50,
        stockValueMinor: 5 * 1000 + 10 * 25_000 + 7 * 100 + 50 * 100_000_000_000,
        unitsReceivedInRange: 10 + 4,
        adjustmentsInRange: 3,
      },
      discounts: { live: 2, total: 6 },
      pages: { published: 2, draft: 2 },
      orders: { placed: 0, cancelled: 0, salesMinor: 0, paidMinor: 0 },
    });
    const firstDay = (await call("analytics.summary", { from: "2020-01-01", to: "2020-01-01" })) as typeof fixtureOnly;
    expect(firstDay.products.createdInRange).toBe(1);
    expect(firstDay.inventory).toMatchObject({ unitsReceivedInRange: 0, adjustmentsInRange: 0 });
    const february = (await call("analytics.summary", { from: "2020-02-01", to: "2020-02-01" })) as typeof fixtureOnly;
    expect(february.products.createdInRange).toBe(1);
    expect(february.inventory).toMatchObject({ unitsReceivedInRange: 100, adjustmentsInRange: 1 });
  });

  it("counts orders placed in the range, its days beginning at utcOffset: sales leave out cancelled and expired ones", async () => {
    const { store, call } = await storeWithCaller(db);
    const order = (number: number, placedAt: string, total: number, status: string, paymentStatus: string) => ({
      storeId: store.id,
      number,
      email: "o@example.test",
      shippingAddress: { name: "O", line1: "1 Road", city: "Pune", state: "IN-MH", postalCode: "411001", country: "IN" },
      shipToState: "IN-MH",
      paymentMethod: "gateway",
      currency: "INR",
      subtotal: total,
      total,
      status,
      paymentStatus,
      placedAt: at(placedAt),
    });
    await withStore(db, store.id, (tx) =>
      tx.insert(shopOrder).values([
        order(2001, "2020-03-01T18:00:00Z", 1000, "open", "paid"), // 23:30 IST on 1 March
        order(2002, "2020-03-01T19:00:00Z", 2000, "open", "unpaid"), // 00:30 IST on 2 March
        order(2003, "2020-03-02T10:00:00Z", 500, "cancelled", "unpaid"),
        order(2004, "2020-03-02T11:00:00Z", 700, "expired", "unpaid"),
      ] as (typeof shopOrder.$inferInsert)[]),
    );
    const day = (d: string, utcOffset?: string) => call("analytics.summary", { from: d, to: d, ...(utcOffset ? { utcOffset } : {}) }).then((r) => (r as { orders: unknown }).orders);
    expect(await day("2020-03-01")).toEqual({ placed: 2, cancelled: 0, salesMinor: 3000, paidMinor: 1000 });
    expect(await day("2020-03-02")).toEqual({ placed: 2, cancelled: 2, salesMinor: 0, paidMinor: 0 });
    expect(await day("2020-03-01", "+05:30")).toEqual({ placed: 1, cancelled: 0, salesMinor: 1000, paidMinor: 1000 });
    expect(await day("2020-03-02", "+05:30")).toEqual({ placed: 3, cancelled: 2, salesMinor: 2000, paidMinor: 0 });
    expect(await failure(call("analytics.summary", { from: "2020-03-01", to: "2020-03-01", utcOffset: "IST" }))).toBe("BAD_REQUEST utcOffset");
  });

  it("never counts another store's rows", async () => {
    const a = await storeWithCaller(db);
    const b = await storeWithCaller(db);
    await b.call("products.create", { title: "B only", status: "active", variants: [{ priceMinor: 700, preorder: true }] });
    await b.call("discounts.create", { code: "B-ONLY", kind: "percentage", value: 15 });
    const bPage = (await b.call("content.create", { title: "B page" })) as { id: string };
    await b.call("content.publish", { id: bPage.id });
    await withStore(db, b.store.id, (tx) =>
      tx.insert(customer).values({ storeId: b.store.id, email: "b@example.test", acceptsMarketing: true }),
    );

    expect(await a.call("analytics.summary", aroundToday)).toEqual({ ...fixtureOnly, range: { ...aroundToday, ...UTC } });
    expect(await b.call("analytics.summary", aroundToday)).toMatchObject({
      products: { total: 2, active: 1, createdInRange: 2 },
      variants: { total: 2, preorder: 1 },
      customers: { total: 2, newInRange: 2, acceptsMarketing: 1 },
      discounts: { live: 2, total: 2 },
      pages: { published: 1, draft: 1 },
    });
  });

  it("answers 400 naming the field for a bad range", async () => {
    const { call } = await storeWithCaller(db);
    const summary = (input: unknown) => failure(call("analytics.summary", input));
    expect(await summary({ from: "2024-03-02", to: "2024-03-01" })).toBe("BAD_REQUEST to");
    expect(await summary({ from: "2024-01-01", to: "2025-01-01" })).toBe("BAD_REQUEST to");
    expect(await summary({ from: "2024-01-01", to: "2024-12-31" })).toBe("ok");
    expect(await summary({ from: "2024-02-30", to: "2024-03-01" })).toBe("BAD_REQUEST from");
    expect(await summary({ from: "2024-03-01T00:00:00Z", to: "2024-03-01" })).toBe("BAD_REQUEST from");
    expect(await summary({ from: "2024-03-01" })).toBe("BAD_REQUEST to");
    expect(await summary({ from: "2024-03-01", to: "2024-03-01", store: "other" })).toMatch(/^BAD_REQUEST/);
  });

  it("is refused to staff, whose role has no analytics.read", async () => {
    const { call } = await storeWithCaller(db, "staff");
    expect(await failure(call("analytics.summary", aroundToday))).toBe("FORBIDDEN");
  });
});
