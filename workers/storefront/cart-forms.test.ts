import { describe, expect, it } from "vitest";
import { discount, productVariant } from "#shared/db/schema";
import { withStore } from "#shared/db/with-store";
import { testDb } from "../../test/harness";
import { cartOf, makeShop, Shopper, type Answer } from "../../test/storefront";

const db = testDb();

const day = 86_400_000;
const issuePaths = (a: Answer) => ((a.body.json?.data?.["issues"] ?? []) as { path: string }[]).map((i) => i.path);

describe("storefront cart: discount codes", () => {
  it("applies a live code (any case) to the totals, and removes it", async () => {
    const s = await makeShop(db);
    const shopper = new Shopper(s.hostname);
    await shopper.add(s.variantId, 3);
    const applied = await shopper.applyCode(` ${s.discountCode.toLowerCase()} `);
    expect(applied.status).toBe(200);
    expect(cartOf(applied)).toMatchObject({ subtotal: 3000, discount: 300, discountCode: s.discountCode, total: 2700 });
    expect(cartOf(await shopper.get())).toMatchObject({ discount: 300, total: 2700 });
    expect(cartOf(await shopper.dropCode())).toMatchObject({ subtotal: 3000, discount: 0, discountCode: null, total: 3000 });
  });

  it("never takes a fixed amount below zero, and stops applying a code that is no longer live", async () => {
    const s = await makeShop(db);
    await withStore(db, s.id, (tx) => tx.insert(discount).values({ storeId: s.id, code: "BIG5000", kind: "fixed_amount", value: 5000 }));
    const shopper = new Shopper(s.hostname);
    await shopper.add(s.variantId, 2);
    expect(cartOf(await shopper.applyCode("big5000"))).toMatchObject({ subtotal: 2000, discount: 2000, discountCode: "BIG5000", total: 0 });
    await withStore(db, s.id, (tx) => tx.update(discount).set({ status: "disabled" }));
    expect(cartOf(await shopper.get())).toMatchObject({ subtotal: 2000, discount: 0, discountCode: null, total: 2000 });
  });

  it("refuses codes that are unknown, of another store, or not live, with the reason", async () => {
    const s = await makeShop(db);
    const other = await makeShop(db);
    const now = Date.now();
    await withStore(db, s.id, (tx) =>
      tx.insert(discount).values([
        { storeId: s.id, code: "OLD10", kind: "percentage", value: 10, startsAt: new Date(now - 10 * day), endsAt: new Date(now - day) },
        { storeId: s.id, code: "SOON10", kind: "percentage", value: 10, startsAt: new Date(now + day) },
        { storeId: s.id, code: "OFF10", kind: "percentage", value: 10, status: "disabled" },
        { storeId: s.id, code: "GONE10", kind: "percentage", value: 10, usageLimit: 1, usageCount: 1 },
      ]),
    );
    const shopper = new Shopper(s.hostname);
    await shopper.add(s.variantId, 1);
    for (const [code, status, reason] of [
      ["NOSUCH", 404, "unknown_code"],
      [other.discountCode, 404, "unknown_code"],
      ["old10", 409, "expired"],
      ["SOON10", 409, "scheduled"],
      ["OFF10", 409, "disabled"],
      ["GONE10", 409, "used_up"],
    ] as const) {
      const res = await shopper.applyCode(code);
      expect({ code, status: res.status, reason: res.body.json?.data?.["reason"] }).toEqual({ code, status, reason });
      expect(issuePaths(res)).toEqual(["code"]);
    }
    expect(cartOf(await shopper.get())).toMatchObject({ discount: 0, discountCode: null });
  });
});

describe("storefront cart: forms for the no-JS pages", () => {
  it("adds, changes and removes through form posts, redirecting back with 303", async () => {
    const s = await makeShop(db);
    const shopper = new Shopper(s.hostname);
    const added = await shopper.form("/api/cart/lines", { variantId: s.variantId, quantity: "2", return: "/products/fixture?x=1" });
    expect(added.status).toBe(303);
    expect(added.headers.get("location")).toBe("/products/fixture?x=1");
    expect(added.headers.get("set-cookie")).toMatch(/^wc_cart=[A-Za-z0-9_-]{43};.*HttpOnly/);
    const line = cartOf(await shopper.get()).lines[0]!;
    expect(line.quantity).toBe(2);

    const over = await shopper.form("/api/cart/lines", { variantId: s.variantId, quantity: "9", return: "/products/fixture" });
    expect(over.status).toBe(303);
    expect(over.headers.get("location")).toBe("/products/fixture?cartError=insufficient_stock");

    const changed = await shopper.form(`/api/cart/lines/${line.id}`, { quantity: "4" });
    expect(changed.headers.get("location")).toBe("/cart");
    expect(cartOf(await shopper.get()).lines).toMatchObject([{ quantity: 4 }]);

    await shopper.form("/api/cart/discount", { code: s.discountCode.toLowerCase(), return: "/cart" });
    expect(cartOf(await shopper.get())).toMatchObject({ discount: 400, total: 3600 });
    const badCode = await shopper.form("/api/cart/discount", { code: "NOSUCH" });
    expect(badCode.headers.get("location")).toBe("/cart?cartError=unknown_code");
    await shopper.form("/api/cart/discount", { _method: "DELETE" });
    expect(cartOf(await shopper.get())).toMatchObject({ discount: 0, discountCode: null });

    await shopper.form(`/api/cart/lines/${line.id}`, { _method: "DELETE" });
    expect(cartOf(await shopper.get()).lines).toEqual([]);
    const invalid = await shopper.form("/api/cart/lines", { variantId: "nope", quantity: "1" });
    expect(invalid.headers.get("location")).toBe("/cart?cartError=bad_request");
  });

  it.each(["//evil.example/x", "https://evil.example/", "/\\evil.example", "/./", "cart", "", "/ok path"])(
    "sends the shopper to /cart instead of return=%j",
    async (target) => {
      const s = await makeShop(db);
      const res = await new Shopper(s.hostname).form("/api/cart/lines", { variantId: s.variantId, quantity: "1", return: target });
      expect(res.status).toBe(303);
      expect(res.headers.get("location")).toMatch(target === "/./" ? /^\/$/ : /^\/cart$/);
    },
  );

  it("refuses a cross-site post with 403 and changes nothing", async () => {
    const s = await makeShop(db);
    const shopper = new Shopper(s.hostname);
    await shopper.add(s.variantId, 1);
    const fields = { variantId: s.variantId, quantity: "1" };
    const refused: Record<string, string>[] = [{ "sec-fetch-site": "cross-site" }, { "sec-fetch-site": "same-site" }, { origin: "https://evil.example" }];
    for (const headers of refused) {
      const res = await shopper.form("/api/cart/lines", fields, headers);
      expect(res.status).toBe(403);
      expect(res.body.json).toMatchObject({ code: "FORBIDDEN", data: { reason: "csrf" } });
    }
    const json = await shopper.send("POST", "/api/cart/lines", { variantId: s.variantId, quantity: 1 }, { "sec-fetch-site": "cross-site" });
    expect(json.status).toBe(403);
    expect(cartOf(await shopper.get()).lines).toMatchObject([{ quantity: 1 }]);
  });
});

describe("storefront cart: input errors name the field", () => {
  it("answers 400 naming the field for bad JSON and bad values", async () => {
    const s = await makeShop(db);
    const shopper = new Shopper(s.hostname);
    const cases: [Promise<Answer>, string][] = [
      [shopper.send("POST", "/api/cart/lines", "{not json"), "body"],
      [shopper.send("POST", "/api/cart/lines", "[1]"), "body"],
      [shopper.send("POST", "/api/cart/lines", { quantity: 1 }), "variantId"],
      [shopper.send("POST", "/api/cart/lines", { variantId: "x", quantity: 1 }), "variantId"],
      [shopper.add(s.variantId, 0), "quantity"],
      [shopper.add(s.variantId, 1000), "quantity"],
      [shopper.send("POST", "/api/cart/lines", { variantId: s.variantId, quantity: "2" }), "quantity"],
      [shopper.send("POST", "/api/cart/lines", { variantId: s.variantId, quantity: 1.5 }), "quantity"],
      [shopper.send("POST", "/api/cart/lines", { variantId: s.variantId, price: 1 }), ""],
      [shopper.send("POST", "/api/cart/discount", {}), "code"],
    ];
    for (const [pending, path] of cases) {
      const res = await pending;
      expect({ path, status: res.status, code: res.body.json?.code }).toEqual({ path, status: 400, code: "BAD_REQUEST" });
      expect(issuePaths(res)).toContain(path);
    }
    expect(cartOf(await shopper.get()).id).toBeNull();

    const line = cartOf(await shopper.add(s.variantId, 1)).lines[0]!;
    for (const quantity of [-1, 1000]) {
      const res = await shopper.setQuantity(line.id, quantity);
      expect(res.status).toBe(400);
      expect(issuePaths(res)).toEqual(["quantity"]);
    }
    const junkLine = await shopper.setQuantity("not-a-uuid", 1);
    expect(junkLine.status).toBe(404);
  });

  it("refuses other content types with 415 and a line past 999 with 400", async () => {
    const s = await makeShop(db);
    const shopper = new Shopper(s.hostname);
    const res = await shopper.send("POST", "/api/cart/lines", "variantId=x", { "content-type": "text/plain" });
    expect(res.status).toBe(415);
    await withStore(db, s.id, (tx) => tx.update(productVariant).set({ preorder: true }));
    await shopper.add(s.variantId, 999);
    const over = await shopper.add(s.variantId, 1);
    expect(over.status).toBe(400);
    expect(issuePaths(over)).toEqual(["variantId"]);
  });
});
