import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { relayStores } from "#shared/jobs/outbox";
import { recordingQueues } from "../../test/jobs";
import type { RoutedEvent } from "#shared/events/routes";
import { createLogger } from "#shared/core/log";
import { localMailer, type LocalMailBehaviour } from "#shared/mail/local";
import { RetryLater } from "#shared/notifications/send";
import { testDb } from "../../test/harness";
import { orderShop, placeTestOrder } from "../../test/orders";
import { callerFor } from "../../test/procedures";
import type { ShopStore } from "../../test/storefront";
import { sendRestockAlerts } from "./alerts";
import { MAX_WAITING_PER_EMAIL, subscribeToRestock } from "./subscribe";

/**
 * Back-in-stock alerts against real Postgres (issue 12): stock coming back through the real procedures, the
 * real relay (its queues recorded) and the consumer with the local mailbox. One alert per subscriber, ever.
 */
const db = testDb();
const log = createLogger({ test: true }, "error");

async function soldOutShop() {
  const { s, sql } = await orderShop(db);
  await sql("update inventory_level set on_hand = 0");
  const call = callerFor(db, s.ownerUserId, s.id);
  const locationId = (await sql<{ id: string }>("select id from location"))[0]!.id;
  const subscribe = (email: string, variantId = s.variantId) => withStore(db, s.id, (tx) => subscribeToRestock(tx, { variantId, email }));
  /** Relays the store's due events with recording queues; answers what went to the restock queue. */
  const relay = async (): Promise<RoutedEvent[]> => {
    const { sent, queues } = recordingQueues();
    await relayStores(db, [s.id], queues, log, new Date(Date.now() + 60_000));
    return sent.filter((m) => m.route === "restock");
  };
  const deliver = (m: RoutedEvent, mail: LocalMailBehaviour = {}) => sendRestockAlerts(m, { db, log, mail: { mailer: localMailer(db, mail), fromDomain: "mail.test" } });
  const alerts = () => sql<{ recipient: string; subject: string; text_body: string }>("select recipient, subject, text_body from mailbox_message where tag = 'back_in_stock' order by recipient");
  const subscriptions = () => sql<{ email: string; status: string }>("select email, status from restock_subscription where email not like 'waiting-%' order by email");
  const adjust = (delta: number) => call("inventory.adjust", { variantId: s.variantId, locationId, delta, reason: delta > 0 ? "received" : "correction" });
  return { s, sql, call, subscribe, relay, deliver, alerts, subscriptions, adjust };
}

describe("back-in-stock alerts", () => {
  it("stock back → relayed once to the restock queue → each subscriber one alert, however often it is delivered or restocked", async () => {
    const shop = await soldOutShop();
    await shop.relay(); // the setup's own events
    await shop.subscribe("a@example.test");
    await shop.subscribe("B@Example.test");
    expect((await shop.subscribe("b@example.test")).created).toBe(false);
    await shop.adjust(3);
    const routed = await shop.relay();
    expect(routed.map((m) => m.kind)).toEqual(["inventory.restocked"]);
    expect(await shop.deliver(routed[0]!)).toEqual({ sent: 2, failed: 0, retry: 0, skipped: 0 });
    expect(await shop.deliver(routed[0]!)).toEqual({ sent: 0, failed: 0, retry: 0, skipped: 0 }); // delivered twice
    const mail = await shop.alerts();
    expect(mail.map((m) => m.recipient)).toEqual(["a@example.test", "b@example.test"]);
    expect(mail[0]!.subject).toBe(`Fixture is back · ${shop.s.name}`);
    expect(mail[0]!.text_body).toContain(`https://${shop.s.hostname}/products/fixture`);
    expect(await shop.subscriptions()).toEqual([
      { email: "a@example.test", status: "sent" },
      { email: "b@example.test", status: "sent" },
    ]);
    // Sold out and back again: nobody hears twice; a new subscription after the alert is a new one.
    await shop.adjust(-3);
    await shop.relay();
    await shop.subscribe("c@example.test");
    await shop.adjust(1);
    const again = await shop.relay();
    expect(await shop.deliver(again[0]!)).toMatchObject({ sent: 1 });
    expect((await shop.alerts()).map((m) => m.recipient)).toEqual(["a@example.test", "b@example.test", "c@example.test"]);
    expect(await shop.sql("select template, recipient, status from notification where template = 'back_in_stock' order by recipient")).toEqual([
      { template: "back_in_stock", recipient: "a@example.test", status: "sent" },
      { template: "back_in_stock", recipient: "b@example.test", status: "sent" },
      { template: "back_in_stock", recipient: "c@example.test", status: "sent" },
    ]);
  });

  it("sold out again by the time it is delivered: nobody is alerted and the subscriptions keep waiting", async () => {
    const shop = await soldOutShop();
    await shop.subscribe("late@example.test");
    await shop.adjust(1);
    const [restocked] = await shop.relay().then((r) => r.filter((m) => m.kind === "inventory.restocked"));
    await shop.adjust(-1);
    expect(await shop.deliver(restocked!)).toEqual({ sent: 0, failed: 0, retry: 0, skipped: 0 });
    expect(await shop.subscriptions()).toEqual([{ email: "late@example.test", status: "waiting" }]);
  });

  it("a refused address fails that alert only; a busy provider retries later without sending anyone twice", async () => {
    const shop = await soldOutShop();
    for (const e of ["bad@example.test", "ok1@example.test", "ok2@example.test"]) await shop.subscribe(e);
    await shop.adjust(2);
    const [m] = (await shop.relay()).filter((x) => x.kind === "inventory.restocked");
    expect(await shop.deliver(m!, { failFor: ["bad@example.test"] })).toEqual({ sent: 2, failed: 1, retry: 0, skipped: 0 });
    expect(await shop.subscriptions()).toEqual([
      { email: "bad@example.test", status: "failed" },
      { email: "ok1@example.test", status: "sent" },
      { email: "ok2@example.test", status: "sent" },
    ]);

    const busy = await soldOutShop();
    await busy.subscribe("x@example.test");
    await busy.adjust(1);
    const [b] = (await busy.relay()).filter((x) => x.kind === "inventory.restocked");
    await expect(busy.deliver(b!, { busy: true })).rejects.toBeInstanceOf(RetryLater);
    expect(await busy.subscriptions()).toEqual([{ email: "x@example.test", status: "waiting" }]);
    expect(await busy.deliver(b!)).toEqual({ sent: 1, failed: 0, retry: 0, skipped: 0 });
    expect((await busy.alerts()).map((x) => x.recipient)).toEqual(["x@example.test"]);
  });

  it("stock freed by a cancelled order counts as back (inventory.released)", async () => {
    const shop = await soldOutShop();
    await shop.adjust(1);
    const placed = await placeTestOrder(db, shop.s as ShopStore, { lines: [[shop.s.variantId, 1]] });
    await shop.relay();
    await shop.subscribe("waiter@example.test");
    await shop.call("orders.cancel", { orderId: placed.order.id });
    const routed = await shop.relay();
    expect(routed.map((m) => m.kind)).toEqual(["inventory.released"]);
    expect(await shop.deliver(routed[0]!)).toMatchObject({ sent: 1 });
  });

  it("subscribing: only a sold-out variant of an active product; one email waits on at most the cap", async () => {
    const shop = await soldOutShop();
    await expect(shop.subscribe("x@example.test", crypto.randomUUID())).rejects.toMatchObject({ code: "NOT_FOUND" });
    await shop.sql("update product_variant set preorder = true");
    await expect(shop.subscribe("x@example.test")).rejects.toMatchObject({ code: "CONFLICT", data: { reason: "in_stock" } });
    await shop.sql("update product_variant set preorder = false");
    // The cap counts waiting subscriptions across variants: fill it with copies of other variants.
    const productId = (await shop.sql<{ id: string }>("select id from product"))[0]!.id;
    for (let i = 0; i < MAX_WAITING_PER_EMAIL; i++) {
      const [v] = await shop.sql<{ id: string }>("insert into product_variant (store_id, product_id, title, price_minor) values ($1, $2, $3, 100) returning id", [
        shop.s.id,
        productId,
        `V${i}`,
      ]);
      await shop.subscribe("many@example.test", v!.id);
    }
    await expect(shop.subscribe("many@example.test")).rejects.toMatchObject({ code: "CONFLICT", data: { reason: "too_many" } });
    expect(await shop.call("backInStock.list", { productId })).toMatchObject({ total: MAX_WAITING_PER_EMAIL + 1 });
  });
});
