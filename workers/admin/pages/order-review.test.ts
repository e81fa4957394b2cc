import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { applyPaymentStatus } from "#shared/orders/routines";
import { page, sessionFor } from "../../../test/admin";
import { testDb } from "../../../test/harness";
import { orderShop, placeGatewayOrder } from "../../../test/orders";

/** A payment under review (issue 20 item 5) on the order page: the attempt says so, and the task links to it. */
const db = testDb();

const section = (html: string, id: string) => {
  const start = html.indexOf(`<section id="${id}"`);
  return start < 0 ? "" : html.slice(start, html.indexOf("</section>", start));
};

describe("Order page: a payment that did not add up", () => {
  it("shows the attempt under review with what was reported, and the to-do links to it", async () => {
    const { s } = await orderShop(db);
    const o = await placeGatewayOrder(db, s);
    await withStore(db, s.id, (tx) =>
      applyPaymentStatus(tx, o.attemptId, "captured", "webhook", { reported: { amount: 400, currency: "INR", paymentId: "lpay_0123456789abcdef0123" } }),
    );
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const html = await (await page(owner, `/orders/${o.orderId}`)).text();
    const payments = section(html, "payments");
    expect(payments).toContain('id="attempt-1"');
    expect(payments).toContain('data-status="under_review"');
    expect(payments).toContain('data-review="amount_below"');
    expect(payments).toMatch(/Reported captured for ₹4\.00 \(payment lpay_0123456789abcdef0123\) by webhook, <time[^>]*>[^<]+<\/time>: less than this attempt asked/);
    const todo = section(html, "tasks");
    expect(todo).toMatch(/<li data-task="payment_review"><a href="#attempt-1">Payment attempt 1 was reported captured for ₹4\.00, less than the ₹10\.00 it asked: it does not count/);
    expect(section(html, "timeline")).toContain("A payment did not add up: held for review");
    // The order did not move: nothing was paid.
    expect(html).not.toContain('data-status="paid"');
  });
});
