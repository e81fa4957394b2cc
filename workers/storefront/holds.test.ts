import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { testDb } from "../../test/harness";
import { call } from "../../test/call";
import { address as orderAddress, checkoutForm, offerBankTransfer } from "../../test/orders";
import { callerFor } from "../../test/procedures";
import { cartOf, makeShop, Shopper, type ShopStore } from "../../test/storefront";
import worker from "./index";

/**
 * The shopper's side of unpaid holds (decision 0020) through the real storefront Worker: bank transfer
 * offered only where the store turned it on, the hold limit against a script looping cart, code and
 * checkout, and what a pre-order pays now and later on the product and checkout pages.
 */
const db = testDb();
/** A challenge the attacker solved (Turnstile's test token, which the tests' local challenge accepts). */
const SOLVED = { "cf-turnstile-response": "XXXX.DUMMY.TOKEN.XXXX" };
const address = orderAddress();

const sql = (s: ShopStore, text: string, values: unknown[] = []) => withStore(db, s.id, (tx) => tx.$client.query(text, values)).then((r) => r.rows);

async function page(shopper: Shopper, path: string) {
  const res = await call(worker, `http://storefront.test${path}`, { headers: { host: shopper.host, ...(shopper.cookie ? { cookie: `wc_cart=${shopper.cookie}` } : {}) } });
  return { status: res.status, html: await res.text() };
}

async function shop(onHand = 5) {
  const s = await makeShop(db);
  await sql(s, "update location set state = 'IN-MH'");
  await sql(s, "update inventory_level set on_hand = $1", [onHand]);
  const handle = (await sql(s, "select handle from product where id = $1", [s.productId]))[0]!.handle as string;
  return { s, handle, owner: callerFor(db, s.ownerUserId, s.id) };
}

describe("bank transfer on the storefront", () => {
  it("off (a new store): the checkout page does not offer it, the API and the form refuse it naming paymentMethod", async () => {
    const { s } = await shop();
    const buyer = new Shopper(s.hostname);
    await buyer.add(s.variantId, 1);
    const html = (await page(buyer, "/checkout")).html;
    expect(html).toContain('value="gateway"');
    expect(html).not.toContain('value="manual_transfer"');
    const api = await buyer.send("POST", "/api/checkout", { email: "asha@example.test", shippingAddress: address, paymentMethod: "manual_transfer" });
    expect(api.status).toBe(400);
    expect(api.body.json).toMatchObject({ code: "BAD_REQUEST", data: { reason: "manual_transfer_off", issues: [{ path: "paymentMethod" }] } });
    const form = await buyer.form("/checkout", { ...checkoutForm, paymentMethod: "manual_transfer" });
    expect(form.status).toBe(400);
    expect(await sql(s, "select count(*)::int as n from shop_order where cart_id is not null")).toEqual([{ n: 0 }]);
    expect(cartOf(await buyer.get()).lines).toHaveLength(1);
  });

  it("on: offered with the store's hold, and the order holds for it", async () => {
    const { s, owner } = await shop();
    await owner("store.update", { manualTransferEnabled: true, transferHoldHours: 48 });
    const buyer = new Shopper(s.hostname);
    await buyer.add(s.variantId, 1);
    expect((await page(buyer, "/checkout")).html).toMatch(/value="manual_transfer"[^>]*\/?> Bank transfer \(we hold your items for 2 days/);
    const placed = await buyer.form("/checkout", { ...checkoutForm, paymentMethod: "manual_transfer" });
    expect(placed.status).toBe(303);
    const [row] = await sql(s, "select extract(epoch from expires_at - placed_at)::int as held from shop_order where cart_id is not null");
    expect(row).toEqual({ held: 48 * 3600 });
  });
});

describe("a script holding stock", () => {
  it("loops new cart, code and checkout from one address: past 3 unpaid orders it is refused, and the rest of the stock stays on sale", async () => {
    const { s, handle } = await shop(10);
    await withStore(db, s.id, offerBankTransfer);
    const ip = { "cf-connecting-ip": "203.0.113.66" };
    const answers: number[] = [];
    for (let round = 0; round < 6; round++) {
      const bot = new Shopper(s.hostname);
      await bot.send("POST", "/api/cart/lines", { variantId: s.variantId, quantity: 2 }, ip);
      await bot.send("POST", "/api/cart/discount", { code: s.discountCode }, ip);
      const placed = await bot.send("POST", "/api/checkout", { email: `bot${round}@example.test`, shippingAddress: address, paymentMethod: "manual_transfer" }, { ...ip, ...SOLVED });
      answers.push(placed.status);
      if (placed.status === 409) expect(placed.body.json).toMatchObject({ data: { reason: "unpaid_orders_limit" } });
    }
    expect(answers).toEqual([201, 201, 201, 409, 409, 409]);
    // 6 of 10 units held; a shopper elsewhere still sees 4 for sale and buys them.
    expect((await page(new Shopper(s.hostname), `/products/${handle}?c=${crypto.randomUUID()}`)).html).toContain("4 available");
    const shopper = new Shopper(s.hostname);
    await shopper.send("POST", "/api/cart/lines", { variantId: s.variantId, quantity: 4 }, { "cf-connecting-ip": "198.51.100.20" });
    const bought = await shopper.send("POST", "/api/checkout", { email: "real@example.test", shippingAddress: address, paymentMethod: "gateway" }, { "cf-connecting-ip": "198.51.100.20" });
    expect(bought.status).toBe(201);
  });
});

describe("pre-order deposits on the storefront", () => {
  async function preorderShop(percent: number) {
    const { s, handle, owner } = await shop(1);
    await sql(s, "update product_variant set preorder = true where id = $1", [s.variantId]);
    await owner("store.update", { preorderDepositPercent: percent });
    return { s, handle, owner };
  }

  it("the product page says what a pre-order pays now, what later and when; a new percent shows at once", async () => {
    const { s, handle, owner } = await preorderShop(30);
    const html = (await page(new Shopper(s.hostname), `/products/${handle}`)).html;
    expect(html).toContain("Pre-order: pay 30% now");
    // ₹10.00 each: ₹3.00 at checkout, ₹7.00 when it arrives; the 1 in stock is paid in full.
    expect(html).toMatch(/₹3\.00 now, ₹7\.00 when it arrives \(the 1 in stock are paid in full and ship now\)/);
    expect(html).toContain("you then have 7 days to pay the rest");
    await owner("store.update", { preorderDepositPercent: 100 });
    const full = (await page(new Shopper(s.hostname), `/products/${handle}`)).html;
    expect(full).toContain("Pre-orders are paid in full at checkout and ship when they arrive.");
    expect(full).not.toContain("pay 30% now");
  });

  it("the checkout page says what is paid now and later, and the order charges exactly that", async () => {
    const { s } = await preorderShop(20);
    const buyer = new Shopper(s.hostname);
    await buyer.add(s.variantId, 3);
    const html = (await page(buyer, "/checkout")).html;
    // 1 unit in stock (₹10.00 in full) and 2 pre-ordered (₹20.00: ₹4.00 now, ₹16.00 later).
    expect(html).toMatch(/<dd data-pay="now">₹14\.00 and shipping<\/dd>/);
    expect(html).toMatch(/<dd data-pay="later">₹16\.00<\/dd>/);
    expect(html).toContain("you pay 20% of their price now and the rest, ₹16.00, when they arrive. We email you then, and you have 7 days to pay it");
    const placed = await buyer.form("/checkout", { ...checkoutForm, paymentMethod: "gateway" });
    expect(placed.status).toBe(303);
    expect(await sql(s, "select balance_amount::int as later, (total - balance_amount)::int as now from shop_order where cart_id is not null")).toEqual([{ later: 1600, now: 1400 }]);
  });

  it("paid in full (100 %), or nothing backordered: no later amount", async () => {
    const { s } = await preorderShop(100);
    const buyer = new Shopper(s.hostname);
    await buyer.add(s.variantId, 2);
    const full = (await page(buyer, "/checkout")).html;
    expect(full).toContain("Pre-ordered items are paid in full now and ship when they arrive.");
    expect(full).not.toContain('data-pay="later"');
    const { s: other } = await preorderShop(20);
    const inStock = new Shopper(other.hostname);
    await inStock.add(other.variantId, 1);
    const html = (await page(inStock, "/checkout")).html;
    expect(html).not.toContain("data-preorder-terms");
  });
});
