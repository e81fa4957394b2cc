import { describe, expect, it } from "vitest";
import { page, sessionFor } from "../../../test/admin";
import { testDb } from "../../../test/harness";
import { orderShop, paidGatewayOrder, placeTestOrder } from "../../../test/orders";
import { addMember } from "../../../test/procedures";

/** The admin home (issue 13 item 7): today, what waits, low stock, AI approvals; each a link to where it is handled. */
const db = testDb();

const figure = (html: string, id: string) => new RegExp(`<a class="card" href="([^"]+)" data-figure="${id}"><strong>([^<]+)</strong>`).exec(html)?.slice(1) ?? null;

describe("Home", () => {
  it("Owner: today's orders and sales, orders waiting by kind, low stock and pending AI approvals, each linked", async () => {
    const { s, sql } = await orderShop(db);
    await placeTestOrder(db, s); // unpaid, ₹10.00, the fixture order makes two unpaid
    await paidGatewayOrder(db, s, 2); // paid, to ship
    await sql("update inventory_level set on_hand = reserved + 2");
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const html = await (await page(owner, "/")).text();
    const today = new Date(Date.now() + 330 * 60_000).toISOString().slice(0, 10);
    expect(figure(html, "orders-today")).toEqual([`/orders?from=${today}&amp;to=${today}`, "3"]);
    expect(figure(html, "sales-today")).toEqual([`/orders?from=${today}&amp;to=${today}`, "₹40.00"]);
    expect(html).toContain("sales today (₹20.00 paid)");
    expect(figure(html, "unpaid")).toEqual(["/orders?status=open&amp;payment=unpaid", "2"]);
    expect(figure(html, "to-ship")).toEqual(["/orders?status=open&amp;payment=paid&amp;fulfillment=unfulfilled", "1"]);
    expect(figure(html, "approvals")).toEqual(["/ai/approvals", "1"]); // the fixture's pending proposal
    expect(html).toMatch(/<li data-low="FIX-[^"]+"><a href="\/inventory\?query=FIX-[^"]+">Fixture<\/a> — 2 left<\/li>/);
    for (const path of ["/products", "/inventory", "/orders", "/customers", "/discounts", "/pages", "/marketing", "/team", "/settings"]) {
      expect(html, path).toContain(`<a href="${path}">`);
    }
  });

  it("Staff: what waits and low stock, but no sales, no Team and no Settings", async () => {
    const { s, sql } = await orderShop(db);
    await placeTestOrder(db, s);
    await sql("update inventory_level set on_hand = reserved");
    const staff = await sessionFor(db, (await addMember(db, s, "staff")).userId, s.id);
    const html = await (await page(staff, "/")).text();
    expect(figure(html, "orders-today")).toBeNull();
    expect(figure(html, "sales-today")).toBeNull();
    expect(figure(html, "unpaid")).toEqual(["/orders?status=open&amp;payment=unpaid", "2"]);
    expect(html).toContain("<strong>sold out</strong>");
    expect(html).not.toContain('<a href="/team">');
    expect(html).not.toContain('<a href="/settings">');
    expect(html).toContain('<a href="/customers">');
    // Another store's orders never count.
    const other = await orderShop(db);
    await placeTestOrder(db, other.s);
    expect(figure(await (await page(staff, "/")).text(), "unpaid")).toEqual(["/orders?status=open&amp;payment=unpaid", "2"]);
  });
});
