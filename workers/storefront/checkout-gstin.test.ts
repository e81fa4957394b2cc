import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { testDb } from "../../test/harness";
import { call } from "../../test/call";
import { checkoutForm } from "../../test/orders";
import { makeShop, Shopper, type ShopStore } from "../../test/storefront";
import worker from "./index";

/** A business purchase: the buyer's GSTIN at checkout (issue 22 item 1; docs/gst.md "Tax identity"). */
const db = testDb();

const address = { name: "Asha Rao", line1: "12 MG Road", city: "Pune", state: "IN-MH", postalCode: "411001", country: "IN" };
const order = (overrides: Record<string, unknown> = {}) => ({ email: "asha@example.test", shippingAddress: address, paymentMethod: "gateway", ...overrides });
const sql = (s: ShopStore, text: string, values: unknown[] = []) => withStore(db, s.id, (tx) => tx.$client.query(text, values)).then((r) => r.rows);

async function shop(): Promise<ShopStore> {
  const s = await makeShop(db);
  await sql(s, "update location set state = 'IN-MH'");
  return s;
}

const issuesOf = (body: { json?: { data?: Record<string, unknown> } }) => (body.json?.data?.["issues"] ?? []) as { path: string; message: string }[];
const page = async (s: ShopStore, path: string) => (await call(worker, `http://storefront.test${path}`, { headers: { host: s.hostname } })).text();

describe("checkout: a business purchase", () => {
  it("refuses a bad GSTIN with 400 naming gstin and the reason, and a legal name without a GSTIN; no order", async () => {
    const s = await shop();
    const buyer = new Shopper(s.hostname);
    await buyer.add(s.variantId, 1);
    for (const [gstin, reason] of [
      ["27AAPFU0939F1ZO", /check character/],
      ["25ABCDE1234F1Z4", /state code 25/],
      ["27AAPFU0939F1Z", /15 characters/],
    ] as const) {
      const res = await buyer.send("POST", "/api/checkout", order({ gstin }));
      expect(res.status, gstin).toBe(400);
      expect(issuesOf(res.body)).toEqual([{ path: "gstin", message: expect.stringMatching(reason) }]);
    }
    const named = await buyer.send("POST", "/api/checkout", order({ legalName: "Rao Traders" }));
    expect(named.status).toBe(400);
    expect(issuesOf(named.body).map((i) => i.path)).toEqual(["gstin"]);
    expect(await sql(s, "select id from shop_order where cart_id is not null")).toEqual([]);
  });

  it("stores the normalised GSTIN and legal name on the order; the JSON answer and the shopper's order page show them", async () => {
    const s = await shop();
    const buyer = new Shopper(s.hostname);
    await buyer.add(s.variantId, 1);
    // A buyer of another state than the delivery address: allowed (the place of supply stays the delivery state).
    const res = await buyer.send("POST", "/api/checkout", order({ gstin: " 29abcde1234f1zw", legalName: "Rao Traders LLP" }));
    expect(res.status).toBe(201);
    expect(res.body.order).toMatchObject({ buyerGstin: "29ABCDE1234F1ZW", buyerLegalName: "Rao Traders LLP" });
    expect(await sql(s, "select buyer_gstin, buyer_legal_name, ship_to_state from shop_order where cart_id is not null")).toEqual([
      { buyer_gstin: "29ABCDE1234F1ZW", buyer_legal_name: "Rao Traders LLP", ship_to_state: "IN-MH" },
    ]);
    const html = await page(s, String(res.body.orderUrl));
    expect(html).toContain("GSTIN <strong>29ABCDE1234F1ZW</strong>");
    expect(html).toContain("Rao Traders LLP");
  });

  it("the form without JavaScript: a bad GSTIN comes back by its field; a good one places the order; empty fields are no business purchase", async () => {
    const s = await shop();
    const buyer = new Shopper(s.hostname);
    await buyer.add(s.variantId, 1);
    const form = { ...checkoutForm, paymentMethod: "gateway" };
    const wrong = await call(worker, "http://storefront.test/checkout", {
      method: "POST",
      headers: { host: s.hostname, cookie: `wc_cart=${buyer.cookie}`, "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
      body: new URLSearchParams({ ...form, gstin: "27AAPFU0939F1ZO", legalName: "Rao Traders" }),
    });
    expect(wrong.status).toBe(400);
    const html = await wrong.text();
    expect(html).toContain('id="gstin-error"');
    expect(html).toContain("GSTIN has a wrong check character");
    expect(html).toContain('value="Rao Traders"');
    expect(await sql(s, "select id from shop_order where cart_id is not null")).toEqual([]);

    expect((await buyer.form("/checkout", { ...form, gstin: "27aapfu0939f1zv", legalName: "" })).status).toBe(303);
    expect(await sql(s, "select buyer_gstin, buyer_legal_name from shop_order where cart_id is not null")).toEqual([{ buyer_gstin: "27AAPFU0939F1ZV", buyer_legal_name: null }]);

    const plain = new Shopper(s.hostname);
    await plain.add(s.variantId, 1);
    expect((await plain.form("/checkout", { ...form, email: "b@example.test", gstin: "", legalName: "" })).status).toBe(303);
    expect(await sql(s, "select count(*)::int as n from shop_order where cart_id is not null and buyer_gstin is null")).toEqual([{ n: 1 }]);
  });
});
