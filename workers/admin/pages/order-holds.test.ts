import { describe, expect, it } from "vitest";
import { api, createToken, page, postForm, rpc, sessionFor } from "../../../test/admin";
import { testDb } from "../../../test/harness";
import { orderShop, placeTestOrder } from "../../../test/orders";
import { addMember } from "../../../test/procedures";

/**
 * Every hold visible to the merchant (decision 0020): Orders → Waiting for payment (`orders.holds`), the
 * order page's hold, and the Payments settings (bank transfer, the transfer hold), through the real routes.
 */
const db = testDb();
const HOUR = 3_600_000;

/** The order numbers of a list page's rows, in order, and each row's release time. */
const rows = (html: string) => [...html.matchAll(/<tr data-order="(\d+)"[\s\S]*?data-releases="([^"]*)"/g)].map((m) => ({ number: Number(m[1]), releases: m[2] }));

/**
 * A shop with four placed orders: a gateway one now (30 minutes' hold), a transfer one an hour ago (72
 * hours' hold), one marked paid and one cancelled; and another store with its own unpaid order.
 */
async function shopWithHolds() {
  const { s, sql } = await orderShop(db);
  await sql("update inventory_level set on_hand = 20");
  const online = (await placeTestOrder(db, s, { email: "online@example.test" })).order;
  const transfer = (await placeTestOrder(db, s, { email: "transfer@example.test", paymentMethod: "manual_transfer", at: new Date(Date.now() - HOUR) })).order;
  const paid = (await placeTestOrder(db, s, { email: "paid@example.test" })).order;
  const cancelled = (await placeTestOrder(db, s, { email: "gone@example.test" })).order;
  const owner = await sessionFor(db, s.ownerUserId, s.id);
  expect((await rpc(owner, "orders/setStatus", { orderId: paid.id, action: "mark_paid" })).status).toBe(200);
  expect((await rpc(owner, "orders/cancel", { orderId: cancelled.id })).status).toBe(200);
  const other = await orderShop(db);
  const foreign = (await placeTestOrder(db, other.s, { email: "elsewhere@example.test" })).order;
  const expiresAt = async (id: string) => (await sql<{ expires_at: Date }>("select expires_at from shop_order where id = $1", [id]))[0]!.expires_at.toISOString();
  return { s, sql, owner, online, transfer, paid, cancelled, other, foreign, expiresAt };
}

describe("Orders → Waiting for payment", () => {
  it("lists each open unpaid order with the time its hold releases, soonest first; paid, cancelled and other stores' orders are not there", async () => {
    const { owner, online, transfer, expiresAt } = await shopWithHolds();
    const all = await (await page(owner, "/orders")).text();
    expect(all).toContain('href="/orders?view=waiting"');
    const res = await page(owner, "/orders?view=waiting");
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toMatch(/aria-current="page">\s*Waiting for payment/);
    // The harness's fixture order #1001 has no payment window: it waits without a release time, last.
    expect(rows(html)).toEqual([
      { number: online.number, releases: await expiresAt(online.id) },
      { number: transfer.number, releases: await expiresAt(transfer.id) },
      { number: 1001, releases: "" },
    ]);
    expect(html).toContain("transfer@example.test");
    expect(html).toContain("Bank transfer");
    expect(html).toContain("3 orders");
  });

  it("the order page says until when an unpaid order holds its stock; a paid one says nothing of it", async () => {
    const { owner, online, paid, expiresAt } = await shopWithHolds();
    const html = await (await page(owner, `/orders/${online.id}`)).text();
    expect(html).toContain(`data-hold="${await expiresAt(online.id)}"`);
    expect(html).toContain("Waiting for payment: its items are held until");
    expect(await (await page(owner, `/orders/${paid.id}`)).text()).not.toContain("data-hold");
  });

  it("orders.holds through the token API: an orders-read token lists its store's holds only; a token without orders is refused; Staff see the page", async () => {
    const { s, owner, online, transfer, foreign, other } = await shopWithHolds();
    const { token } = await createToken(owner, ["orders:read"]);
    const listed = await api(token, "orders/holds", { page: 1, pageSize: 10 });
    expect(listed.status).toBe(200);
    const body = (await listed.json()) as { json: { items: { id: string; amountDue: number; paymentMethod: string; holdReleasesAt: string }[]; total: number } };
    expect(body.json.items.map((i) => i.id).slice(0, 2)).toEqual([online.id, transfer.id]);
    expect(body.json.items[1]).toMatchObject({ paymentMethod: "manual_transfer", amountDue: transfer.total });
    expect(body.json.total).toBe(3);
    expect(body.json.items.map((i) => i.id)).not.toContain(foreign.id);
    const { token: productsOnly } = await createToken(owner, ["products:read"]);
    expect((await api(productsOnly, "orders/holds", {})).status).toBe(403);
    const theirs = await createToken(await sessionFor(db, other.s.ownerUserId, other.s.id), ["orders:read"]);
    const elsewhere = (await (await api(theirs.token, "orders/holds", {})).json()) as { json: { items: { id: string }[] } };
    expect(elsewhere.json.items.map((i) => i.id)[0]).toBe(foreign.id);
    expect(elsewhere.json.items.map((i) => i.id)).not.toContain(online.id);
    const staff = await addMember(db, s, "staff");
    expect(rows(await (await page(await sessionFor(db, staff.userId, s.id), "/orders?view=waiting")).text())).toHaveLength(3);
  });
});

describe("Settings → Payments", () => {
  it("shows bank transfer off and the 72-hour hold for a new store; saves them with the CSRF token; a hold out of range is named and nothing is saved", async () => {
    const { store, browser } = await (async () => {
      const { s } = await orderShop(db);
      return { store: s, browser: await sessionFor(db, s.ownerUserId, s.id) };
    })();
    const html = await (await page(browser, "/settings")).text();
    expect(html).toMatch(/<input type="checkbox" name="manualTransferEnabled"\s*\/?>/);
    expect(html).toMatch(/name="transferHoldHours"[^>]*value="72"/);
    const base = { csrf: browser.csrf, name: store.name, preorderDepositPercent: "100" };
    const saved = await postForm(browser, "/settings", { ...base, manualTransferEnabled: "on", transferHoldHours: "24" });
    expect(saved.status).toBe(303);
    const after = await (await page(browser, "/settings")).text();
    expect(after).toMatch(/name="manualTransferEnabled" checked/);
    expect(after).toMatch(/name="transferHoldHours"[^>]*value="24"/);
    for (const bad of ["0", "169", "1.5", "abc"]) {
      const refused = await postForm(browser, "/settings", { ...base, manualTransferEnabled: "on", transferHoldHours: bad });
      expect(refused.status, bad).toBe(400);
      expect(await refused.text(), bad).toContain("transferHoldHours");
    }
    expect(await (await page(browser, "/settings")).text()).toMatch(/name="transferHoldHours"[^>]*value="24"/);
    // Unticked: bank transfer off again.
    expect((await postForm(browser, "/settings", { ...base, transferHoldHours: "24" })).status).toBe(303);
    expect(await (await page(browser, "/settings")).text()).toMatch(/<input type="checkbox" name="manualTransferEnabled"\s*\/?>/);
  });
});
