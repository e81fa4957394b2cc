import { describe, expect, it, vi } from "vitest";
import { page, postForm, rpc, rpcJson, sessionFor, type Browser } from "../../../test/admin";
import { testDb } from "../../../test/harness";
import { orderShop, placeTestOrder } from "../../../test/orders";
import { addMember, outboxPayloads } from "../../../test/procedures";

/** One order's page (`/orders/<id>`) and its actions, through the real routes against real Postgres. */
const db = testDb();

const inr = (minor: number) => new Intl.NumberFormat("en-IN", { style: "currency", currency: "INR" }).format(minor / 100);
const section = (html: string, id: string) => {
  const start = html.indexOf(`<section id="${id}"`);
  return start < 0 ? "" : html.slice(start, html.indexOf("</section>", start));
};
/** The action forms the page offers, by name. */
const offered = (html: string) => [...html.matchAll(/data-action="([a-z_]+)"/g)].map((m) => m[1]);

interface Detail {
  number: number;
  total: number;
  tax: number;
  parcels: { cgst: number; sgst: number; igst: number; tax: number; subtotal: number; shipping: number }[];
  lines: { sku: string; unitPrice: number; lineTotal: number }[];
}

/** A shop (stock in Maharashtra) with one order of `quantity` units, its Owner's browser, and readers of the rows. */
async function shopWithOrder(quantity = 2) {
  const { s, sql } = await orderShop(db);
  const { order } = await placeTestOrder(db, s, { lines: [[s.variantId, quantity]], phone: "+919812345678", email: "meera@example.test" });
  const owner = await sessionFor(db, s.ownerUserId, s.id);
  const state = async () =>
    (await sql<{ status: string; payment_status: string }>("select status, payment_status from shop_order where id = $1", [order.id]))[0]!;
  const reserved = async () => (await sql<{ reserved: number }>("select reserved from inventory_level where variant_id = $1", [s.variantId]))[0]!.reserved;
  const act = (browser: Browser, fields: Record<string, string>, headers: Record<string, string> = {}) =>
    postForm(browser, `/orders/${order.id}`, { csrf: browser.csrf, ...fields }, headers);
  return { s, sql, order, owner, state, reserved, act };
}

describe("Order page", () => {
  it("shows the customer, lines, parcels with CGST + SGST (or IGST), totals, attempts, shipments and the timeline", async () => {
    const { s, sql, order, owner } = await shopWithOrder();
    const detail = await rpcJson<Detail>(await rpc(owner, "orders/get", { id: order.id }));
    const res = await page(owner, `/orders/${order.id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const html = await res.text();
    expect(html).toContain(`<h1>Order #${order.number}</h1>`);
    expect(html).toMatch(/Placed <time datetime="[^"]+">\d{4}-\d{2}-\d{2} \d{2}:\d{2} IST<\/time> · Online payment/);
    const customer = section(html, "customer");
    expect(customer).toContain("meera@example.test");
    expect(customer).toContain("+919812345678");
    expect(customer).toContain("Asha Rao<br/>12 MG Road<br/>Pune, Maharashtra, 411001<br/>India");
    const lines = section(html, "lines");
    expect(lines).toContain("Fixture");
    expect(lines).toContain(detail.lines[0]!.sku);
    expect(lines).toContain(`<td class="num">2</td><td class="num">${inr(detail.lines[0]!.unitPrice)}</td>`);
    expect(lines).toContain(inr(detail.lines[0]!.lineTotal));
    const parcel = detail.parcels[0]!;
    expect(parcel.cgst).toBeGreaterThan(0);
    const parcels = section(html, "parcels");
    expect(parcels).toContain("Fixture warehouse");
    expect(parcels).toContain(`${inr(parcel.tax)}<div class="muted">CGST ${inr(parcel.cgst)} + SGST ${inr(parcel.sgst)}</div>`);
    expect(section(html, "totals")).toContain(`<strong>${inr(detail.total)}</strong>`);
    const attempts = section(html, "payments");
    expect(attempts).toContain(`<td class="mono">${order.id}:1</td><td>Local</td>`);
    expect(attempts).toContain('data-status="created"');
    expect(attempts).toContain(inr(detail.total));
    expect(section(html, "shipments")).toContain("No shipments yet.");
    const timeline = section(html, "timeline");
    // Placing writes both events at one instant: the order's own reads first.
    expect(timeline).toMatch(/IST<\/time> · Order placed<\/li><li data-kind="inventory.reserved">.*IST<\/time> · Stock reserved<\/li>/);

    // Shipped from another state than the buyer's: IGST.
    await sql("update location set state = 'IN-KA'");
    const { order: inter } = await placeTestOrder(db, s);
    const igst = (await rpcJson<Detail>(await rpc(owner, "orders/get", { id: inter.id }))).parcels[0]!;
    expect(igst).toMatchObject({ cgst: 0, sgst: 0 });
    const interHtml = await (await page(owner, `/orders/${inter.id}`)).text();
    expect(section(interHtml, "parcels")).toContain(`<div class="muted">IGST ${inr(igst.igst)}</div>`);
    expect(section(interHtml, "customer")).toContain("no phone");
    // Within a union territory without a legislature the second half is UTGST.
    await sql("update location set state = 'IN-CH'");
    const { order: ut } = await placeTestOrder(db, s, { state: "IN-CH" });
    const utgst = (await rpcJson<Detail>(await rpc(owner, "orders/get", { id: ut.id }))).parcels[0]!;
    const utHtml = await (await page(owner, `/orders/${ut.id}`)).text();
    expect(section(utHtml, "parcels")).toContain(`CGST ${inr(utgst.cgst)} + UTGST ${inr(utgst.sgst)}`);
    expect(section(utHtml, "customer")).toContain("Chandigarh");
  });

  it("another store's order, an unknown id and a malformed one are the 404 page, never the picker", async () => {
    const { order, state } = await shopWithOrder();
    const other = await orderShop(db);
    const stranger = await sessionFor(db, other.s.ownerUserId, other.s.id);
    for (const id of [order.id, crypto.randomUUID(), "not-a-uuid", "1001"]) {
      const res = await page(stranger, `/orders/${id}`);
      expect(res.status).toBe(404);
      expect(res.headers.get("location")).toBeNull();
      expect(await res.text()).toContain("Order not found in this store.");
    }
    const posted = await postForm(stranger, `/orders/${order.id}`, { csrf: stranger.csrf, action: "mark_paid" });
    expect(posted.status).toBe(404);
    expect(await state()).toEqual({ status: "open", payment_status: "unpaid" });
  });

  it("Staff are offered Mark as paid but not Cancel; a forged cancel by Staff is the 403 page and changes nothing", async () => {
    const { s, order, owner, state, reserved, act } = await shopWithOrder();
    expect(offered(await (await page(owner, `/orders/${order.id}`)).text())).toEqual(["mark_paid", "cancel"]);
    const staff = await sessionFor(db, (await addMember(db, s, "staff")).userId, s.id);
    const html = await (await page(staff, `/orders/${order.id}`)).text();
    expect(offered(html)).toEqual(["mark_paid"]);
    expect(html).not.toContain("Cancel order");
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    for (const fields of [{ action: "cancel", reason: "forged" }, { action: "cancel" }] as Record<string, string>[]) {
      const forged = await act(staff, fields);
      expect(forged.status).toBe(403);
      expect(forged.headers.get("content-type")).toMatch(/text\/html/);
      expect(await forged.text()).toContain("Your role does not allow cancelling orders (orders.cancel).");
    }
    warn.mockRestore();
    expect(await state()).toEqual({ status: "open", payment_status: "unpaid" });
    expect(await reserved()).toBe(2);
  });

  it("refuses a post without the session's CSRF token or from another site (403); nothing changes", async () => {
    const { order, owner, state, act } = await shopWithOrder();
    expect((await postForm(owner, `/orders/${order.id}`, { action: "mark_paid" })).status).toBe(403);
    expect((await act(owner, { action: "mark_paid", csrf: "wrong" })).status).toBe(403);
    expect((await act(owner, { action: "mark_paid" }, { origin: "https://evil.example" })).status).toBe(403);
    expect(await state()).toEqual({ status: "open", payment_status: "unpaid" });
  });

  it("Mark as paid: 303 back to the order, the flash says so, the attempt is captured and the actions are gone", async () => {
    const { s, order, state, act } = await shopWithOrder();
    const staff = await sessionFor(db, (await addMember(db, s, "staff")).userId, s.id);
    const res = await act(staff, { action: "mark_paid" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/orders/${order.id}?done=mark_paid`);
    expect(await state()).toEqual({ status: "open", payment_status: "paid" });
    const html = await (await page(staff, res.headers.get("location")!)).text();
    expect(html).toContain(`<p class="notice" role="status">Order #${order.number} is marked as paid.</p>`);
    expect(html).toContain('data-status="paid"');
    expect(section(html, "payments")).toContain('data-status="captured"');
    expect(section(html, "timeline")).toContain("Paid in full");
    // Paid: what is left for Staff is shipping it (no refund: that is Owners' and Admins').
    expect(offered(html)).toEqual(["fulfill"]);
    // Without the action in the address there is no flash.
    expect(await (await page(staff, `/orders/${order.id}`)).text()).not.toContain('class="notice"');
  });

  it("Cancel needs a reason (400 next to the field, typed text kept), then cancels, releases the stock and says so", async () => {
    const { s, order, owner, state, reserved, act } = await shopWithOrder();
    expect(await reserved()).toBe(2);
    const empty = await act(owner, { action: "cancel", reason: "  " });
    expect(empty.status).toBe(400);
    const emptyHtml = await empty.text();
    expect(emptyHtml).toContain('<p class="alert" role="alert">Not done: correct the field marked below.</p>');
    expect(emptyHtml).toMatch(/<textarea id="cancel-reason" name="reason"[^>]*aria-invalid="true"[^>]*>/);
    expect(emptyHtml).toContain('<p class="field-error" id="cancel-reason-error">Say why the order is cancelled.</p>');
    const long = await act(owner, { action: "cancel", reason: `kept ${"x".repeat(500)}` });
    expect(long.status).toBe(400);
    const longHtml = await long.text();
    expect(longHtml).toContain(`>kept ${"x".repeat(500)}</textarea>`);
    expect(longHtml).toContain("Keep the reason to 500 characters or fewer.");
    expect(await state()).toEqual({ status: "open", payment_status: "unpaid" });

    const res = await act(owner, { action: "cancel", reason: "Customer asked to cancel" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/orders/${order.id}?done=cancel`);
    expect(await state()).toEqual({ status: "cancelled", payment_status: "unpaid" });
    expect(await reserved()).toBe(0);
    expect(await outboxPayloads(db, s.id, "order.cancelled")).toEqual([expect.objectContaining({ orderId: order.id, reason: "Customer asked to cancel" })]);
    const html = await (await page(owner, res.headers.get("location")!)).text();
    expect(html).toContain(`Order #${order.number} is cancelled and its reserved stock released.`);
    expect(html).toContain('data-status="cancelled"');
    expect(section(html, "timeline")).toMatch(/Stock reserved<\/li>.*Order cancelled<\/li>.*Reserved stock released<\/li>/);
    expect(offered(html)).toEqual([]);
    expect(section(html, "actions")).toContain("Nothing to do: the order is cancelled.");
  });

  it("a refusal from the procedure (409) is the page again with its reason; nothing changes", async () => {
    const { order, owner, state, reserved, act } = await shopWithOrder();
    expect((await act(owner, { action: "mark_paid" })).status).toBe(303);
    const refused = await act(owner, { action: "cancel", reason: "Too late" });
    expect(refused.status).toBe(409);
    const html = await refused.text();
    expect(html).toContain(`<p class="alert" role="alert">Order #${order.number} is paid: refund it first, then cancel.</p>`);
    expect(html).toContain(`<h1>Order #${order.number}</h1>`);
    expect(await state()).toEqual({ status: "open", payment_status: "paid" });
    expect(await reserved()).toBe(2);

    const other = await shopWithOrder();
    expect((await other.act(other.owner, { action: "cancel", reason: "Changed mind" })).status).toBe(303);
    const late = await other.act(other.owner, { action: "mark_paid" });
    expect(late.status).toBe(409);
    expect(await late.text()).toContain("is cancelled: it cannot be marked as paid.");
    expect(await other.state()).toEqual({ status: "cancelled", payment_status: "unpaid" });

    const unknown = await act(owner, { action: "explode" });
    expect(unknown.status).toBe(400);
    expect(await unknown.text()).toContain("Choose one of the order&#39;s actions: Mark as paid, Cancel order, Ship parcel,");
  });
});

describe("Order page after payment", () => {
  it("ships a parcel with the merchant's tracking number, then RTO, the task, a refund; Staff see no Refund", async () => {
    const { s, sql, order, owner, act } = await shopWithOrder(1);
    expect((await act(owner, { action: "mark_paid" })).status).toBe(303);
    const parcelId = (await sql<{ id: string }>("select id from fulfillment_order where order_id = $1", [order.id]))[0]!.id;
    // A tracking number without its courier is refused next to the field, the number kept.
    const missing = await act(owner, { action: "fulfill", parcelId, awb: "DLV123456", courierName: "" });
    expect(missing.status).toBe(400);
    const missingHtml = await missing.text();
    expect(missingHtml).toContain("Name the courier of this tracking number.");
    expect(missingHtml).toContain('value="DLV123456"');
    const shipped = await act(owner, { action: "fulfill", parcelId, awb: "DLV123456", courierName: "Delhivery", trackingUrl: "https://track.example/DLV123456" });
    expect(shipped.status).toBe(303);
    let html = await (await page(owner, shipped.headers.get("location")!)).text();
    expect(html).toContain("is shipped: its tracking number is under Shipments.");
    expect(section(html, "shipments")).toContain('<a href="https://track.example/DLV123456" rel="noopener noreferrer">DLV123456</a>');
    expect(offered(html)).toEqual(["rto", "refund", "return_request"]);
    const staff = await sessionFor(db, (await addMember(db, s, "staff")).userId, s.id);
    expect(offered(await (await page(staff, `/orders/${order.id}`)).text())).toEqual(["rto", "return_request"]);
    const shipmentId = (await sql<{ id: string }>("select id from shipment where order_id = $1", [order.id]))[0]!.id;
    expect((await act(owner, { action: "rto", shipmentId, arrived: "no" })).status).toBe(303);
    html = await (await page(owner, `/orders/${order.id}`)).text();
    expect(section(html, "tasks")).toContain("DLV123456 is coming back to you (RTO)");
    const taskId = (await sql<{ id: string }>("select id from merchant_task where order_id = $1", [order.id]))[0]!.id;
    expect((await act(owner, { action: "task_done", id: taskId })).status).toBe(303);
    // A refund in rupees: "1,0.5" is refused next to the field; "2.50" gives back 250 paise.
    const bad = await act(owner, { action: "refund", amount: "1,0.555" });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("Give an amount in rupees, e.g. 250 or 250.50.");
    expect((await act(owner, { action: "refund", amount: "2.50", reason: "Late" })).status).toBe(303);
    expect(await sql("select amount::int, status from refund where order_id = $1", [order.id])).toEqual([{ amount: 250, status: "processed" }]);
    // Staff forging a refund get the 403 page; nothing is refunded.
    const forged = await act(staff, { action: "refund", amount: "1" });
    expect(forged.status).toBe(403);
    expect(await sql("select count(*)::int as n from refund where order_id = $1", [order.id])).toEqual([{ n: 1 }]);
  });

  it("a return from request to refund, each step offered only when its return is in the right state", async () => {
    const { sql, order, owner, act } = await shopWithOrder(2);
    expect((await act(owner, { action: "mark_paid" })).status).toBe(303);
    const parcelId = (await sql<{ id: string }>("select id from fulfillment_order where order_id = $1", [order.id]))[0]!.id;
    expect((await act(owner, { action: "fulfill", parcelId, awb: "BD-1001", courierName: "Blue Dart" })).status).toBe(303);
    const lineId = (await sql<{ id: string }>("select id from order_line where order_id = $1", [order.id]))[0]!.id;
    const tooMany = await act(owner, { action: "return_request", orderLineId: lineId, quantity: "5", reason: "Too big" });
    expect(tooMany.status).toBe(409);
    expect(await tooMany.text()).toContain("These units cannot be returned.");
    expect((await act(owner, { action: "return_request", orderLineId: lineId, quantity: "1", reason: "Too big" })).status).toBe(303);
    const returnId = (await sql<{ id: string }>("select id from order_return where order_id = $1", [order.id]))[0]!.id;
    let html = await (await page(owner, `/orders/${order.id}`)).text();
    expect(offered(html)).toEqual(expect.arrayContaining(["return_approve", "return_reject"]));
    expect(offered(html)).not.toContain("return_receive");
    const steps: Record<string, string>[] = [{ action: "return_approve" }, { action: "return_receive", restock: "yes" }, { action: "return_refund", amount: "" }];
    for (const step of steps) {
      expect((await act(owner, { ...step, returnId })).status, step.action).toBe(303);
    }
    html = await (await page(owner, `/orders/${order.id}`)).text();
    expect(section(html, "returns")).toContain('data-status="refunded"');
    expect(section(html, "refunds")).toContain('data-status="processed"');
    expect(await sql("select on_hand from inventory_level")).toEqual([{ on_hand: 4 }]);
  });
});
