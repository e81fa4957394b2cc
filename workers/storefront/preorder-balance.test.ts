import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { runPreorderBalances } from "#shared/jobs/preorder-balance";
import { expireBalance, remindBalances, requestBalance } from "#shared/orders/preorders";
import { deriveLocalSecret, localConfirmationFields } from "#shared/payments/local-protocol";
import { testDb } from "../../test/harness";
import { jobContext } from "../../test/jobs";
import { callerFor, failureText } from "../../test/procedures";
import { call as call_ } from "../../test/call";
import { makeShop, Shopper, type ShopStore } from "../../test/storefront";
import worker from "./index";

/**
 * Pre-orders paid by deposit, end to end (docs/order-status.md, "Pre-orders"): the setting through
 * store.update, checkout and the order page through the real storefront Worker, stock arriving through
 * inventory.adjust, and {payments}-preorder-balance run with a controlled clock, against real Postgres.
 */
const db = testDb();
const DAY = 86_400_000;
const LOCAL_SECRET = "local-gateway-test-secret";
const address = { name: "Asha Rao", line1: "12 MG Road", city: "Pune", state: "IN-MH", postalCode: "411001", country: "IN" };

const sql = (s: ShopStore, text: string, values: unknown[] = []) => withStore(db, s.id, (tx) => tx.$client.query(text, values)).then((r) => r.rows);
const events = async (s: ShopStore, kind: string, orderId: string) =>
  (await sql(s, "select payload from outbox_event where kind = $1 and payload->>'orderId' = $2 order by created_at", [kind, orderId])).map((r) => r.payload as Record<string, unknown>);
const balanceJob = (at: number = Date.now()) => runPreorderBalances(jobContext(db, new Date(at)));

/**
 * A shop selling its fixture variant (₹10.00) as a pre-order with 1 on hand and a 20 % deposit, and a buyer
 * who checks out 3 of it by gateway: 1 unit reserved, 2 backordered (₹20.00), deposit 20 % of those
 * (₹4.00) plus the in-stock unit in full: ₹14.00 now, ₹16.00 balance.
 */
async function preorder(percent = 20) {
  const s = await makeShop(db);
  await sql(s, "update location set state = 'IN-MH'");
  await sql(s, "update product_variant set preorder = true where id = $1", [s.variantId]);
  await sql(s, "update inventory_level set on_hand = 1");
  const call = callerFor(db, s.ownerUserId, s.id);
  expect(await call("store.update", { preorderDepositPercent: percent })).toMatchObject({ preorderDepositPercent: percent });
  const locationId = (await sql(s, "select id from location"))[0].id as string;
  const buyer = new Shopper(s.hostname);
  await buyer.add(s.variantId, 3);
  const placed = await buyer.send("POST", "/api/checkout", { email: "asha@example.test", shippingAddress: address, paymentMethod: "gateway" });
  expect(placed.status).toBe(201);
  const orderId = (placed.body.order as { id: string }).id;
  const secret = await deriveLocalSecret(LOCAL_SECRET, s.id);
  /** Pays the newest attempt's page as the shopper: the gateway's signed confirmation, brought back. */
  const pay = async (redirectUrl: string) => {
    const ref = decodeURIComponent(redirectUrl.split("/-gateway/pay/")[1]!);
    const confirmed = await buyer.send("POST", `/api/checkout/${orderId}/confirm`, (await localConfirmationFields(ref, "captured", secret))!);
    expect(confirmed.status).toBe(200);
    return confirmed.body.order as { paymentStatus: string; status: string };
  };
  const stock = async () => (await sql(s, "select on_hand, reserved from inventory_level"))[0];
  const lines = async () => await sql(s, "select fl.quantity, fl.reserved, fl.backordered from fulfillment_order_line fl join fulfillment_order f on f.id = fl.fulfillment_order_id where f.order_id = $1", [orderId]);
  const attempts = async () => await sql(s, "select attempt, status, provider, amount::int from payment_attempt where order_id = $1 order by attempt", [orderId]);
  /** The buyer's order page: its balance line's state and whether it offers "Pay now". */
  const page = async () => {
    const res = await call_(worker, `http://storefront.test/orders/${orderId}`, { headers: { host: s.hostname, cookie: `wc_cart=${buyer.cookie}` } });
    expect(res.status).toBe(200);
    const text = await res.text();
    return { balance: /data-balance="([a-z]+)"/.exec(text)?.[1] ?? null, payNow: text.includes(">Pay now</button>") };
  };
  const arrive = (delta: number) => call("inventory.adjust", { variantId: s.variantId, locationId, delta, reason: "received" });
  return { s, call, buyer, orderId, placed, pay, stock, lines, attempts, page, arrive };
}

describe("pre-order deposit and balance", () => {
  it("checkout charges the deposit; stock arriving is reserved, then the balance is requested once and paid from the order page", async () => {
    const p = await preorder();
    const { s, orderId } = p;
    expect(await p.attempts()).toEqual([{ attempt: 1, status: "pending", provider: "local", amount: 1400 }]);
    expect(await sql(s, "select total::int, balance_amount::int from shop_order where id = $1", [orderId])).toEqual([{ total: 3000, balance_amount: 1600 }]);
    expect(await p.lines()).toEqual([{ quantity: 3, reserved: 1, backordered: 2 }]);
    expect(await events(s, "order.placed", orderId)).toEqual([expect.objectContaining({ total: 3000, deposit: 1400, balance: 1600 })]);

    expect(await p.pay(String((p.placed.body.payment as { redirectUrl: string }).redirectUrl))).toMatchObject({ paymentStatus: "partially_paid", status: "open" });
    expect(await p.page()).toEqual({ balance: "later", payNow: false });
    // Nothing arrived: the job has nothing to do, and paying again is refused until the balance is asked for.
    await balanceJob();
    expect(await events(s, "order.balance_requested", orderId)).toEqual([]);
    const early = await p.buyer.send("POST", `/api/checkout/${orderId}/pay`, {});
    expect([early.status, early.body.json?.data?.["reason"]]).toEqual([409, "balance_not_due"]);

    // One unit arrives: held for the order; the balance waits for the second.
    await p.arrive(1);
    await balanceJob();
    expect(await p.lines()).toEqual([{ quantity: 3, reserved: 2, backordered: 2 }]);
    expect(await p.stock()).toEqual({ on_hand: 2, reserved: 2 });
    expect(await events(s, "order.balance_requested", orderId)).toEqual([]);
    await p.arrive(5);
    await balanceJob();
    await balanceJob();
    // The order's own unit again, whatever the store list says: the lock and the mark keep it once.
    expect(await withStore(db, s.id, (tx) => requestBalance(tx, orderId, new Date()))).toEqual({ reserved: 0, requested: false });
    expect(await p.lines()).toEqual([{ quantity: 3, reserved: 3, backordered: 2 }]);
    expect(await p.stock()).toEqual({ on_hand: 7, reserved: 3 });
    expect(await p.attempts()).toEqual([
      { attempt: 1, status: "captured", provider: "local", amount: 1400 },
      { attempt: 2, status: "created", provider: "local", amount: 1600 },
    ]);
    expect(await p.page()).toEqual({ balance: "due", payNow: true });
    const requested = await events(s, "order.balance_requested", orderId);
    expect(requested).toEqual([{ orderId, number: expect.any(Number), amount: 1600, attemptId: expect.any(String), paymentMethod: "gateway", dueBy: expect.any(String) }]);
    expect((await events(s, "inventory.reserved", orderId)).map((e) => (e["items"] as { quantity: number }[]).map((i) => i.quantity))).toEqual([[1], [1], [1]]);

    // "Pay now" pays the requested balance with the attempt the job made.
    const paid = await p.buyer.send("POST", `/api/checkout/${orderId}/pay`, {});
    expect(paid.status).toBe(201);
    expect(paid.body.payment).toMatchObject({ attemptId: requested[0]!["attemptId"], attempt: 2, status: "pending" });
    expect(await p.pay(String((paid.body.payment as { redirectUrl: string }).redirectUrl))).toMatchObject({ paymentStatus: "paid", status: "open" });
    expect(await p.page()).toEqual({ balance: null, payNow: false });
    // Paid: later runs remind and expire nothing.
    await balanceJob(Date.now() + 8 * DAY);
    expect(await events(s, "order.balance_reminder", orderId)).toEqual([]);
    expect(await events(s, "order.balance_expired", orderId)).toEqual([]);
    expect(await p.stock()).toEqual({ on_hand: 7, reserved: 3 });
  });

  it("a requested balance is reminded once after 3 days; after 7 unpaid its units go back and the merchant gets a task", async () => {
    const p = await preorder(50);
    const { s, orderId, call } = p;
    await p.pay(String((p.placed.body.payment as { redirectUrl: string }).redirectUrl));
    await p.arrive(10);
    const t0 = Date.now();
    await balanceJob(t0);
    // 50 % of ₹20.00 backordered: ₹10.00 left to pay.
    expect(await events(s, "order.balance_requested", orderId)).toEqual([expect.objectContaining({ amount: 1000 })]);
    await balanceJob(t0 + 2 * DAY);
    expect(await events(s, "order.balance_reminder", orderId)).toEqual([]);
    await balanceJob(t0 + 3 * DAY + 60_000);
    await balanceJob(t0 + 3 * DAY + 120_000);
    expect(await withStore(db, s.id, (tx) => remindBalances(tx, new Date(t0 + 3 * DAY + 180_000), 50))).toBe(0);
    expect(await events(s, "order.balance_reminder", orderId)).toEqual([{ orderId, number: expect.any(Number), amount: 1000, dueBy: expect.any(String) }]);
    expect(await p.stock()).toEqual({ on_hand: 11, reserved: 3 });

    await balanceJob(t0 + 7 * DAY + 60_000);
    await balanceJob(t0 + 7 * DAY + 120_000);
    expect(await withStore(db, s.id, (tx) => expireBalance(tx, orderId, new Date(t0 + 7 * DAY + 180_000)))).toBe(false);
    expect(await events(s, "order.balance_expired", orderId)).toEqual([{ orderId, number: expect.any(Number), amount: 1000 }]);
    expect(await events(s, "inventory.released", orderId)).toEqual([{ orderId, items: [{ variantId: s.variantId, locationId: expect.any(String), quantity: 2 }] }]);
    // The unit reserved at checkout stays held; the two the job reserved are back on sale.
    expect(await p.stock()).toEqual({ on_hand: 11, reserved: 1 });
    expect(await p.lines()).toEqual([{ quantity: 3, reserved: 1, backordered: 2 }]);
    expect(await sql(s, "select status, payment_status from shop_order where id = $1", [orderId])).toEqual([{ status: "open", payment_status: "partially_paid" }]);
    const tasks = (await call("tasks.list", { kind: "balance_expired" })) as { items: { orderId: string; title: string }[] };
    expect(tasks.items).toEqual([expect.objectContaining({ orderId, title: expect.stringContaining("pre-order balance was not paid within 7 days") })]);
    const late = await p.buyer.send("POST", `/api/checkout/${orderId}/pay`, {});
    expect([late.status, late.body.json?.data?.["reason"]]).toEqual([409, "balance_expired"]);
    expect(await p.page()).toEqual({ balance: "expired", payNow: false });
    // The stock that came back does not make the job ask again.
    await balanceJob(t0 + 8 * DAY);
    expect(await events(s, "order.balance_requested", orderId)).toHaveLength(1);
  });

  it("a 100 % deposit (the default) charges everything at checkout: no balance", async () => {
    const p = await preorder(100);
    expect(await p.attempts()).toEqual([{ attempt: 1, status: "pending", provider: "local", amount: 3000 }]);
    expect(await sql(p.s, "select balance_amount::int from shop_order where id = $1", [p.orderId])).toEqual([{ balance_amount: 0 }]);
    expect(await p.pay(String((p.placed.body.payment as { redirectUrl: string }).redirectUrl))).toMatchObject({ paymentStatus: "paid" });
  });

  it("store.update takes preorderDepositPercent from 1 to 100 and names the field otherwise", async () => {
    const s = await makeShop(db);
    const call = callerFor(db, s.ownerUserId, s.id);
    expect(await call("store.current")).toMatchObject({ preorderDepositPercent: 100 });
    for (const bad of [0, 101, 12.5, "20"]) expect(await failureText(call("store.update", { preorderDepositPercent: bad }))).toBe("BAD_REQUEST preorderDepositPercent");
    expect(await call("store.update", { preorderDepositPercent: 1 })).toMatchObject({ preorderDepositPercent: 1 });
  });
});
