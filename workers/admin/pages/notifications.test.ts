import { describe, expect, it } from "vitest";
import { emit } from "#shared/db/outbox";
import { withStore } from "#shared/db/with-store";
import { createLogger } from "#shared/core/log";
import { localMailer } from "#shared/mail/local";
import { sendNotification } from "#shared/notifications/send";
import { page, sessionFor } from "../../../test/admin";
import { testDb } from "../../../test/harness";
import { orderShop, placeTestOrder } from "../../../test/orders";

/** /notifications and /mailbox through the real admin routes against real Postgres. */
const db = testDb();
const log = createLogger({ test: true }, "error");

describe("Notifications pages", () => {
  it("show what was sent to the shopper and the local mailbox's message; one procedure call each", async () => {
    const { s } = await orderShop(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const { order } = await placeTestOrder(db, s, { email: "meera@example.test" });
    const eventId = await withStore(db, s.id, (tx) => emit(tx, "order.paid", { orderId: order.id }));
    const message = { eventId, storeId: s.id, kind: "order.paid", payload: { orderId: order.id }, createdAt: new Date().toISOString(), route: "notification:payment_received" };
    expect(await sendNotification(message, { db, log, mail: { mailer: localMailer(db), fromDomain: "mail.test" } })).toBe("sent");
    const logPage = await (await page(owner, "/notifications")).text();
    expect(logPage).toContain('<tr data-template="payment_received">');
    expect(logPage).toContain("meera@example.test");
    expect(logPage).toContain('data-status="sent"');
    const box = await (await page(owner, "/mailbox")).text();
    expect(box).toContain(`Payment received for order #${order.number} · ${s.name}`);
    expect(box).toContain(`We have received your payment of`);
  });
});
