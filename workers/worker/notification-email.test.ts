import { env } from "cloudflare:workers";
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { WORK_QUEUES } from "#shared/events/routes";
import { NOTIFICATION_TEMPLATES } from "#shared/jobs/routing";
import { testDb } from "../../test/harness";
import { routedEvent } from "../../test/fakes/domains";
import { logsOf } from "../../test/logs";
import { orderShop, placeTestOrder } from "../../test/orders";
import { callerFor } from "../../test/procedures";
import type { WorkerBindings } from "./env";
import worker from "./index";

/**
 * A shipped order's email through the real queue path: the `order.fulfilled` event as the relay routes it,
 * the Worker's `{notifications}-send` consumer, the local mailer; the message kept in the local mailbox has
 * an HTML part and a text part, both with the order's items, parcel GST, tracking, address and link.
 */
const db = testDb();
const HOSTILE = `Kurta <script>alert("x")</script> & 'Co'`;

describe("the shipped email in the local mailbox", () => {
  it("has an HTML part and a text part with the same facts, the product title escaped in the HTML", async () => {
    const { s, sql } = await orderShop(db);
    const placed = await placeTestOrder(db, s, { email: "meera@example.test", state: "IN-KA" });
    const orderId = placed.order.id;
    await sql("update order_line set product_title = $1 where order_id = $2", [HOSTILE, orderId]);
    const owner = callerFor(db, s.ownerUserId, s.id);
    await owner("orders.setStatus", { orderId, action: "mark_paid" });
    const [parcel] = await sql<{ id: string }>("select id from fulfillment_order where order_id = $1", [orderId]);
    await owner("orders.fulfill", { orderId, parcelId: parcel!.id, tracking: { awb: "BD-778899", courierName: "Blue Dart", trackingUrl: "https://track.example/BD-778899" } });

    const event = { ...(await routedEvent(db, s.id, "order.fulfilled")), route: `notification:${NOTIFICATION_TEMPLATES["order.fulfilled"]}` };
    const message = { id: crypto.randomUUID(), timestamp: new Date(), attempts: 1, body: event };
    const batch = createMessageBatch(WORK_QUEUES.notifications.queue, [message]);
    const ctx = createExecutionContext();
    await logsOf(() => worker.queue(batch, env as unknown as WorkerBindings, ctx));
    expect((await getQueueResult(batch, ctx)).explicitAcks).toEqual([message.id]);

    const [mail] = await sql<{ subject: string; text_body: string; html_body: string }>("select subject, text_body, html_body from mailbox_message where idempotency_key = $1", [`${event.eventId}:order_shipped`]);
    expect(mail!.subject).toBe(`Order #${placed.order.number} has shipped · ${s.name}`);
    const [o] = await sql<{ total: string; igst: string }>("select o.total, f.igst from shop_order o join fulfillment_order f on f.order_id = o.id where o.id = $1", [orderId]);
    const rupees = (minor: string) => new Intl.NumberFormat("en-IN", { style: "currency", currency: "INR" }).format(Number(minor) / 100);
    expect(Number(o!.igst)).toBeGreaterThan(0);
    for (const part of [mail!.text_body, mail!.html_body]) {
      for (const said of [`Order #${placed.order.number}`, "Blue Dart, tracking number BD-778899", "IGST (included)", rupees(o!.igst), rupees(o!.total), "12 MG Road", "Karnataka", "shipped"]) {
        expect(part, said).toContain(said);
      }
    }
    expect(mail!.text_body).toContain(`1 × ${HOSTILE}`);
    expect(mail!.text_body).toContain("Payment: paid");
    expect(mail!.text_body).toMatch(new RegExp(`Your order: https://${s.hostname.replaceAll(".", "\\.")}/orders/${orderId}\\?k=\\S+`));
    expect(mail!.html_body).toContain("Kurta &#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62; &#38; &#39;Co&#39;");
    expect(mail!.html_body).not.toContain("<script");
    expect(mail!.html_body).toContain(`<a href="https://${s.hostname}/orders/${orderId}?k=`);
    expect(mail!.html_body).toContain('<table role="presentation" width="600"');
  });
});
