import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { call } from "../../test/call";
import { testDb } from "../../test/harness";
import { checkoutForm } from "../../test/orders";
import { expectSecureHtml } from "../../test/security";
import { makeShop, Shopper } from "../../test/storefront";
import worker from "./index";

/** The storefront's answers carry the security headers of shared/http/security-headers.ts (issue 20, item 8). */
const db = testDb();

const ADDRESS = { ...checkoutForm, email: "csp@example.test", paymentMethod: "gateway" };

const open = (shopper: Shopper, path: string, init: RequestInit = {}) =>
  call(worker, `http://storefront.test${path}`, {
    ...init,
    headers: { host: shopper.host, ...(shopper.cookie ? { cookie: `wc_cart=${shopper.cookie}` } : {}), ...(init.headers as Record<string, string>) },
  });

describe("security headers on the storefront", () => {
  it("catalogue pages may be framed by the store's own site; cart, checkout, gateway, order and error pages by nobody", async () => {
    const s = await makeShop(db);
    await withStore(db, s.id, (tx) => tx.$client.query("update location set state = 'IN-MH'"));
    const buyer = new Shopper(s.hostname);
    for (const path of ["/", "/products", "/search?q=fixture"]) await expectSecureHtml(await open(buyer, path), "self");
    await expectSecureHtml(await open(buyer, "/no-such-page"), "none");
    await buyer.add(s.variantId, 1);
    await expectSecureHtml(await open(buyer, "/cart"), "none");
    await expectSecureHtml(await open(buyer, "/checkout"), "none");

    const placed = await buyer.form("/checkout", ADDRESS);
    expect(placed.status).toBe(303);
    const toGateway = new URL(placed.headers.get("location")!).pathname;
    await expectSecureHtml(await open(buyer, toGateway), "none");
    // The gateway's return page submits itself with an inline script: its hash is in the policy.
    const back = await open(buyer, toGateway, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
      body: "action=pay",
    });
    const html = await expectSecureHtml(back, "none");
    expect(html).toContain("<script>");
    // Back at the store with the signed confirmation, then the order page.
    const action = new URL(/<form method="post" action="([^"]+)" id="back">/.exec(html)![1]!.replaceAll("&amp;", "&"));
    const fields = Object.fromEntries([...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/?>/g)].map((m) => [m[1]!, m[2]!]));
    const confirmed = await new Shopper(s.hostname).form(action.pathname + action.search, fields, { "sec-fetch-site": "cross-site" });
    expect(confirmed.status).toBe(303);
    const order = await expectSecureHtml(await open(new Shopper(s.hostname), confirmed.headers.get("location")!), "none");
    expect(order).toContain("data-status");
  });

  it("API answers are not sniffed and carry no page policy; no HSTS outside production", async () => {
    const s = await makeShop(db);
    const res = await open(new Shopper(s.hostname), "/api/cart");
    expect(res.status).toBe(200);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("referrer-policy")).toBe("strict-origin-when-cross-origin");
    expect(res.headers.get("content-security-policy")).toBeNull();
    expect(res.headers.get("strict-transport-security")).toBeNull();
    // An unknown host's error page is dressed too (the middleware runs before the store is known).
    await expectSecureHtml(await call(worker, "http://storefront.test/", { headers: { host: "nobody.invalid" } }), "none");
  });
});
