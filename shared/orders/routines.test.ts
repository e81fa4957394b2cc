import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { Database } from "#shared/db/database";
import { withStore } from "#shared/db/with-store";
import { makeStore, testDb, type TestStore } from "../../test/harness";
import { applyPaymentStatus, type PaymentTrigger } from "./routines";
import type { AttemptStatus } from "../rules/status";

/** The status-apply routine and the recompute around their pure decisions, on real rows (makeStore's fixture order). */
const db = testDb();
const bindings = env as unknown as { DATABASE_URL: string; DB_WS_PROXY?: string };

async function fixture(): Promise<{ store: TestStore; orderId: string; attemptId: string }> {
  const store = await makeStore(db);
  const [row] = await withStore(db, store.id, async (tx) => (await tx.$client.query("select id, order_id from payment_attempt")).rows);
  return { store, orderId: row.order_id, attemptId: row.id };
}
const apply = (s: TestStore, attemptId: string, to: AttemptStatus, trigger: PaymentTrigger = "webhook") =>
  withStore(db, s.id, (tx) => applyPaymentStatus(tx, attemptId, to, trigger));
const orderOf = (s: TestStore, id: string) =>
  withStore(db, s.id, async (tx) => (await tx.$client.query("select status, payment_status from shop_order where id = $1", [id])).rows[0]);
const events = (s: TestStore, kind: string) =>
  withStore(db, s.id, async (tx) => Number((await tx.$client.query("select count(*) as n from outbox_event where kind = $1", [kind])).rows[0].n));

describe("the payment status routine", () => {
  it("moves forward only, recomputes the order, and writes order.paid once", async () => {
    const { store, orderId, attemptId } = await fixture();
    expect(await apply(store, attemptId, "pending", "gateway")).toMatchObject({ applied: true, status: "pending", order: { paymentStatus: "pending", status: "open" } });
    expect(await apply(store, attemptId, "captured")).toMatchObject({ applied: true, status: "captured", order: { paymentStatus: "paid" } });
    expect(await apply(store, attemptId, "captured", "client_confirmation")).toMatchObject({ applied: false, status: "captured" });
    expect(await apply(store, attemptId, "authorized")).toMatchObject({ applied: false, status: "captured" });
    expect(await orderOf(store, orderId)).toEqual({ status: "open", payment_status: "paid" });
    expect(await events(store, "order.paid")).toBe(1);
  });

  it("racing triggers capture once: 10 concurrent captures, one applied, one order.paid", async () => {
    const { store, attemptId } = await fixture();
    const triggers: PaymentTrigger[] = ["webhook", "client_confirmation", "mark_paid", "expiry_reconciliation", "webhook"];
    // Each trigger on its own connection (one test Database has one), so they really race at the row lock.
    const dbs = Array.from({ length: 10 }, () => new Database({ url: bindings.DATABASE_URL, wsProxy: bindings.DB_WS_PROXY || undefined }));
    const results = await Promise.all(
      dbs.map((own, i) => withStore(own, store.id, (tx) => applyPaymentStatus(tx, attemptId, "captured", triggers[i % triggers.length]!))),
    ).finally(() => Promise.all(dbs.map((d) => d.close())));
    expect(results.filter((r) => r.applied)).toHaveLength(1);
    expect(new Set(results.map((r) => r.status))).toEqual(new Set(["captured"]));
    expect(await events(store, "order.paid")).toBe(1);
  });

  it("a gateway failure marks the attempt failed and the order stays open and unpaid; a late capture still counts", async () => {
    const { store, orderId, attemptId } = await fixture();
    const failed = await withStore(db, store.id, (tx) => applyPaymentStatus(tx, attemptId, "failed", "gateway", { error: "gateway unavailable" }));
    expect(failed).toMatchObject({ applied: true, status: "failed", order: { status: "open", paymentStatus: "unpaid" } });
    expect(await events(store, "payment.failed")).toBe(1);
    expect(await apply(store, attemptId, "pending")).toMatchObject({ applied: false, status: "failed" });
    expect(await apply(store, attemptId, "captured")).toMatchObject({ applied: true, order: { paymentStatus: "paid" } });
    expect(await orderOf(store, orderId)).toEqual({ status: "open", payment_status: "paid" });
  });

  it("another store's attempt is not found", async () => {
    const [a, b] = [await fixture(), await fixture()];
    await expect(apply(a.store, b.attemptId, "captured")).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect(await orderOf(b.store, b.orderId)).toEqual({ status: "open", payment_status: "unpaid" });
  });
});

describe("a payment that arrives after the order stopped waiting", () => {
  it("an expired order stays expired, shows paid, and writes order.paid_late instead of order.paid", async () => {
    const { store, orderId, attemptId } = await fixture();
    await withStore(db, store.id, (tx) => tx.$client.query("update shop_order set status = 'expired' where id = $1", [orderId]));
    expect(await apply(store, attemptId, "captured")).toMatchObject({ applied: true, order: { status: "expired", paymentStatus: "paid" } });
    expect(await orderOf(store, orderId)).toEqual({ status: "expired", payment_status: "paid" });
    expect(await events(store, "order.paid")).toBe(0);
    expect(await events(store, "order.paid_late")).toBe(1);
    // A second report changes nothing and writes nothing more.
    expect(await apply(store, attemptId, "captured")).toMatchObject({ applied: false });
    expect(await events(store, "order.paid_late")).toBe(1);
  });
});
