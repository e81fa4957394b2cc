import { describe, expect, it } from "vitest";
import { call } from "../../test/call";
import { cartOf, Shopper } from "../../test/storefront";
import worker from "./index";
import { ADDRESS, BASE, ip, paths, ready, send, shop, total, type Json } from "../../test/ucp";

/** A UCP checkout session's continue_url: where the buyer takes the session over in their own browser (ucp-handoff.tsx). */
describe("UCP checkout sessions: continue_url", () => {
  it("continue_url: the buyer's page shows the session and, on a same-site post, makes it this browser's cart", async () => {
    const s = await shop();
    const other = await shop();
    const created = await send(s.hostname, "POST", BASE, ready(s.variantId, 2, [s.discountCode]));
    const url = new URL(created.body["continue_url"] as string);
    expect(url.protocol).toBe("https:");
    expect(url.host).toBe(s.hostname);
    const page = await call(worker, `http://storefront.test${url.pathname}`, { headers: { host: s.hostname, "cf-connecting-ip": ip() } });
    expect(page.status).toBe(200);
    expect(page.headers.get("cache-control")).toBe("no-store");
    const html = await page.text();
    expect(html).toContain(`action="/api/cart/session/${created.body["id"]}"`);
    expect(html).toContain("Continue to checkout");
    // Not from another store's domain, not from another site.
    expect((await call(worker, `http://storefront.test${url.pathname}`, { headers: { host: other.hostname, "cf-connecting-ip": ip() } })).status).toBe(404);
    const crossSite = await call(worker, `http://storefront.test/api/cart/session/${created.body["id"]}`, { method: "POST", headers: { host: s.hostname, "cf-connecting-ip": ip(), "sec-fetch-site": "cross-site" } });
    expect(crossSite.status).toBe(403);

    const shopper = new Shopper(s.hostname);
    const handed = await shopper.send("POST", `/api/cart/session/${created.body["id"]}`, new URLSearchParams(), { "sec-fetch-site": "same-origin" });
    expect(handed.status).toBe(303);
    expect(handed.headers.get("location")).toBe("/checkout");
    const cart = cartOf(await shopper.get());
    expect(cart.lines.map((l) => [l.variantId, l.quantity])).toEqual([[s.variantId, 2]]);
    expect(cart.discountCode).toBe(s.discountCode);
    expect(cart.total).toBe(total(created.body, "total") - total(created.body, "fulfillment"));
    // The order checkout places from that cart costs what the session said, GST included, to the paisa.
    const placed = await shopper.send("POST", "/api/checkout", {
      email: "asha@example.com",
      shippingAddress: { name: "Asha Rao", line1: ADDRESS.street_address, city: ADDRESS.address_locality, state: ADDRESS.address_region, postalCode: ADDRESS.postal_code, country: "IN" },
      paymentMethod: "gateway",
    });
    expect(placed.status).toBe(201);
    const o = (placed.body as Json)["order"] as Json;
    const gst = (created.body["totals"] as Json[]).find((t) => t["type"] === "total")!["lines"] as Json[];
    expect({ total: o["total"], shipping: o["shipping"], discount: o["discount"], tax: o["tax"] }).toEqual({
      total: total(created.body, "total"),
      shipping: total(created.body, "fulfillment"),
      discount: -total(created.body, "discount"),
      tax: gst.find((l) => l["display_text"] === "GST")!["amount"],
    });

    // An ended session has no continue_url and no page.
    const cancelled = await send(s.hostname, "POST", `${BASE}/${created.body["id"]}/cancel`, {});
    expect(cancelled.body["continue_url"]).toBeUndefined();
    expect((await call(worker, `http://storefront.test${url.pathname}`, { headers: { host: s.hostname, "cf-connecting-ip": ip() } })).status).toBe(404);
  });

  it("continue_url of a session whose item is sold out: the cart's own refusal, no cart", async () => {
    const s = await shop();
    const created = await send(s.hostname, "POST", BASE, ready(s.variantId, 9));
    expect(paths(created.body)).toEqual(["$.line_items[0].quantity out_of_stock"]);
    const shopper = new Shopper(s.hostname);
    const refused = await shopper.send("POST", `/api/cart/session/${created.body["id"]}`, new URLSearchParams(), { "sec-fetch-site": "same-origin" });
    expect(refused.status).toBe(409);
    expect(shopper.cookie).toBeUndefined();
  });

});
