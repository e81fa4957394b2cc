import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { expireStoreUnpaid } from "#shared/jobs/unpaid-expiry";
import { placeOrderInUnits } from "#shared/orders/checkout";
import { applyPaymentStatus, recomputeOrderStatuses } from "#shared/orders/routines";
import { newCartToken } from "#shared/storefront/cart";
import { addLine, createCart } from "#shared/storefront/cart-changes";
import { testDb } from "../../test/harness";
import { jobContext } from "../../test/jobs";
import { address, orderShop } from "../../test/orders";
import { callerFor } from "../../test/procedures";

/**
 * A discount's use is given back when an unpaid order closes without its money (issue 20 item 3): the
 * expiry of its window and a cancel, each in the unit that closes the order, exactly once, whatever runs
 * again or races it. Money that lands on the closed order later counts the use again, once.
 */
const db = testDb();
// A Database keeps one connection: the cancel and the payment each get their own, as two requests do.
const racers = [testDb(), testDb()];
const HOUR = 3_600_000;

async function shop(usageLimit: number | null = null) {
  const { s, sql } = await orderShop(db);
  await sql("update inventory_level set on_hand = 50");
  await sql("update discount set usage_limit = $2 where code = $1", [s.discountCode, usageLimit]);
  const owner = callerFor(db, s.ownerUserId, s.id);
  /** An order of one unit with the store's code on its cart, placed at `at` (a gateway order: no payment made yet). */
  const place = async (email: string, at = new Date()) => {
    const token = await withStore(db, s.id, async (tx) => {
      const { token, hash } = await newCartToken();
      const cart = await createCart(tx, hash);
      await addLine(tx, cart, s.variantId, 1);
      await tx.$client.query("update cart set discount_id = (select id from discount where code = $1) where token_hash = $2", [s.discountCode, hash]);
      return token;
    });
    return (await placeOrderInUnits(db, s.id, token, { email, shippingAddress: address(), paymentMethod: "gateway" }, "local", at)).order;
  };
  const uses = async () => (await sql<{ usage_count: number }>("select usage_count from discount where code = $1", [s.discountCode]))[0]!.usage_count;
  const expire = () => expireStoreUnpaid(jobContext(db, new Date()), s.id);
  const attemptOf = async (orderId: string) => (await sql<{ id: string }>("select id from payment_attempt where order_id = $1", [orderId]))[0]!.id;
  const statusOf = async (orderId: string) => (await sql<{ status: string; payment_status: string }>("select status, payment_status from shop_order where id = $1", [orderId]))[0]!;
  return { s, sql, owner, place, uses, expire, attemptOf, statusOf };
}

const reasonOf = (p: Promise<unknown>) => p.then(() => "ok", (e: { code?: string; data?: { reason?: string } }) => `${e.code} ${e.data?.reason}`);

describe("a discount's use comes back when an unpaid order closes", () => {
  it("expiry: the use is given back with the release, once; a code used up by the expired order can be used again", async () => {
    const { place, uses, expire, statusOf, owner } = await shop(1);
    const order = await place("late@example.test", new Date(Date.now() - 2 * HOUR));
    expect(await uses()).toBe(1);
    // Used up: nobody else can take it while the unpaid order holds it.
    expect(await reasonOf(place("next@example.test"))).toBe("CONFLICT discount_unavailable");
    expect(await expire()).toMatchObject({ expired: 1 });
    expect(await statusOf(order.id)).toEqual({ status: "expired", payment_status: "unpaid" });
    expect(await uses()).toBe(0);
    expect(await expire()).toMatchObject({ expired: 0 });
    expect(await reasonOf(owner("orders.cancel", { orderId: order.id }))).toBe("CONFLICT order_expired");
    expect(await uses()).toBe(0);
    await place("next@example.test");
    expect(await uses()).toBe(1);
  });

  it("cancel: the use is given back with the release, once; a second cancel changes nothing, a late payment counts it again", async () => {
    const { s, place, uses, owner, attemptOf, statusOf } = await shop();
    const kept = await place("kept@example.test");
    const order = await place("gone@example.test");
    expect(await uses()).toBe(2);
    await owner("orders.cancel", { orderId: order.id });
    expect(await uses()).toBe(1);
    await owner("orders.cancel", { orderId: order.id });
    expect(await uses()).toBe(1);
    const attemptId = await attemptOf(order.id);
    await withStore(db, s.id, (tx) => applyPaymentStatus(tx, attemptId, "captured", "webhook"));
    expect(await statusOf(order.id)).toEqual({ status: "cancelled", payment_status: "paid" });
    expect(await uses()).toBe(2);
    await withStore(db, s.id, (tx) => applyPaymentStatus(tx, attemptId, "captured", "webhook"));
    expect(await uses()).toBe(2);
    expect(await statusOf(kept.id)).toEqual({ status: "open", payment_status: "unpaid" });
  });

  it("a payment after the expiry counts the use again in its own unit, past the code's limit, exactly once", async () => {
    const { s, sql, place, uses, expire, attemptOf, statusOf } = await shop(1);
    const late = await place("late@example.test", new Date(Date.now() - 2 * HOUR));
    expect(await expire()).toMatchObject({ expired: 1 });
    expect(await uses()).toBe(0);
    // The use it gave back is taken by the next shopper: the code is used up again.
    await place("next@example.test");
    expect(await uses()).toBe(1);
    const attemptId = await attemptOf(late.id);
    await withStore(db, s.id, (tx) => applyPaymentStatus(tx, attemptId, "captured", "webhook"));
    expect(await statusOf(late.id)).toEqual({ status: "expired", payment_status: "paid" });
    // The money moved with the code: both uses stand, one past the limit of 1.
    expect(await uses()).toBe(2);
    expect(await sql("select kind from merchant_task where order_id = $1", [late.id])).toEqual([{ kind: "paid_late" }]);
    // Refunded in full, then paid again through another attempt: the order is paid late a second time, and
    // its use is not counted a second time.
    await withStore(db, s.id, async (tx) => {
      await tx.$client.query("insert into refund (store_id, order_id, payment_attempt_id, amount, status) select store_id, order_id, id, amount, 'processed' from payment_attempt where id = $1", [attemptId]);
      await recomputeOrderStatuses(tx, late.id);
    });
    expect(await statusOf(late.id)).toEqual({ status: "expired", payment_status: "refunded" });
    const [second] = await sql<{ id: string }>(
      "insert into payment_attempt (store_id, order_id, attempt, idempotency_key, provider, amount) select store_id, order_id, 2, order_id || ':2', provider, amount from payment_attempt where id = $1 returning id",
      [attemptId],
    );
    await withStore(db, s.id, (tx) => applyPaymentStatus(tx, second!.id, "captured", "webhook"));
    expect(await statusOf(late.id)).toEqual({ status: "expired", payment_status: "paid" });
    expect(await uses()).toBe(2);
  });

  it("a paid order keeps its use: cancel is refused, and its expiry never comes", async () => {
    const { s, place, uses, owner, expire, attemptOf } = await shop();
    const order = await place("payer@example.test", new Date(Date.now() - 2 * HOUR));
    const attemptId = await attemptOf(order.id);
    await withStore(db, s.id, (tx) => applyPaymentStatus(tx, attemptId, "captured", "webhook"));
    expect(await reasonOf(owner("orders.cancel", { orderId: order.id }))).toBe("CONFLICT refund_first");
    expect(await expire()).toMatchObject({ expired: 0 });
    expect(await uses()).toBe(1);
  });

  it("a cancel racing a capture, on two connections: the use comes back exactly when the cancel won, never twice", async () => {
    const { s, place, uses, attemptOf, statusOf } = await shop();
    const outcomes: string[] = [];
    for (let round = 0; round < 4; round++) {
      const order = await place(`race${round}@example.test`);
      const attemptId = await attemptOf(order.id);
      const [cancel, capture] = await Promise.allSettled([
        callerFor(racers[0]!, s.ownerUserId, s.id)("orders.cancel", { orderId: order.id }),
        withStore(racers[1]!, s.id, (tx) => applyPaymentStatus(tx, attemptId, "captured", "webhook")),
      ]);
      expect(capture.status).toBe("fulfilled");
      const status = await statusOf(order.id);
      if (cancel.status === "fulfilled") expect(status).toEqual({ status: "cancelled", payment_status: "paid" });
      else {
        expect(cancel.reason).toMatchObject({ code: "CONFLICT", data: { reason: "refund_first" } });
        expect(status).toEqual({ status: "open", payment_status: "paid" });
      }
      outcomes.push(status.status);
      // Each order placed counted one use; one the cancel closed gave it back, once, and its late capture
      // counted it again: every order paid keeps its use, whoever won.
      expect(await uses()).toBe(outcomes.length);
    }
  });
});
