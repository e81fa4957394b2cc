import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { dueUnpaidOrders, expireOrder, remindUnpaid } from "#shared/orders/expiry";
import { paymentRequest } from "#shared/orders/payments";
import { applyPaymentStatus } from "#shared/orders/routines";
import { storeGateway } from "#shared/payments/select";
import { testDb } from "../../test/harness";
import { jobContext, servicesFor, type StoreProviders } from "../../test/jobs";
import { orderShop, placeGatewayOrder, placeTestOrder, TEST_GATEWAY } from "../../test/orders";
import type { ShopStore } from "../../test/storefront";
import { expireUnpaidOrders } from "./unpaid-expiry";

/**
 * {payments}-unpaid-expiry against real Postgres and the local gateway. The clock is the real time (other
 * test files share the database, and their fresh orders must not fall due), so due orders are placed in
 * the past: a gateway order two hours ago (its 30-minute window long closed), a transfer four days ago.
 */
const db = testDb();
const HOUR = 3_600_000;
const ago = (ms: number) => new Date(Date.now() - ms);

async function shop() {
  const { s, sql } = await orderShop(db);
  await sql("update inventory_level set on_hand = 10");
  const order = async (id: string) =>
    (await sql<{ status: string; payment_status: string }>("select status, payment_status from shop_order where id = $1", [id]))[0]!;
  const events = async (kind: string, orderId: string) =>
    (await sql<{ payload: Record<string, unknown> }>("select payload from outbox_event where kind = $1 and payload->>'orderId' = $2 order by created_at", [kind, orderId])).map((r) => r.payload);
  const reserved = async () => (await sql<{ reserved: number }>("select reserved from inventory_level where variant_id = $1", [s.variantId]))[0]!.reserved;
  return { s, sql, order, events, reserved };
}

const run = (stores: Record<string, StoreProviders> = {}) => {
  const ctx = jobContext(db, new Date(), servicesFor(stores));
  return expireUnpaidOrders(ctx).then((result) => ({ result, lines: ctx.log.lines }));
};

describe("{payments}-unpaid-expiry", () => {
  it("asks the gateway first: a payment that arrived is applied (paid, not expired), its stock kept", async () => {
    const { s, order, events, reserved } = await shop();
    const o = await placeGatewayOrder(db, s, 2, ago(2 * HOUR));
    await run({ [s.id]: { gateway: { reportStatus: "captured" } } });
    expect(await order(o.orderId)).toEqual({ status: "open", payment_status: "paid" });
    expect(await events("order.paid", o.orderId)).toHaveLength(1);
    expect(await events("order.expired", o.orderId)).toEqual([]);
    expect(await reserved()).toBe(2);
    await run({ [s.id]: { gateway: { reportStatus: "captured" } } });
    expect(await events("order.paid", o.orderId)).toHaveLength(1);
  });

  it("an authorized payment keeps the order too; a refunded (lapsed) or failed one does not", async () => {
    const { s, order } = await shop();
    const o = await placeGatewayOrder(db, s, 1, ago(2 * HOUR));
    await run({ [s.id]: { gateway: { reportStatus: "authorized" } } });
    expect(await order(o.orderId)).toEqual({ status: "open", payment_status: "authorized" });
    await run({ [s.id]: { gateway: { reportStatus: "refunded" } } });
    expect(await order(o.orderId)).toEqual({ status: "expired", payment_status: "authorized" });
  });

  it("otherwise expires: stock back, order.expired and inventory.released once; a second run and not-due orders change nothing", async () => {
    const { s, sql, order, events, reserved } = await shop();
    const gateway = await placeGatewayOrder(db, s, 2, ago(2 * HOUR));
    const transfer = (await placeTestOrder(db, s, { lines: [[s.variantId, 3]], paymentMethod: "manual_transfer", at: ago(4 * 24 * HOUR) })).order;
    const fresh = await placeGatewayOrder(db, s, 1);
    const freshTransfer = (await placeTestOrder(db, s, { paymentMethod: "manual_transfer", at: ago(HOUR) })).order;
    expect(await reserved()).toBe(7);
    const { lines } = await run();
    for (const id of [gateway.orderId, transfer.id]) {
      expect(await order(id)).toMatchObject({ status: "expired" });
      expect(await events("order.expired", id)).toEqual([{ orderId: id, number: expect.any(Number) }]);
    }
    expect(await events("inventory.released", transfer.id)).toEqual([
      { orderId: transfer.id, items: [{ variantId: s.variantId, locationId: expect.any(String), quantity: 3 }] },
    ]);
    expect(await reserved()).toBe(2);
    expect(await order(fresh.orderId)).toEqual({ status: "open", payment_status: "pending" });
    expect(await order(freshTransfer.id)).toEqual({ status: "open", payment_status: "unpaid" });
    expect(lines.find((l) => l.msg === "job.store" && l.storeId === s.id)).toMatchObject({ level: "info", expired: 2, reconciled: 0, left: 0 });

    await run();
    expect(await reserved()).toBe(2);
    expect((await sql<{ n: number }>("select count(*)::int as n from outbox_event where kind in ('order.expired', 'inventory.released') and payload->>'orderId' = any($1)", [[gateway.orderId, transfer.id]]))[0]!.n).toBe(4);
  });

  it("a gateway error for one order leaves it (logged) for the next run; the store's other due orders still expire", async () => {
    const { s, order, events } = await shop();
    const other = await orderShop(db);
    const broken = await placeTestOrder(db, s, { at: ago(2 * HOUR) });
    // Its reference is one the store's gateway refuses (another store's): getPayment fails with bad_request.
    const foreign = await (await storeGateway(TEST_GATEWAY, other.s.id)).gateway.createPayment(paymentRequest(broken.order, broken.attempt, "https://x.test/r"));
    await withStore(db, s.id, (tx) => applyPaymentStatus(tx, broken.attempt.id, "pending", "gateway", { providerRef: foreign.providerRef }));
    const plain = await placeGatewayOrder(db, s, 1, ago(2 * HOUR));
    const { lines } = await run();
    expect(await order(broken.order.id)).toEqual({ status: "open", payment_status: "pending" });
    expect(await events("order.expired", broken.order.id)).toEqual([]);
    expect(await order(plain.orderId)).toMatchObject({ status: "expired" });
    expect(lines.find((l) => l.msg === "unpaid_expiry.gateway_error")).toMatchObject({ level: "warn", storeId: s.id, orderId: broken.order.id, kind: "bad_request" });
    expect(lines.find((l) => l.msg === "job.store" && l.storeId === s.id)).toMatchObject({ expired: 1, left: 1 });
    // Once the gateway answers (here: the reference turns out to be one it knows), the next run decides.
    await withStore(db, s.id, (tx) => tx.$client.query("update payment_attempt set provider_ref = $2 where id = $1", [broken.attempt.id, plain.providerRef]));
    await run();
    expect(await order(broken.order.id)).toMatchObject({ status: "expired" });
  });

  it("one failing store among three: the others are done, the failure is logged with its store", async () => {
    const shops = [await shop(), await shop(), await shop()];
    const orders = await Promise.all(shops.map(({ s }) => placeGatewayOrder(db, s, 1, ago(2 * HOUR))));
    const bad: ShopStore = shops[1]!.s;
    const { result, lines } = await run({ [bad.id]: { gateway: "broken" } });
    expect(await shops[0]!.order(orders[0]!.orderId)).toMatchObject({ status: "expired" });
    expect(await shops[1]!.order(orders[1]!.orderId)).toEqual({ status: "open", payment_status: "pending" });
    expect(await shops[2]!.order(orders[2]!.orderId)).toMatchObject({ status: "expired" });
    expect(lines.filter((l) => l.msg === "job.store_failed")).toEqual([expect.objectContaining({ level: "error", storeId: bad.id })]);
    expect(result["failedStores"]).toBe(1);
  });

  it("reminds a transfer order once, a day before its window closes; never a gateway order or one not yet near", async () => {
    const { s, events, order } = await shop();
    const nearAt = ago(2.5 * 24 * HOUR);
    const near = (await placeTestOrder(db, s, { paymentMethod: "manual_transfer", at: nearAt })).order;
    const early = (await placeTestOrder(db, s, { paymentMethod: "manual_transfer", at: ago(HOUR) })).order;
    const gatewayOrder = await placeGatewayOrder(db, s, 1, ago(10 * 60_000));
    await run();
    expect(await events("order.payment_reminder", near.id)).toEqual([
      { orderId: near.id, number: near.number, expiresAt: new Date(nearAt.getTime() + 3 * 24 * HOUR).toISOString(), amount: near.total },
    ]);
    await run();
    // The store's own unit, run again whatever the store list says: the mark is what keeps it once.
    expect(await withStore(db, s.id, (tx) => remindUnpaid(tx, new Date(), 50))).toBe(0);
    expect(await events("order.payment_reminder", near.id)).toHaveLength(1);
    expect(await events("order.payment_reminder", early.id)).toEqual([]);
    expect(await events("order.payment_reminder", gatewayOrder.orderId)).toEqual([]);
    expect(await order(near.id)).toEqual({ status: "open", payment_status: "unpaid" });
  });

  it("expiry re-checks under the order's lock: an attempt that moved since the gateway was asked stops it", async () => {
    const { s, order } = await shop();
    const o = await placeGatewayOrder(db, s, 1, ago(2 * HOUR));
    const [seen] = (await withStore(db, s.id, (tx) => dueUnpaidOrders(tx, new Date(), 500))).filter((d) => d.id === o.orderId);
    // A webhook lands between the gateway's answer and the expiry's unit.
    await withStore(db, s.id, (tx) => applyPaymentStatus(tx, o.attemptId, "authorized", "webhook"));
    expect(await withStore(db, s.id, (tx) => expireOrder(tx, seen!, new Date()))).toBe(false);
    expect(await order(o.orderId)).toEqual({ status: "open", payment_status: "authorized" });
    // Before its window closed, nothing expires either (read as the job would read it an hour from now).
    const fresh = await placeGatewayOrder(db, s, 1);
    const [early] = (await withStore(db, s.id, (tx) => dueUnpaidOrders(tx, new Date(Date.now() + HOUR), 500))).filter((d) => d.id === fresh.orderId);
    expect(await withStore(db, s.id, (tx) => expireOrder(tx, early!, new Date()))).toBe(false);
  });
});
