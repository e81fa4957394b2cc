import { describe, expect, it } from "vitest";
import { hashPassword } from "#shared/auth/password";
import { withStore } from "#shared/db/with-store";
import { call } from "../../test/call";
import { testDb } from "../../test/harness";
import { makeShop, Shopper, type ShopStore } from "../../test/storefront";
import worker from "./index";

/** The storefront password covers selling (issue 20 item 7): the cart and checkout doors, not only the pages. */
const db = testDb();
const PASSWORD = "open sesame 42";
const ORDER = { email: "asha@example.test", paymentMethod: "gateway", shippingAddress: { name: "Asha Rao", line1: "12 MG Road", city: "Pune", state: "IN-MH", postalCode: "411001", country: "IN" } };
const sql = (s: ShopStore, text: string, values: unknown[] = []) => withStore(db, s.id, (tx) => tx.$client.query(text, values)).then((r) => r.rows);
const carts = async (s: ShopStore) => Number((await sql(s, "select count(*) as n from cart"))[0].n);

async function lock(s: ShopStore) {
  await sql(s, "update store set storefront_password_hash = $2 where id = $1", [s.id, await hashPassword(PASSWORD)]);
}

async function open(host: string, path: string, cookie?: string) {
  const res = await call(worker, `http://storefront.test${path}`, { headers: { host, ...(cookie ? { cookie } : {}) }, redirect: "manual" });
  return { status: res.status, html: await res.text() };
}

const PASSWORD_FORM = 'action="/api/storefront/password"';

describe("while the storefront password is on", () => {
  it("the cart and checkout APIs answer 401 with the password page's address and write nothing, unless the shopper entered it", async () => {
    const s = await makeShop(db);
    await lock(s);
    const before = await carts(s);
    const stranger = new Shopper(s.hostname);
    const line = crypto.randomUUID();
    const order = crypto.randomUUID();
    const calls: [string, string, unknown][] = [
      ["GET", "/api/cart", undefined],
      ["POST", "/api/cart/lines", { variantId: s.variantId, quantity: 5 }],
      ["PATCH", `/api/cart/lines/${line}`, { quantity: 2 }],
      ["DELETE", `/api/cart/lines/${line}`, undefined],
      ["POST", "/api/cart/discount", { code: s.discountCode }],
      ["DELETE", "/api/cart/discount", undefined],
      ["POST", "/api/checkout", ORDER],
      ["POST", `/api/checkout/${order}/pay`, undefined],
    ];
    for (const [method, path, body] of calls) {
      const res = await stranger.send(method, path, body, { "sec-fetch-site": "same-origin" });
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(res.body.json, path).toMatchObject({ code: "UNAUTHORIZED", data: { reason: "password_required", passwordUrl: `http://${s.hostname}/cart` } });
      expect(res.headers.get("cache-control"), path).toBe("no-store");
    }
    expect(await carts(s)).toBe(before);
    // Whoever entered the password buys as before.
    const entered = await call(worker, "http://storefront.test/api/storefront/password", {
      method: "POST",
      headers: { host: s.hostname, "content-type": "application/x-www-form-urlencoded", "cf-connecting-ip": "203.0.113.61" },
      body: new URLSearchParams({ password: PASSWORD, return: "/cart" }).toString(),
      redirect: "manual",
    });
    const pass = entered.headers.getSetCookie().find((c) => c.startsWith("wc_sf_pass="))!.split(";")[0]!;
    // As a browser sends both cookies (the Shopper helper keeps only the cart's).
    const send = (path: string, body: unknown, cookie: string) =>
      call(worker, `http://storefront.test${path}`, {
        method: "POST",
        headers: { host: s.hostname, cookie, "content-type": "application/json", "sec-fetch-site": "same-origin" },
        body: JSON.stringify(body),
      });
    const add = await send("/api/cart/lines", { variantId: s.variantId, quantity: 1 }, pass);
    expect(add.status).toBe(200);
    const cart = /wc_cart=([^;]*)/.exec(add.headers.get("set-cookie") ?? "")![1];
    const placed = await send("/api/checkout", ORDER, `${pass}; wc_cart=${cart}`);
    expect(placed.status).toBe(201);
  });

  it("the cart's forms and the checkout form answer 401 with the password page", async () => {
    const s = await makeShop(db);
    await lock(s);
    const before = await carts(s);
    for (const path of ["/api/cart/lines", "/checkout"]) {
      const res = await call(worker, `http://storefront.test${path}`, {
        method: "POST",
        headers: { host: s.hostname, "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
        body: new URLSearchParams({ variantId: s.variantId, email: "a@example.test" }).toString(),
        redirect: "manual",
      });
      expect(res.status, path).toBe(401);
      const html = await res.text();
      expect(html, path).toContain(PASSWORD_FORM);
      expect(html, path).toContain('value="/cart"');
    }
    expect(await carts(s)).toBe(before);
  });

  it("an order placed before: its page with the key, paying it and the gateway's page still work; without the key, the password page", async () => {
    const s = await makeShop(db);
    const buyer = new Shopper(s.hostname);
    await buyer.add(s.variantId, 1);
    const placed = await buyer.send("POST", "/api/checkout", ORDER);
    expect(placed.status).toBe(201);
    const { order, orderUrl } = placed.body as { order: { id: string; number: number }; orderUrl: string };
    await lock(s);
    const page = await open(s.hostname, orderUrl);
    expect(page.status).toBe(200);
    expect(page.html).toContain(`#${order.number}`);
    expect(page.html).not.toContain(PASSWORD_FORM);
    expect((await open(s.hostname, `/orders/${order.id}`)).html).toContain(PASSWORD_FORM);
    // "Pay now" on the order page: a new attempt, and the gateway's page it leads to.
    const key = new URL(orderUrl, "http://x").searchParams.get("k")!;
    const pay = await call(worker, `http://storefront.test/api/checkout/${order.id}/pay?k=${key}`, {
      method: "POST",
      headers: { host: s.hostname, "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
      body: "",
      redirect: "manual",
    });
    expect(pay.status).toBe(303);
    const gateway = pay.headers.get("location")!;
    expect(gateway).toMatch(/\/-gateway\/pay\//);
    const gatewayPage = await open(s.hostname, new URL(gateway, "http://x").pathname);
    expect(gatewayPage.status).toBe(200);
    expect(gatewayPage.html).not.toContain(PASSWORD_FORM);
    // Without the key, the cart cookie that became the order is no way in while the store is closed.
    expect((await buyer.send("POST", `/api/checkout/${order.id}/pay`, {}, { "sec-fetch-site": "same-origin" })).status).toBe(401);
  });
});
