import { describe, expect, it } from "vitest";
import { call } from "../../test/call";
import { testDb } from "../../test/harness";
import { makeShop } from "../../test/storefront";
import worker from "./index";

/** The /cart page as a shopper without JavaScript uses it: forms posting to /api/cart, redirects back. */
const db = testDb();

function browserAt(host: string) {
  let cookie = "";
  const remember = (res: Response) => {
    const set = /wc_cart=([^;]*)/.exec(res.headers.get("set-cookie") ?? "");
    if (set) cookie = `wc_cart=${set[1]}`;
    return res;
  };
  return {
    page: async (path: string) => remember(await call(worker, `http://storefront.test${path}`, { headers: { host, cookie }, redirect: "manual" })),
    post: async (path: string, fields: Record<string, string>) =>
      remember(
        await call(worker, `http://storefront.test${path}`, {
          method: "POST",
          headers: { host, cookie, "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
          body: new URLSearchParams(fields).toString(),
          redirect: "manual",
        }),
      ),
  };
}

const totalOf = (html: string, name: string) => new RegExp(`data-total="${name}">(?:<strong>)?([^<]+)<`).exec(html)?.[1];

describe("/cart page", () => {
  it("empty, then filled through the product page's form; quantity, code and totals; removal", async () => {
    const shop = await makeShop(db);
    const b = browserAt(shop.hostname);
    const empty = await b.page("/cart");
    expect(empty.status).toBe(200);
    expect(empty.headers.get("cache-control")).toBe("no-store");
    expect(await empty.text()).toContain("Your cart is empty");
    const product = await (await b.page("/products/fixture")).text();
    expect(product).toContain(`value="${shop.variantId}"`);
    const added = await b.post("/api/cart/lines", { variantId: shop.variantId, quantity: "2", return: "/cart" });
    expect(added.status).toBe(303);
    expect(added.headers.get("location")).toBe("/cart");
    let html = await (await b.page("/cart")).text();
    expect(html).toContain("Fixture · Default");
    expect(totalOf(html, "subtotal")).toBe("₹20.00");
    const lineId = /action="\/api\/cart\/lines\/([0-9a-f-]{36})"/.exec(html)![1]!;
    await b.post(`/api/cart/lines/${lineId}`, { quantity: "3", return: "/cart" });
    await b.post("/api/cart/discount", { code: shop.discountCode.toLowerCase(), return: "/cart" });
    html = await (await b.page("/cart")).text();
    expect(totalOf(html, "subtotal")).toBe("₹30.00");
    expect(totalOf(html, "discount")).toBe("−₹3.00");
    expect(totalOf(html, "total")).toBe("₹27.00");
    const tooMany = await b.post(`/api/cart/lines/${lineId}`, { quantity: "50", return: "/cart" });
    expect(tooMany.headers.get("location")).toMatch(/^\/cart\?cartError=/);
    expect(await (await b.page(tooMany.headers.get("location")!)).text()).toContain("There is not that much in stock");
    await b.post(`/api/cart/lines/${lineId}`, { _method: "DELETE", return: "/cart" });
    expect(await (await b.page("/cart")).text()).toContain("Your cart is empty");
  });

  it("another store's cart cookie shows an empty cart here", async () => {
    const a = await makeShop(db);
    const b = await makeShop(db);
    const shopper = browserAt(a.hostname);
    const added = await shopper.post("/api/cart/lines", { variantId: a.variantId, quantity: "1", return: "/cart" });
    const cookie = /wc_cart=([^;]*)/.exec(added.headers.get("set-cookie") ?? "")![0];
    const elsewhere = await call(worker, "http://storefront.test/cart", { headers: { host: b.hostname, cookie } });
    expect(await elsewhere.text()).toContain("Your cart is empty");
  });
});
