import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { testDb } from "../../test/harness";
import { deriveLocalSecret, localConfirmationFields } from "#shared/payments/local-protocol";
import { cartOf, makeShop, Shopper, type ShopStore } from "../../test/storefront";

/** POST /api/checkout through the real storefront Worker against real Postgres (issue 11 parts 1-3). */
const db = testDb();

const address = (state = "IN-MH") => ({ name: "Asha Rao", line1: "12 MG Road", city: "Pune", state, postalCode: "411001", country: "IN" });
const order = (overrides: Record<string, unknown> = {}) => ({ email: "asha@example.test", shippingAddress: address(), paymentMethod: "gateway", ...overrides });
const sql = (s: ShopStore, text: string, values: unknown[] = []) => withStore(db, s.id, (tx) => tx.$client.query(text, values)).then((r) => r.rows);

/** A shop whose fixture warehouse ships from Maharashtra. */
async function shop(stock = 5): Promise<ShopStore> {
  const s = await makeShop(db);
  await sql(s, "update location set state = 'IN-MH'");
  await sql(s, "update inventory_level set on_hand = $1", [stock]);
  return s;
}

const reserved = async (s: ShopStore) => Number((await sql(s, "select sum(reserved) as r from inventory_level where variant_id = $1", [s.variantId]))[0].r);
const orderCount = async (s: ShopStore) => Number((await sql(s, "select count(*) as n from shop_order where cart_id is not null"))[0].n);

describe("checkout", () => {
  it("places the order: 201 with its parcel, GST inside the inclusive total, stock reserved, cart converted, events written", async () => {
    const s = await shop();
    const buyer = new Shopper(s.hostname);
    expect((await buyer.add(s.variantId, 2)).status).toBe(200);
    const res = await buyer.send("POST", "/api/checkout", order({ phone: "+919876543210" }));
    expect(res.status).toBe(201);
    const { order: o, payment, replayed } = res.body as { order: Record<string, unknown> & { id: string; parcels: Record<string, number>[] }; payment: Record<string, unknown>; replayed: boolean };
    expect(replayed).toBe(false);
    expect(o).toMatchObject({ number: 1002, email: "asha@example.test", status: "open", paymentStatus: "pending", fulfillmentStatus: "unfulfilled", currency: "INR", subtotal: 2000, discount: 0, shipping: 0, total: 2000 });
    // ₹20.00 inclusive of 18 % GST holds 2000 × 18 / 118 = 305.08 → 305 paise; same state: CGST + SGST.
    expect(o.tax).toBe(305);
    expect(o.parcels).toHaveLength(1);
    expect(o.parcels[0]).toMatchObject({ subtotal: 2000, tax: 305, igst: 0 });
    expect(o.parcels[0]!.cgst! + o.parcels[0]!.sgst!).toBe(305);
    // The order committed, then the local gateway made the payment: the attempt is pending, with its page.
    expect(payment).toMatchObject({ attempt: 1, idempotencyKey: `${o.id}:1`, status: "pending" });
    expect(String(payment.redirectUrl)).toMatch(/\/-gateway\/pay\/lp1\./);
    expect(await reserved(s)).toBe(2);
    expect(cartOf(await buyer.get()).id).toBeNull();
    const kinds = (await sql(s, "select kind from outbox_event where payload->>'orderId' = $1 order by kind", [o.id])).map((r) => r.kind);
    expect(kinds).toEqual(["inventory.reserved", "order.placed"]);
  });

  it("a second submit is a replay: 200, the same order, replayed: true, nothing new", async () => {
    const s = await shop();
    const buyer = new Shopper(s.hostname);
    await buyer.add(s.variantId, 1);
    const first = await buyer.send("POST", "/api/checkout", order());
    const again = await buyer.send("POST", "/api/checkout", order({ email: "someone-else@example.test" }));
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ replayed: true, order: { id: (first.body.order as { id: string }).id, email: "asha@example.test" } });
    expect(await orderCount(s)).toBe(1);
    expect(await reserved(s)).toBe(1);
  });

  it("20 concurrent submits of one cart: 1 order, 19 replays", async () => {
    const s = await shop();
    const buyer = new Shopper(s.hostname);
    await buyer.add(s.variantId, 1);
    const answers = await Promise.all(Array.from({ length: 20 }, () => buyer.send("POST", "/api/checkout", order())));
    expect(answers.map((a) => a.status).sort()).toEqual([...Array(19).fill(200), 201]);
    expect(answers.filter((a) => a.body.replayed === true)).toHaveLength(19);
    expect(new Set(answers.map((a) => (a.body.order as { id: string }).id)).size).toBe(1);
    expect(await orderCount(s)).toBe(1);
    expect(await reserved(s)).toBe(1);
  });

  it("30 buyers race for 5 units: exactly 5 orders, the rest 409 naming the line; stock never below zero", async () => {
    const s = await shop(5);
    const buyers = Array.from({ length: 30 }, () => new Shopper(s.hostname));
    for (const b of buyers) expect((await b.add(s.variantId, 1)).status).toBe(200);
    // 30 people (one email holds at most 3 unpaid orders: decision 0020).
    const answers = await Promise.all(buyers.map((b, i) => b.send("POST", "/api/checkout", order({ email: `buyer${i}@example.test` }))));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(5);
    const refused = answers.filter((a) => a.status === 409);
    expect(refused).toHaveLength(25);
    expect(refused[0]!.body.json).toMatchObject({ code: "CONFLICT", data: { reason: "insufficient_stock" } });
    const issue = (refused[0]!.body.json!.data!["issues"] as { path: string; available: number }[])[0]!;
    expect(issue.path).toMatch(/^lines\.[0-9a-f-]{36}\.quantity$/);
    expect(issue.available).toBe(0);
    expect(await orderCount(s)).toBe(5);
    const [level] = await sql(s, "select on_hand, reserved from inventory_level where variant_id = $1", [s.variantId]);
    expect([level.on_hand, level.reserved]).toEqual([5, 5]);
  });

  it("ships across states with IGST; splits over two locations only when one cannot cover the cart", async () => {
    const s = await shop(1);
    const [second] = await sql(s, "insert into location (store_id, name, state, priority) values ($1, 'Bengaluru hub', 'IN-KA', 200) returning id", [s.id]);
    await sql(s, "insert into inventory_level (store_id, variant_id, location_id, on_hand) values ($1, $2, $3, 4)", [s.id, s.variantId, second.id]);
    const buyer = new Shopper(s.hostname);
    await buyer.add(s.variantId, 3);
    const res = await buyer.send("POST", "/api/checkout", order({ shippingAddress: address("IN-KA") }));
    expect(res.status).toBe(201);
    // One location (the hub) has all 3: fewest parcels wins over the warehouse's priority.
    const parcels = (res.body.order as { parcels: Record<string, unknown>[]; tax: number }).parcels;
    expect(parcels).toHaveLength(1);
    // Karnataka → Karnataka: CGST + SGST, halves of ₹30.00 × 18/118 = 457.6 → 458 paise.
    expect(parcels[0]).toMatchObject({ locationId: second.id, subtotal: 3000, cgst: 229, sgst: 229, igst: 0, tax: 458 });

    const other = new Shopper(s.hostname);
    await other.add(s.variantId, 2);
    const split = await other.send("POST", "/api/checkout", order({ shippingAddress: address("IN-KA") }));
    expect(split.status).toBe(201);
    const two = split.body.order as { parcels: { subtotal: number; tax: number; igst: number; cgst: number; sgst: number }[]; tax: number };
    expect(two.parcels.map((p) => p.subtotal)).toEqual([1000, 1000]);
    // Maharashtra → Karnataka is IGST; Karnataka → Karnataka is CGST + SGST.
    expect(two.parcels[0]!.igst).toBe(two.parcels[0]!.tax);
    expect(two.parcels[1]!.igst).toBe(0);
    expect(two.tax).toBe(two.parcels[0]!.tax + two.parcels[1]!.tax);
  });

  it("bad input answers 400 naming each field and writes nothing", async () => {
    const s = await shop();
    const buyer = new Shopper(s.hostname);
    await buyer.add(s.variantId, 1);
    const res = await buyer.send("POST", "/api/checkout", {
      email: "not-an-email",
      phone: "98765",
      shippingAddress: { ...address("MH"), postalCode: "0123", country: "US" },
      paymentMethod: "cash",
      extra: 1,
    });
    expect(res.status).toBe(400);
    const paths = (res.body.json!.data!["issues"] as { path: string }[]).map((i) => i.path).sort();
    expect(paths).toEqual(["", "email", "paymentMethod", "phone", "shippingAddress.country", "shippingAddress.postalCode", "shippingAddress.state"].sort());
    expect(await orderCount(s)).toBe(0);
    expect((await buyer.send("POST", "/api/checkout", "{not json")).status).toBe(400);
  });

  it("no cart, an empty cart, another store's cart or a product taken off sale: 409 with the reason, no order", async () => {
    const [a, b] = [await shop(), await shop()];
    expect((await new Shopper(a.hostname).send("POST", "/api/checkout", order())).body.json).toMatchObject({ data: { reason: "empty_cart" } });
    const buyer = new Shopper(a.hostname);
    await buyer.add(a.variantId, 1);
    // The same cookie at store B's host finds no cart there (RLS).
    const elsewhere = new Shopper(b.hostname);
    elsewhere.cookie = buyer.cookie;
    const crossed = await elsewhere.send("POST", "/api/checkout", order());
    expect([crossed.status, crossed.body.json?.data?.["reason"]]).toEqual([409, "empty_cart"]);
    await sql(a, "update product set status = 'archived' where id = $1", [a.productId]);
    const gone = await buyer.send("POST", "/api/checkout", order());
    expect([gone.status, gone.body.json?.data?.["reason"]]).toEqual([409, "not_for_sale"]);
    expect(await orderCount(a)).toBe(0);
    expect(await orderCount(b)).toBe(0);
  });

  it("the cart's discount is taken once and counted; a code used up meanwhile is refused with 409", async () => {
    const s = await shop();
    await sql(s, "update discount set usage_limit = 1");
    const [first, second] = [new Shopper(s.hostname), new Shopper(s.hostname)];
    for (const b of [first, second]) {
      await b.add(s.variantId, 1);
      expect((await b.applyCode(s.discountCode)).status).toBe(200);
    }
    const placed = await first.send("POST", "/api/checkout", order());
    expect(placed.status).toBe(201);
    expect(placed.body.order).toMatchObject({ subtotal: 1000, discount: 100, total: 900 });
    const late = await second.send("POST", "/api/checkout", order());
    expect([late.status, late.body.json?.data?.["reason"]]).toEqual([409, "discount_unavailable"]);
    expect(Number((await sql(s, "select usage_count from discount"))[0].usage_count)).toBe(1);
  });
});

const LOCAL_SECRET = "local-gateway-test-secret";

describe("payment attempts", () => {
  it("the gateway down: the attempt is failed, the order stays placed; a retry from the buyer's browser makes attempt 2", async () => {
    const s = await shop();
    const buyer = new Shopper(s.hostname);
    await buyer.add(s.variantId, 1);
    const down = { LOCAL_GATEWAY_BEHAVIOUR: JSON.stringify({ failCreate: "unavailable", failCreateUpToAttempt: 1 }) };
    const placed = await buyer.send("POST", "/api/checkout", order(), {}, down);
    expect(placed.status).toBe(201);
    const o = placed.body.order as { id: string; status: string; paymentStatus: string };
    expect(placed.body.payment).toMatchObject({ attempt: 1, status: "failed" });
    expect([o.status, o.paymentStatus]).toEqual(["open", "unpaid"]);
    expect(await reserved(s)).toBe(1);
    // Another browser (no cart cookie of this order) cannot retry it.
    expect((await new Shopper(s.hostname).send("POST", `/api/checkout/${o.id}/pay`, {}, {}, down)).status).toBe(404);
    const retry = await buyer.send("POST", `/api/checkout/${o.id}/pay`, {}, {}, down);
    expect(retry.status).toBe(201);
    expect(retry.body.payment).toMatchObject({ attempt: 2, idempotencyKey: `${o.id}:2`, status: "pending" });
    const attempts = await sql(s, "select attempt, status, last_error from payment_attempt where order_id = $1 order by attempt", [o.id]);
    expect(attempts.map((a) => [a.attempt, a.status])).toEqual([[1, "failed"], [2, "pending"]]);
    expect(attempts[0].last_error).toMatch(/^unavailable: /);
  });

  it("the client's signed confirmation captures through the routine; a forged one is 401 and changes nothing", async () => {
    const s = await shop();
    const buyer = new Shopper(s.hostname);
    await buyer.add(s.variantId, 1);
    const placed = await buyer.send("POST", "/api/checkout", order());
    const o = placed.body.order as { id: string };
    const ref = decodeURIComponent(String((placed.body.payment as { redirectUrl: string }).redirectUrl).split("/-gateway/pay/")[1]!);
    const secret = await deriveLocalSecret(LOCAL_SECRET, s.id);
    const fields = (await localConfirmationFields(ref, "captured", secret))!;
    const forged = await buyer.send("POST", `/api/checkout/${o.id}/confirm`, { ...fields, local_signature: "0".repeat(64) });
    expect([forged.status, forged.body.json?.data?.["reason"]]).toEqual([401, "bad_signature"]);
    expect((await sql(s, "select payment_status from shop_order where id = $1", [o.id]))[0].payment_status).toBe("pending");
    const confirmed = await buyer.send("POST", `/api/checkout/${o.id}/confirm`, fields);
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.order).toMatchObject({ paymentStatus: "paid", status: "open" });
    // The same confirmation again (a reload): nothing moves, still one order.paid.
    expect((await buyer.send("POST", `/api/checkout/${o.id}/confirm`, fields)).status).toBe(200);
    expect(Number((await sql(s, "select count(*) as n from outbox_event where kind = 'order.paid' and payload->>'orderId' = $1", [o.id]))[0].n)).toBe(1);
    // A paid order takes no new attempt.
    const again = await buyer.send("POST", `/api/checkout/${o.id}/pay`, {});
    expect([again.status, again.body.json?.data?.["reason"]]).toEqual([409, "already_paid"]);
  });
});
