import { describe, expect, it } from "vitest";
import { page, rpc, sessionFor } from "../../../test/admin";
import { testDb } from "../../../test/harness";
import { orderShop, placeTestOrder } from "../../../test/orders";
import { addMember } from "../../../test/procedures";

/** The Orders list (`/orders`) through the real route: search, filters and paging as a plain GET form. */
const db = testDb();

/** The order numbers of a list page's rows, in order. */
const numbers = (html: string) => [...html.matchAll(/<tr data-order="(\d+)"/g)].map((m) => Number(m[1]));
const inr = (minor: number) => new Intl.NumberFormat("en-IN", { style: "currency", currency: "INR" }).format(minor / 100);
/** The `<input>` or `<select>` tag of a filter, by name (its id is `f-<name>`). */
const control = (html: string, name: string) => html.match(new RegExp(`<(?:input|select) id="f-${name}"[^>]*>`))?.[0] ?? "";

/**
 * A shop with the fixture order #1001 and 21 placed ones (#1002–#1022): every third by ravi-<i>@, the rest
 * by asha@; the first three at 2026-01-10 20:00 UTC (11 January in India), the rest now; #1005 paid.
 */
async function shopWithOrders() {
  const { s, sql } = await orderShop(db);
  await sql("update inventory_level set on_hand = 100");
  const placed = [];
  for (let i = 0; i < 21; i++) {
    const email = i % 3 === 0 ? `ravi-${i}@example.test` : "asha@example.test";
    placed.push((await placeTestOrder(db, s, { email, ...(i < 3 ? { at: new Date("2026-01-10T20:00:00Z") } : {}) })).order);
    // Its payment window passes at once: one email holds at most 3 unpaid orders open (decision 0020), and these 14 hold nothing.
    await sql("update shop_order set expires_at = placed_at where id = $1", [placed.at(-1)!.id]);
  }
  const owner = await sessionFor(db, s.ownerUserId, s.id);
  expect((await rpc(owner, "orders/setStatus", { orderId: placed[3]!.id, action: "mark_paid" })).status).toBe(200);
  return { s, sql, owner, placed };
}

describe("Orders list", () => {
  it("lists newest first with number, placed time, email, total in rupees and status badges; pages keep the filters", async () => {
    const { owner, placed } = await shopWithOrders();
    const res = await page(owner, "/orders");
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const html = await res.text();
    // Placed now, newest first: #1022 … #1005 (18), then the fixture (placed when the store was made) and #1004.
    expect(numbers(html)).toEqual([...Array.from({ length: 18 }, (_, i) => 1022 - i), 1001, 1004]);
    const row = html.slice(html.indexOf('<tr data-order="1022"'), html.indexOf("</tr>", html.indexOf('<tr data-order="1022"')));
    expect(row).toContain(`href="/orders/${placed[20]!.id}">#1022</a>`);
    expect(row).toContain("asha@example.test");
    expect(row).toContain(inr(placed[20]!.total));
    expect(row).toMatch(/<time datetime="[^"]+">\d{4}-\d{2}-\d{2} \d{2}:\d{2} IST<\/time>/);
    expect(row).toContain('data-status="open"');
    expect(row).toMatch(/data-status="unpaid"><span class="sr-only">Payment: <\/span>Unpaid<\/span>/);
    expect(row).toContain('data-status="unfulfilled"');
    expect(html).toContain('data-status="paid"');
    expect(html).toContain("Page 1 of 2 · 22 orders");
    expect(html).toContain('rel="next" href="/orders?page=2"');
    const second = await (await page(owner, "/orders?page=2")).text();
    expect(numbers(second)).toEqual([1003, 1002]);
    expect(second).toContain('rel="prev" href="/orders"');
    // A filter rides along on the paging links.
    const unpaid = await (await page(owner, "/orders?payment=unpaid")).text();
    expect(numbers(unpaid)).toHaveLength(20);
    expect(numbers(unpaid)).not.toContain(1005);
    expect(unpaid).toContain("Page 1 of 2 · 21 orders");
    expect(unpaid).toContain('rel="next" href="/orders?payment=unpaid&amp;page=2"');
    expect(control(unpaid, "payment")).toBeTruthy();
    expect(unpaid).toContain('<option value="unpaid" selected="">Unpaid</option>');
    const unpaid2 = await (await page(owner, "/orders?payment=unpaid&page=2")).text();
    expect(numbers(unpaid2)).toEqual([1002]);
    expect(unpaid2).toContain('rel="prev" href="/orders?payment=unpaid"');
  });

  it("searches by number or email and filters by status, payment, fulfillment and days in India", async () => {
    const { owner } = await shopWithOrders();
    const list = async (query: string) => {
      const res = await page(owner, `/orders?${query}`);
      expect(res.status).toBe(200);
      return res.text();
    };
    const ravi = await list("query=RAVI");
    expect(numbers(ravi)).toEqual([1020, 1017, 1014, 1011, 1008, 1005, 1002]);
    expect(ravi).not.toContain('rel="next"');
    expect(control(ravi, "query")).toContain('value="RAVI"');
    expect(numbers(await list("query=%231001"))).toEqual([1001]);
    expect(numbers(await list("query=ravi&payment=paid"))).toEqual([1005]);
    expect(numbers(await list("status=open&fulfillment=unfulfilled&query=ravi-1"))).toEqual([1020, 1017, 1014]);
    // 2026-01-10 20:00 UTC is 11 January in India: the day filters are Indian days, both ends inclusive.
    expect(numbers(await list("from=2026-01-11&to=2026-01-11"))).toEqual([1004, 1003, 1002]);
    expect(numbers(await list("to=2026-01-11"))).toEqual([1004, 1003, 1002]);
    const none = await list("from=2026-01-10&to=2026-01-10");
    expect(numbers(none)).toEqual([]);
    expect(none).toContain("No orders match these filters.");
    expect(none).toContain('<a href="/orders">show all orders</a>');
    expect(control(none, "from")).toContain('value="2026-01-10"');
    expect(numbers(await list("status=cancelled"))).toEqual([]);
  });

  it("a filter it cannot use is named next to its field with what was typed (400); nothing is listed", async () => {
    const { owner } = await shopWithOrders();
    const backwards = await page(owner, "/orders?from=2026-01-12&to=2026-01-11&query=asha");
    expect(backwards.status).toBe(400);
    const html = await backwards.text();
    expect(control(html, "to")).toContain('aria-invalid="true"');
    expect(html).toContain('<p class="field-error" id="to-error">The last day cannot be before the first.</p>');
    expect(control(html, "from")).toContain('value="2026-01-12"');
    expect(control(html, "query")).toContain('value="asha"');
    expect(numbers(html)).toEqual([]);
    const typed = await page(owner, "/orders?from=31%2F01%2F2026");
    expect(typed.status).toBe(400);
    const typedHtml = await typed.text();
    expect(typedHtml).toContain('id="from-error">Enter a date as YYYY-MM-DD.</p>');
    expect(control(typedHtml, "from")).toContain('value="31/01/2026"');
    expect((await page(owner, "/orders?status=lost")).status).toBe(400);
    expect((await page(owner, "/orders?page=0")).status).toBe(400);
  });

  it("without orders it says what to do; past the last page it links to the first", async () => {
    const { s, sql } = await orderShop(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    expect(await (await page(owner, "/orders?page=9")).text()).toContain('past the last one. <a href="/orders">Go to the first page</a>');
    // An order with an issued tax invoice or credit note cannot be deleted (migrations 0038, 0039): the fixture order's go first.
    await sql("delete from tax_credit_note");
    await sql("delete from tax_invoice");
    await sql("delete from shop_order");
    const html = await (await page(owner, "/orders")).text();
    expect(html).toContain("No orders yet. Orders appear here as soon as shoppers check out on your storefront");
    expect(html).not.toContain("<table>");
  });

  it("every role with orders.read finds Orders in the navigation and on the home page, and can open the list", async () => {
    const { s } = await orderShop(db);
    for (const role of ["owner", "admin", "staff"] as const) {
      const userId = role === "owner" ? s.ownerUserId : (await addMember(db, s, role)).userId;
      const browser = await sessionFor(db, userId, s.id);
      const home = await (await page(browser, "/")).text();
      expect(home).toContain('<a href="/orders">Orders</a>');
      expect(home).toContain('<a class="card" href="/orders">');
      const res = await page(browser, "/orders");
      expect(res.status).toBe(200);
      expect(numbers(await res.text())).toEqual([1001]);
    }
    expect((await page(null, "/orders")).headers.get("location")).toBe("/login?next=%2Forders");
  });
});
