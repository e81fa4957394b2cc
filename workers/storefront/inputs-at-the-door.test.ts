import { describe, expect, it } from "vitest";
import { MAX_INPUT_DEPTH, NUL_MESSAGE } from "#shared/core/storable";
import { nested } from "../../test/fuzz";
import { testDb } from "../../test/harness";
import { makeShop, Shopper } from "../../test/storefront";
import { STOREFRONT_BODY_LIMIT } from "./input-guard";

/**
 * Issue 20 item 19 (docs/decisions/0023-inputs-at-the-door.md): a NUL reaching Postgres answered 500 on the
 * storefront (search, product and page handles, discount codes). The door refuses it before anything else:
 * a path with one names no page (404), a query or body field is a 400 naming it.
 */
const db = testDb();

const issue = (a: { body: { json?: { data?: Record<string, unknown> } } }) => (a.body.json?.data?.["issues"] as { path: string; message: string }[] | undefined)?.[0];

describe("text Postgres cannot hold, at the storefront's door", () => {
  it("a product or page handle with a NUL names nothing: the 404 page", async () => {
    const s = await makeShop(db);
    const shopper = new Shopper(s.hostname);
    for (const path of ["/products/fixture%00", "/products/a%00b", "/pages/a%00b", "/l/a%00", "/orders/%00"]) {
      const a = await shopper.send("GET", path);
      expect({ path, status: a.status, type: a.headers.get("content-type") }).toEqual({ path, status: 404, type: "text/html; charset=utf-8" });
    }
  });

  it("a search or any query with a NUL is the 400 page naming the field", async () => {
    const s = await makeShop(db);
    const shopper = new Shopper(s.hostname);
    for (const path of ["/search?q=a%00b", "/products?min=%00", "/?utm_source=%00"]) {
      const a = await shopper.send("GET", path);
      expect({ path, status: a.status }).toEqual({ path, status: 400 });
    }
    const api = await shopper.send("GET", "/api/cart?x=%00");
    expect(api.status).toBe(400);
    expect(issue(api)).toEqual({ path: "x", message: NUL_MESSAGE });
  });

  it("a discount code with a NUL, as JSON, a form or multipart, is a 400 naming code (was a 500)", async () => {
    const s = await makeShop(db);
    const shopper = new Shopper(s.hostname);
    expect((await shopper.add(s.variantId, 1)).status).toBe(200);
    const json = await shopper.applyCode(`${s.discountCode}\u0000`);
    expect(json.status).toBe(400);
    expect(issue(json)).toEqual({ path: "code", message: NUL_MESSAGE });
    const form = await shopper.form("/api/cart/discount", { code: "A\u0000B" });
    expect(form.status).toBe(400);
    const boundary = "----fuzz";
    const text = `--${boundary}\r\ncontent-disposition: form-data; name="code"\r\n\r\nA\u0000B\r\n--${boundary}--\r\n`;
    const parts = await shopper.send("POST", "/api/cart/discount", text, { "content-type": `multipart/form-data; boundary=${boundary}`, "sec-fetch-site": "same-origin" });
    expect(parts.status).toBe(400);
    // The cart is as it was: the code never reached it.
    expect((await shopper.get()).body.cart).toMatchObject({ discountCode: null });
  });

  it("a checkout whose address holds a NUL or nests past the limit is refused with the field", async () => {
    const s = await makeShop(db);
    const shopper = new Shopper(s.hostname);
    await shopper.add(s.variantId, 1);
    const address = { name: "Asha\u0000", line1: "1 Road", city: "Mumbai", state: "IN-MH", postalCode: "400001", country: "IN" };
    const nul = await shopper.send("POST", "/api/checkout", { email: "asha@example.test", shippingAddress: address, paymentMethod: "gateway" });
    expect(nul.status).toBe(400);
    expect(issue(nul)).toEqual({ path: "shippingAddress.name", message: NUL_MESSAGE });
    const deep = await shopper.send("POST", "/api/checkout", { email: "asha@example.test", shippingAddress: nested(200), paymentMethod: "gateway" });
    expect(deep.status).toBe(400);
    expect(issue(deep)?.message).toBe(`is nested deeper than ${MAX_INPUT_DEPTH} levels`);
  });

  it(`a body over ${STOREFRONT_BODY_LIMIT} bytes is refused (413) before it is read further`, async () => {
    const s = await makeShop(db);
    const shopper = new Shopper(s.hostname);
    const a = await shopper.send("POST", "/api/cart/lines", { variantId: s.variantId, note: "x".repeat(STOREFRONT_BODY_LIMIT) });
    expect(a.status).toBe(413);
  });
});
