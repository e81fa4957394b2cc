import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { testDb } from "../../test/harness";
import { logsOf } from "../../test/logs";
import { makeShop, Shopper, type ShopStore } from "../../test/storefront";

/** The storefront's provider services (shared/pipeline/providers.ts): read at start-up, each failing only its own uses. */
const db = testDb();
const order = () => ({ email: "asha@example.test", shippingAddress: { name: "Asha Rao", line1: "12 MG Road", city: "Pune", state: "IN-MH", postalCode: "411001", country: "IN" }, paymentMethod: "gateway" });
const orders = (s: ShopStore) => withStore(db, s.id, (tx) => tx.$client.query("select count(*)::int as n from shop_order where cart_id is not null")).then((r) => r.rows[0].n as number);

describe("a deployment whose payment gateway is misconfigured", () => {
  it("fails its first checkout and every one after (500, the variable named in the log, nothing placed), while the shop and the cart answer", async () => {
    const s = await makeShop(db);
    const broken = { PAYMENT_GATEWAY: "stripe" };
    const buyer = new Shopper(s.hostname);
    expect((await buyer.send("GET", "/", undefined, {}, broken)).status).toBe(200);
    expect((await buyer.send("POST", "/api/cart/lines", { variantId: s.variantId, quantity: 1 }, {}, broken)).status).toBe(200);
    const logs = await logsOf(async () => {
      for (let i = 0; i < 2; i++) expect((await buyer.send("POST", "/api/checkout", order(), {}, broken)).status).toBe(500);
    });
    expect(logs.lines.filter((l) => l.msg === "Unhandled error").map((l) => l.error)).toEqual([
      expect.stringContaining("PAYMENT_GATEWAY"),
      expect.stringContaining("PAYMENT_GATEWAY"),
    ]);
    expect(await orders(s)).toBe(0);
    // The same cart, with the gateway configured, becomes the order.
    expect((await buyer.send("POST", "/api/checkout", order())).status).toBe(201);
    expect(await orders(s)).toBe(1);
  });
});
