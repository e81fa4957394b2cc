import { describe, expect, it } from "vitest";
import { emit } from "#shared/db/outbox";
import { withStore } from "#shared/db/with-store";
import { createLogger } from "#shared/core/log";
import { SANDBOXED_PAGE_POLICY } from "#shared/http/security-headers";
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

  it("open a message's HTML part on its own page under a sandboxed policy with no script; another store's message is not found", async () => {
    const { s } = await orderShop(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const { order } = await placeTestOrder(db, s, { email: "ravi@example.test" });
    const eventId = await withStore(db, s.id, (tx) => emit(tx, "order.placed", { orderId: order.id }));
    const message = { eventId, storeId: s.id, kind: "order.placed", payload: { orderId: order.id }, createdAt: new Date().toISOString(), route: "notification:order_confirmation" };
    expect(await sendNotification(message, { db, log, mail: { mailer: localMailer(db), fromDomain: "mail.test" } })).toBe("sent");
    const box = await (await page(owner, "/mailbox")).text();
    const href = /<a href="(\/mailbox\/[0-9a-f-]{36})" data-part="html">/.exec(box)![1]!;
    const res = await page(owner, href);
    expect(res.status).toBe(200);
    const csp = res.headers.get("content-security-policy")!;
    expect(csp).toBe(SANDBOXED_PAGE_POLICY);
    expect(csp).toContain("sandbox");
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toMatch(/script-src/);
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    const html = await res.text();
    expect(html).toContain('<table role="presentation" width="600"');
    expect(html).toContain(`Thank you for your order #${order.number}`);
    expect(html).toContain("Payment: <strong>");

    const other = await orderShop(db);
    const stranger = await sessionFor(db, other.s.ownerUserId, other.s.id);
    const elsewhere = await page(stranger, href);
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect((await page(owner, "/mailbox/not-a-uuid")).status).toBe(404);
  });
});
