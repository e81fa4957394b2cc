import { describe, expect, it } from "vitest";
import { call } from "../../test/call";
import { testDb } from "../../test/harness";
import { samplePath, unguarded, unsafeRoutes } from "../../test/same-site";
import { makeShop, Shopper } from "../../test/storefront";
import { app } from "./app";
import worker from "./index";
import { shop } from "./shop";

/**
 * The storefront's same-site rule (CSRF) is middleware, not a line each handler remembers: every route that
 * changes something has the guard of shared/http/csrf.ts in front of it, but for the posts other sites send
 * by design. A route added later without it fails here.
 */
const db = testDb();

const address = () => `198.51.100.${Math.floor(Math.random() * 250) + 1}`;

/** The store's own pages' forms, each refused with its page's answer: [status, text in the page]. */
const PAGE_REFUSALS: Record<string, [number, string]> = {
  "POST /-s/:storeId/products/:handle/notify": [400, "This form must be sent from the store&#39;s own page."],
  "POST /-s/:storeId/checkout": [400, "This form must be sent from the store&#39;s own page."],
  "POST /-s/:storeId/-gateway/pay/:ref": [404, "Not found"],
};

describe("the storefront's same-site guard", () => {
  it("stands in front of every route that changes something, but the gateway's signed return, UCP's agent API and the emailed links' posts", async () => {
    const routes = await unsafeRoutes(app);
    expect(routes.length).toBeGreaterThan(8);
    // UCP's checkout sessions are an API for agents on other sites: no cookie reaches them, the agent is named
    // by UCP-Agent (its profile fetched and checked) and its signature is verified when sent (docs/ucp.md).
    expect(unguarded(routes)).toEqual([
      "POST /api/checkout/:orderId/confirm",
      "POST /api/ucp/checkout-sessions",
      "PUT /api/ucp/checkout-sessions/:id",
      "POST /api/ucp/checkout-sessions/:id/cancel",
      "POST /api/ucp/checkout-sessions/:id/complete",
    ]);
    const pages = await unsafeRoutes(shop);
    expect(unguarded(pages).sort()).toEqual(["POST /-s/:storeId/consent/:customerId", "POST /-s/:storeId/unsubscribe/:messageId"]);
    expect(pages.filter((r) => r.guarded).map((r) => `${r.method} ${r.path}`).sort()).toEqual(Object.keys(PAGE_REFUSALS).sort());
  });

  it("refuses a cross-site request to each API route before its handler (403, reason csrf)", async () => {
    const s = await makeShop(db);
    for (const { method, path } of (await unsafeRoutes(app)).filter((r) => r.guarded)) {
      const res = await new Shopper(s.hostname).send(method, samplePath(path), new URLSearchParams({ variantId: s.variantId }), { "sec-fetch-site": "cross-site", "cf-connecting-ip": address() });
      // The Storefront MCP answers its refusals as JSON-RPC errors (storefront-mcp.ts), the reason in error.data.
      const rpc = res.body["error"] as { data?: { reason?: string } } | undefined;
      expect([res.status, res.body.json?.data?.["reason"] ?? rpc?.data?.reason], `${method} ${path}`).toEqual([403, "csrf"]);
    }
  });

  it("answers a cross-site post to each page's form as that page does", async () => {
    const s = await makeShop(db);
    for (const { method, path } of (await unsafeRoutes(shop)).filter((r) => r.guarded)) {
      const [status, text] = PAGE_REFUSALS[`${method} ${path}`]!;
      const foreign: Record<string, string>[] = [{ "sec-fetch-site": "cross-site" }, { origin: "https://evil.example" }];
      for (const site of foreign) {
        const res = await call(worker, `http://storefront.test${samplePath(path.replace("/-s/:storeId", ""), { handle: "fixture" })}`, {
          method,
          headers: { host: s.hostname, "content-type": "application/x-www-form-urlencoded", "cf-connecting-ip": address(), ...site },
          body: new URLSearchParams({ variantId: s.variantId, email: "victim@example.test" }).toString(),
        });
        expect(res.status, path).toBe(status);
        expect(await res.text(), path).toContain(text);
      }
    }
  });

  it("lets the store's own form through", async () => {
    const s = await makeShop(db);
    const shopper = new Shopper(s.hostname);
    const added = await shopper.form("/api/cart/lines", { variantId: s.variantId, quantity: "1", return: "/cart" });
    expect([added.status, added.headers.get("location")]).toEqual([303, "/cart"]);
  });
});
