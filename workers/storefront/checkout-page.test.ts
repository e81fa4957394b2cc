import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { testDb } from "../../test/harness";
import { checkoutForm, offerBankTransfer } from "../../test/orders";
import { call } from "../../test/call";
import { makeShop, Shopper } from "../../test/storefront";
import worker from "./index";

/** The checkout page, the local gateway's page and the order page, as a browser without JavaScript uses them. */
const db = testDb();

/** A page as the shopper's browser gets it (Shopper.send reads JSON answers only). */
async function fetchPage(shopper: Shopper, path: string) {
  const res = await call(worker, `http://storefront.test${path}`, { headers: { host: shopper.host, ...(shopper.cookie ? { cookie: `wc_cart=${shopper.cookie}` } : {}) } });
  return { status: res.status, headers: res.headers, html: await res.text() };
}
const pageText = async (shopper: Shopper, path: string) => (await fetchPage(shopper, path)).html;

const ADDRESS = { ...checkoutForm, paymentMethod: "gateway" };

describe("the checkout page", () => {
  it("form → gateway page → Pay → back with the confirmation → the order page says paid", async () => {
    const s = await makeShop(db);
    await withStore(db, s.id, (tx) => tx.$client.query("update location set state = 'IN-MH'"));
    const buyer = new Shopper(s.hostname);
    await buyer.add(s.variantId, 2);
    const form = await fetchPage(buyer, "/checkout");
    expect(form.status).toBe(200);
    expect(form.headers.get("cache-control")).toBe("no-store");
    expect(form.html).toContain('<label for="shippingAddress-city">City</label>');
    expect(form.html).toContain("2 × Fixture");

    // A mistake: the page comes back with what was typed and the message by its field, and no order.
    const wrong = await buyer.form("/checkout", { ...ADDRESS, email: "asha", "shippingAddress.postalCode": "12" });
    expect(wrong.status).toBe(400);
    const again = await pageText(buyer, "/cart");
    expect(again).toContain("Fixture");

    const placed = await buyer.form("/checkout", ADDRESS);
    expect(placed.status).toBe(303);
    const location = new URL(placed.headers.get("location")!);
    expect(location.host).toBe(s.hostname); // the page is on the store's own host
    const toGateway = location.pathname;
    expect(toGateway).toMatch(/^\/-gateway\/pay\/lp1\./);
    const gateway = await pageText(buyer, toGateway);
    expect(gateway).toContain("Local payment gateway");
    expect(gateway).toContain("₹20.00");

    // The page's form carries the signed confirmation to the store's confirm URL: send what it holds.
    const post = await call(worker, `http://storefront.test${toGateway}`, {
      method: "POST",
      headers: { host: s.hostname, "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
      body: "action=pay",
    });
    const html = await post.text();
    const action = /<form method="post" action="([^"]+)" id="back">/.exec(html)![1]!;
    const fields = Object.fromEntries([...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/?>/g)].map((m) => [m[1]!, m[2]!]));
    // The gateway brings the shopper back with the order's key, as Razorpay's POST carries no Lax cookie.
    const returnUrl = new URL(action.replaceAll("&amp;", "&"));
    expect(returnUrl.search).toMatch(/^\?k=[A-Za-z0-9_-]{43}$/);
    const confirmed = await new Shopper(s.hostname).form(returnUrl.pathname + returnUrl.search, fields, { "sec-fetch-site": "cross-site" });
    expect(confirmed.status).toBe(303);
    const orderLink = confirmed.headers.get("location")!;
    expect(orderLink).toMatch(/^\/orders\/[0-9a-f-]{36}\?k=[A-Za-z0-9_-]{43}$/);
    const orderHtml = await pageText(buyer, orderLink);
    expect(orderHtml).toMatch(/<dd data-status="payment" data-value="paid">paid<\/dd>/);
    expect(orderHtml).toContain("₹20.00");
    // The link opens the order in another browser too; the bare path there is the store's 404 page.
    expect(await pageText(new Shopper(s.hostname), orderLink)).toContain("data-status");
    const stranger = await pageText(new Shopper(s.hostname), orderLink.split("?")[0]!);
    expect(stranger).not.toContain("data-status");
  });

  it("a bank transfer order goes straight to the order's link", async () => {
    const s = await makeShop(db);
    await withStore(db, s.id, offerBankTransfer);
    const buyer = new Shopper(s.hostname);
    await buyer.add(s.variantId, 1);
    const placed = await buyer.form("/checkout", { ...ADDRESS, paymentMethod: "manual_transfer" });
    expect(placed.status).toBe(303);
    const orderLink = placed.headers.get("location")!;
    expect(orderLink).toMatch(/^\/orders\/[0-9a-f-]{36}\?k=[A-Za-z0-9_-]{43}$/);
    const page = await pageText(new Shopper(s.hostname), orderLink);
    expect(page).toMatch(/<dd data-status="payment" data-value="unpaid">not paid<\/dd>/);
    expect(page).not.toContain("Pay now");
  });

  it("a forged gateway reference is the store's 404 page", async () => {
    const s = await makeShop(db);
    const res = await new Shopper(s.hostname).send("GET", "/-gateway/pay/lp1.eyJ9.00");
    expect(res.status).toBe(404);
  });
});
