import { describe, expect, it } from "vitest";
import { testDb } from "../../test/harness";
import { orderShop, placeTestOrder } from "../../test/orders";
import { addMember, callerFor, failureText, type Caller } from "../../test/procedures";

/** orders.list and orders.get through the real executor against real Postgres; orders placed by checkout's placeOrder. */
const db = testDb();

interface Item {
  id: string;
  number: number;
  email: string | null;
  status: string;
  paymentStatus: string;
  fulfillmentStatus: string;
  currency: string;
  total: number;
  placedAt: Date;
}
interface Page {
  items: Item[];
  page: number;
  pageSize: number;
  total: number;
}

const day = (d: number) => new Date(Date.UTC(2025, 9, d, 6)); // October 2025, after the GST slabs changed

/** A shop with three placed orders (#1002-#1004, a day apart) besides the fixture's #1001 (placed now). */
async function shopWithOrders() {
  const { s, sql } = await orderShop(db);
  const placed = [];
  for (const [i, email] of ["asha@example.test", "Ravi.Kumar@Mail.test", "meera@example.test"].entries()) {
    placed.push((await placeTestOrder(db, s, { email, at: day(i + 1) })).order);
  }
  return { s, sql, call: callerFor(db, s.ownerUserId, s.id), placed };
}

const list = async (call: Caller, input: Record<string, unknown> = {}) => (await call("orders.list", input)) as Page;
const numbers = async (call: Caller, input: Record<string, unknown> = {}) => (await list(call, input)).items.map((i) => i.number);

describe("orders.list", () => {
  it("lists newest first with the list shape, one page at a time", async () => {
    const { call, placed } = await shopWithOrders();
    const page = await list(call);
    expect(page).toMatchObject({ page: 1, pageSize: 20, total: 4 });
    expect(page.items.map((i) => i.number)).toEqual([1001, 1004, 1003, 1002]);
    expect(Object.keys(page.items[1]!).sort()).toEqual(["channel", "currency", "email", "fulfillmentStatus", "id", "number", "paymentStatus", "placedAt", "status", "total"]);
    expect(page.items[1]).toEqual({
      id: placed[2]!.id, number: 1004, email: "meera@example.test", status: "open", paymentStatus: "unpaid", fulfillmentStatus: "unfulfilled",
      channel: "online_store", currency: "INR", total: 1000, placedAt: day(3),
    });
    expect(await list(call, { page: 2, pageSize: 3 })).toMatchObject({ total: 4, items: [{ number: 1002 }] });
    expect(await list(call, { page: 9, pageSize: 3 })).toEqual({ items: [], page: 9, pageSize: 3, total: 4 });
  });

  it("finds an order by number with or without #, and by the beginnings of the email's words ignoring case", async () => {
    const { call } = await shopWithOrders();
    expect(await numbers(call, { query: "#1003" })).toEqual([1003]);
    expect(await numbers(call, { query: " 1003 " })).toEqual([1003]);
    expect(await numbers(call, { query: "#9999" })).toEqual([]);
    // Emails are stored lower-cased at checkout; each word of the query begins a word of the email.
    expect(await numbers(call, { query: "RAVI.kumar" })).toEqual([1003]);
    expect(await numbers(call, { query: "rav kum" })).toEqual([1003]);
    expect(await numbers(call, { query: "mail.test" })).toEqual([1003]);
    expect(await numbers(call, { query: "example.test" })).toEqual([1001, 1004, 1002]);
    expect(await numbers(call, { query: "avi" })).toEqual([]);
    expect(await numbers(call, { query: "ravi meera" })).toEqual([]);
    expect(await numbers(call, { query: "#meera" })).toEqual([]);
    // Punctuation separates words: a query of it alone finds nothing, and % or _ are no wildcards.
    expect(await numbers(call, { query: "%" })).toEqual([]);
    expect(await numbers(call, { query: "m%" })).toEqual([1004, 1003]);
  });

  it("email keeps exactly one customer's orders: the whole address ignoring case, never a part of another", async () => {
    const { s, call } = await shopWithOrders();
    await placeTestOrder(db, s, { email: "sha@example.test", at: day(4) });
    expect(await numbers(call, { email: "ASHA@example.test" })).toEqual([1002]);
    expect(await numbers(call, { email: "sha@example.test" })).toEqual([1005]);
    // A search is by words: "sha" begins no word of asha@example.test.
    expect(await numbers(call, { query: "sha@example.test" })).toEqual([1005]);
    expect(await numbers(call, { email: "nobody@example.test" })).toEqual([]);
    expect(await failureText(call("orders.list", { email: "asha" }))).toBe("BAD_REQUEST email");
  });

  it("filters by status, payment, fulfillment and the placed window", async () => {
    const { call, placed } = await shopWithOrders();
    await call("orders.setStatus", { orderId: placed[0]!.id, action: "mark_paid" });
    await call("orders.cancel", { orderId: placed[1]!.id });
    expect(await numbers(call, { paymentStatus: "paid" })).toEqual([1002]);
    expect(await numbers(call, { status: "cancelled" })).toEqual([1003]);
    expect(await numbers(call, { status: "open", paymentStatus: "unpaid" })).toEqual([1001, 1004]);
    expect(await numbers(call, { fulfillmentStatus: "unfulfilled" })).toEqual([1001, 1004, 1003, 1002]);
    expect(await numbers(call, { fulfillmentStatus: "delivered" })).toEqual([]);
    // placedFrom is inclusive, placedTo exclusive.
    expect(await numbers(call, { placedFrom: day(2).toISOString(), placedTo: day(3).toISOString() })).toEqual([1003]);
    expect(await numbers(call, { placedFrom: "2025-10-02T11:30:00+05:30" })).toEqual([1001, 1004, 1003]);
    expect(await numbers(call, { placedTo: day(2).toISOString(), query: "asha" })).toEqual([1002]);
  });

  it("refuses bad input naming the field", async () => {
    const { call } = await shopWithOrders();
    expect(await failureText(call("orders.list", { placedFrom: day(3).toISOString(), placedTo: day(2).toISOString() }))).toBe("BAD_REQUEST placedTo");
    expect(await failureText(call("orders.list", { placedFrom: "yesterday" }))).toBe("BAD_REQUEST placedFrom");
    expect(await failureText(call("orders.list", { status: "shipped" }))).toBe("BAD_REQUEST status");
    expect(await failureText(call("orders.list", { paymentStatus: "PAID" }))).toBe("BAD_REQUEST paymentStatus");
    expect(await failureText(call("orders.list", { pageSize: 101 }))).toBe("BAD_REQUEST pageSize");
    expect(await failureText(call("orders.list", { number: 1002 }))).toBe("BAD_REQUEST ");
    expect(await failureText(call("orders.list", { query: "x".repeat(201) }))).toBe("BAD_REQUEST query");
  });
});

describe("orders.get", () => {
  it("answers the order with lines, parcels, attempts, shipments and its events", async () => {
    const { s, sql } = await orderShop(db);
    const call = callerFor(db, s.ownerUserId, s.id);
    const made = (await call("products.create", { title: "Kurta", status: "active", variants: [{ title: "M", sku: `KURTA-${s.slug}`, priceMinor: 2500, taxClass: "gst_5" }] })) as {
      variants: { id: string }[];
    };
    const kurta = made.variants[0]!.id;
    const locationId = (await sql<{ id: string }>("select id from location"))[0]!.id;
    await call("inventory.adjust", { variantId: kurta, locationId, delta: 4, reason: "received" });
    const at = new Date("2026-11-01T10:00:00Z");
    const { order } = await placeTestOrder(db, s, { lines: [[s.variantId, 2], [kurta, 1]], phone: "+919876543210", paymentMethod: "manual_transfer", at });

    const got = (await call("orders.get", { id: order.id })) as Record<string, unknown> & { lines: Record<string, unknown>[]; events: { kind: string }[] };
    expect(got).toMatchObject({ ...order, phone: "+919876543210", paymentMethod: "manual_transfer", discountCode: null, placedAt: at, shipments: [] });
    expect(got["shippingAddress"]).toEqual({ name: "Asha Rao", line1: "12 MG Road", city: "Pune", state: "IN-MH", postalCode: "411001", country: "IN" });
    expect(got["expiresAt"]).toEqual(new Date(at.getTime() + 3 * 86_400_000));
    // Cart lines added in one transaction have no order between them: compare by title.
    expect(got.lines.sort((x, y) => String(x["productTitle"]).localeCompare(String(y["productTitle"])))).toEqual([
      { id: expect.any(String), variantId: s.variantId, productTitle: "Fixture", variantTitle: "Default", sku: expect.stringMatching(/^FIX-/), taxClass: "gst_18", quantity: 2, unitPrice: 1000, lineTotal: 2000, discount: 0, preorder: false },
      { id: expect.any(String), variantId: kurta, productTitle: "Kurta", variantTitle: "M", sku: `KURTA-${s.slug}`, taxClass: "gst_5", quantity: 1, unitPrice: 2500, lineTotal: 2500, discount: 0, preorder: false },
    ]);
    expect(got["attempts"]).toEqual([
      { id: expect.any(String), attempt: 1, idempotencyKey: `${order.id}:1`, status: "created", provider: "manual_transfer", amount: 4500, createdAt: expect.any(Date), review: null },
    ]);
    // Events of one transaction share its time: ordered by kind within it.
    expect(got.events.map((e) => e.kind)).toEqual(["inventory.reserved", "order.placed"]);

    await call("orders.setStatus", { orderId: order.id, action: "mark_paid" });
    const paid = (await call("orders.get", { id: order.id })) as typeof got;
    expect(paid).toMatchObject({ paymentStatus: "paid", attempts: [{ attempt: 1, status: "captured" }] });
    expect(paid.events.map((e) => e.kind)).toEqual(["inventory.reserved", "order.placed", "order.paid"]);
  });

  it("another store's order is not found, and its orders are never listed", async () => {
    const a = await orderShop(db);
    const b = await orderShop(db);
    const bOrder = (await placeTestOrder(db, b.s, { email: "only-b@example.test" })).order;
    const call = callerFor(db, a.s.ownerUserId, a.s.id);
    expect(await failureText(call("orders.get", { id: bOrder.id }))).toBe("NOT_FOUND");
    expect(await failureText(call("orders.setStatus", { orderId: bOrder.id, action: "mark_paid" }))).toBe("NOT_FOUND");
    expect(await failureText(call("orders.cancel", { orderId: bOrder.id }))).toBe("NOT_FOUND");
    expect(await numbers(call, { query: "only-b" })).toEqual([]);
    expect((await list(call)).total).toBe(1);
    expect(await b.sql("select status, payment_status from shop_order where id = $1", [bOrder.id])).toEqual([{ status: "open", payment_status: "unpaid" }]);
    expect(await failureText(call("orders.get", { id: "not-a-uuid" }))).toBe("BAD_REQUEST id");
  });

  it("Staff read orders and mark them paid but cannot cancel; Admins cancel", async () => {
    const { s, placed } = await shopWithOrders();
    const staff = callerFor(db, (await addMember(db, s, "staff")).userId, s.id);
    const admin = callerFor(db, (await addMember(db, s, "admin")).userId, s.id);
    expect((await list(staff)).total).toBe(4);
    expect(await staff("orders.get", { id: placed[0]!.id })).toMatchObject({ number: 1002 });
    expect(await staff("orders.setStatus", { orderId: placed[0]!.id, action: "mark_paid" })).toMatchObject({ paymentStatus: "paid" });
    expect(await failureText(staff("orders.cancel", { orderId: placed[1]!.id }))).toBe("FORBIDDEN");
    expect(await admin("orders.cancel", { orderId: placed[1]!.id })).toMatchObject({ status: "cancelled" });
  });
});
