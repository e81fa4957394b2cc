import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { placeOrder, placeOrderInUnits, type Buyer, type CheckoutInput } from "#shared/orders/checkout";
import { newCartToken } from "#shared/storefront/cart";
import { addLine, createCart } from "#shared/storefront/cart-changes";
import { testDb } from "../../test/harness";
import { address, orderShop } from "../../test/orders";
import { addMember, callerFor, failureText } from "../../test/procedures";
import { buyerNetworkHash, UNPAID_HOLDS_PER_BUYER } from "./holds";

/**
 * Unpaid holds bounded (decision 0020): bank transfer only where the store offers it, the transfer hold
 * from the store's setting, and at most 3 open unpaid orders per email and per network, counted by
 * checkout's own change, also when checkouts race. Real Postgres, the checkout's own units.
 */
const db = testDb();
// A Database keeps one connection, so racing checkouts each get their own (as concurrent requests do).
const racers = Array.from({ length: 6 }, () => testDb());
const MINUTE = 60_000;

async function shop() {
  const { s, sql } = await orderShop(db);
  await sql("update inventory_level set on_hand = 100");
  const owner = callerFor(db, s.ownerUserId, s.id);
  /** A cart with one unit (of the fixture's variant, or another), ready to check out: its cookie token. */
  const cart = (variantId = s.variantId) =>
    withStore(db, s.id, async (tx) => {
      const { token, hash } = await newCartToken();
      await addLine(tx, await createCart(tx, hash), variantId, 1);
      return token;
    });
  /** Variants of their own, each with stock: checkouts of them share no stock row, so no stock lock queues them. */
  const variants = async (n: number) => {
    const rows = await sql<{ id: string }>(
      "insert into product_variant (store_id, product_id, title, price_minor) select $1, $2, 'Size ' || g, 1000 from generate_series(1, $3::int) g returning id",
      [s.id, s.productId, n],
    );
    await sql("insert into inventory_level (store_id, variant_id, location_id, on_hand) select $1, v, l.id, 10 from unnest($2::uuid[]) v, location l", [s.id, rows.map((r) => r.id)]);
    return rows.map((r) => r.id);
  };
  const input = (email: string, paymentMethod: CheckoutInput["paymentMethod"] = "gateway"): CheckoutInput => ({ email, shippingAddress: address(), paymentMethod });
  const place = async (email: string, buyer: Buyer = {}, paymentMethod: CheckoutInput["paymentMethod"] = "gateway", on = db) =>
    placeOrderInUnits(on, s.id, await cart(), input(email, paymentMethod), "local", new Date(), buyer);
  const reserved = async () => (await sql<{ reserved: number }>("select sum(reserved)::int as reserved from inventory_level"))[0]!.reserved;
  return { s, sql, owner, cart, variants, input, place, reserved };
}

const reasonOf = (p: Promise<unknown>) =>
  p.then(
    () => "placed",
    (e: { code?: string; data?: { reason?: string; issues?: { path: string }[] } }) => `${e.code} ${e.data?.reason ?? ""} ${e.data?.issues?.[0]?.path ?? ""}`.trim(),
  );

describe("bank transfer and the hold window are the store's settings", () => {
  it("a new store does not take bank transfer: 400 naming paymentMethod, nothing held; turned on, it holds for the store's hours", async () => {
    const { owner, place, reserved, sql } = await shop();
    expect(await owner("store.current", {})).toMatchObject({ manualTransferEnabled: false, transferHoldHours: 72 });
    expect(await reasonOf(place("transfer@example.test", {}, "manual_transfer"))).toBe("BAD_REQUEST manual_transfer_off paymentMethod");
    expect(await reserved()).toBe(0);

    await owner("store.update", { manualTransferEnabled: true, transferHoldHours: 5 });
    const before = Date.now();
    const { order } = await place("transfer@example.test", {}, "manual_transfer");
    const gateway = (await place("online@example.test")).order;
    const [transfer, online] = await Promise.all(
      [order.id, gateway.id].map(async (id) => (await sql<{ expires_at: Date; placed_at: Date }>("select expires_at, placed_at from shop_order where id = $1", [id]))[0]!),
    );
    expect(transfer!.expires_at.getTime() - transfer!.placed_at.getTime()).toBe(5 * 60 * MINUTE);
    expect(online!.expires_at.getTime() - online!.placed_at.getTime()).toBe(30 * MINUTE);
    expect(transfer!.placed_at.getTime()).toBeGreaterThanOrEqual(before - 1000);
  });

  it("store.update takes transferHoldHours from 1 to 168 and names the field otherwise; Staff cannot change settings", async () => {
    const { s, owner } = await shop();
    for (const bad of [0, 169, 1.5, "72", null]) expect(await failureText(owner("store.update", { transferHoldHours: bad }))).toBe("BAD_REQUEST transferHoldHours");
    expect(await failureText(owner("store.update", { manualTransferEnabled: "yes" }))).toBe("BAD_REQUEST manualTransferEnabled");
    expect(await owner("store.update", { transferHoldHours: 168, manualTransferEnabled: true })).toMatchObject({ transferHoldHours: 168, manualTransferEnabled: true });
    const staff = await addMember(db, s, "staff");
    expect(await failureText(callerFor(db, staff.userId, s.id)("store.update", { transferHoldHours: 1 }))).toBe("FORBIDDEN");
    expect(await owner("store.current", {})).toMatchObject({ transferHoldHours: 168 });
  });
});

describe("at most 3 open unpaid orders per email and per network", () => {
  it("the fourth of one email is refused (409, email named, when the first releases); case is ignored; a cancelled one frees its place", async () => {
    const { place, owner, reserved } = await shop();
    const placed = [];
    for (let i = 0; i < UNPAID_HOLDS_PER_BUYER; i++) placed.push((await place("asha@example.test", { ip: `203.0.113.${i + 1}` })).order);
    const refused = await place("ASHA@example.test", { ip: "203.0.113.99" }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: "CONFLICT", data: { reason: "unpaid_orders_limit", issues: [{ path: "email" }] } });
    expect((refused as Error).message).toMatch(/already has 3 orders waiting for payment .* released in about (29|30) minutes\.$/);
    expect(await reserved()).toBe(3);
    expect(await reasonOf(place("someone.else@example.test", { ip: "203.0.113.99" }))).toBe("placed");
    await owner("orders.cancel", { orderId: placed[0]!.id });
    expect(await reasonOf(place("asha@example.test"))).toBe("placed");
    expect(await reasonOf(place("asha@example.test"))).toBe("CONFLICT unpaid_orders_limit email");
  });

  it("an order that is paid, or whose window has passed, holds nothing and does not count", async () => {
    const { s, place, sql } = await shop();
    const first = (await place("paid@example.test")).order;
    await callerFor(db, s.ownerUserId, s.id)("orders.setStatus", { orderId: first.id, action: "mark_paid" });
    const second = (await place("paid@example.test")).order;
    // Its window closed a minute ago; the expiry job has not run yet.
    await sql("update shop_order set expires_at = now() - interval '1 minute' where id = $1", [second.id]);
    for (let i = 0; i < UNPAID_HOLDS_PER_BUYER; i++) expect(await reasonOf(place("paid@example.test"))).toBe("placed");
    expect(await reasonOf(place("paid@example.test"))).toBe("CONFLICT unpaid_orders_limit email");
  });

  it("one network: three buyers' orders, the fourth refused; an IPv6 /64 is one network; another network, or none, is not counted", async () => {
    const { place } = await shop();
    for (const n of [1, 2, 3]) expect(await reasonOf(place(`buyer${n}@example.test`, { ip: "198.51.100.7" }))).toBe("placed");
    expect(await reasonOf(place("buyer4@example.test", { ip: "198.51.100.7" }))).toBe("CONFLICT unpaid_orders_limit");
    expect(await reasonOf(place("buyer4@example.test", { ip: "198.51.100.8" }))).toBe("placed");
    for (const host of ["1", "2", "3"]) expect(await reasonOf(place(`six${host}@example.test`, { ip: `2001:db8:1:2::${host}` }))).toBe("placed");
    expect(await reasonOf(place("six4@example.test", { ip: "2001:db8:1:2:ffff:ffff:ffff:ffff" }))).toBe("CONFLICT unpaid_orders_limit");
    expect(await reasonOf(place("six4@example.test", { ip: "2001:db8:1:3::1" }))).toBe("placed");
    expect(await reasonOf(place("nobody@example.test"))).toBe("placed");
  });

  it("the order keeps only a hash of the store and the network, never the address; another store's hash differs", async () => {
    const { s, place, sql } = await shop();
    const { order } = await place("hash@example.test", { ip: "192.0.2.44" });
    const [row] = await sql<{ buyer_network_hash: string; found: boolean }>(
      "select buyer_network_hash, (row_to_json(o)::text like '%192.0.2.44%') as found from shop_order o where id = $1",
      [order.id],
    );
    expect(row).toEqual({ buyer_network_hash: await buyerNetworkHash(s.id, "192.0.2.44"), found: false });
    expect(await buyerNetworkHash(crypto.randomUUID(), "192.0.2.44")).not.toBe(row!.buyer_network_hash);
    expect(await buyerNetworkHash(s.id, "::ffff:192.0.2.44")).toBe(row!.buyer_network_hash);
  });

  it("six checkouts of one email at once, on six connections: exactly three are placed", async () => {
    const { s, cart, input, reserved, variants } = await shop();
    const own = await variants(racers.length);
    const tokens = await Promise.all(own.map((v) => cart(v)));
    const results = await Promise.all(
      racers.map((r, i) => reasonOf(placeOrderInUnits(r, s.id, tokens[i], input("racer@example.test"), "local", new Date(), { ip: `192.0.2.${i + 1}` }))),
    );
    expect(results.filter((r) => r === "placed")).toHaveLength(UNPAID_HOLDS_PER_BUYER);
    expect(results.filter((r) => r === "CONFLICT unpaid_orders_limit email")).toHaveLength(racers.length - UNPAID_HOLDS_PER_BUYER);
    expect(await reserved()).toBe(UNPAID_HOLDS_PER_BUYER);
  });

  it("an open transaction's checkout (placeOrder) is bounded the same way", async () => {
    const { s, cart, input } = await shop();
    const inTx = async () => {
      const token = await cart();
      return withStore(db, s.id, (tx) => placeOrder(tx, token, input("tx@example.test"), "local", new Date(), { ip: "192.0.2.200" }));
    };
    for (let i = 0; i < UNPAID_HOLDS_PER_BUYER; i++) expect(await reasonOf(inTx())).toBe("placed");
    expect(await reasonOf(inTx())).toBe("CONFLICT unpaid_orders_limit email");
  });
});
