import { describe, expect, it } from "vitest";
import { TAX_CLASSES, type TaxClass } from "../db/schema";
import { checkoutView, sessionNotFound, type UcpCheckout } from "./checkout-sessions";
import { ucpSchemas } from "../../test/node/ucp-schemas";
import { placedView, type PlacedRead } from "./checkout-order-view";
import { presentCheckout } from "./checkout-present";

/**
 * The checkout sessions' answers against the specification's own JSON Schemas (test/fixtures/ucp/2026-08-25):
 * the checkout with the fulfillment and the discount extensions, for a session incomplete, ready with a code
 * and shipping, and cancelled, and the not-found answer as the protocol's error response. The answers are made
 * by the same function the Worker answers with (`checkoutView`), from readings like the database's.
 */
const ajv = ucpSchemas();
const SCHEMAS = ["shopping/fulfillment.json#/$defs/dev.ucp.shopping.checkout", "shopping/discount.json#/$defs/dev.ucp.shopping.checkout"];

function expectValid(answer: unknown, schemas = SCHEMAS) {
  for (const id of schemas) {
    const validate = ajv.getSchema(`https://ucp.dev/schemas/${id}`)!;
    expect(validate(answer), `${id}: ${JSON.stringify(validate.errors)}`).toBe(true);
  }
}

const VARIANT = "6f1c1d7e-8a3b-4c2d-9e1f-0a1b2c3d4e5f";
const shop = { enabled: true, currency: "INR", fee: 5000, freeOver: 500000, links: [{ type: "refund_policy", url: "/pages/refund-policy", title: "Refund policy" }] };
const read = {
  variants: [{ id: VARIANT, productTitle: "Cotton Kurta", variantTitle: "M", price: 129900, active: true, preorder: false, available: 3, taxClass: "gst_5" as const }],
  codes: [{ code: "DIWALI10", kind: "percentage" as const, value: 10, state: "live" as const }],
  rates: Object.fromEntries(TAX_CLASSES.map((c) => [c, 500])) as Record<TaxClass, number>,
};
const address = { first_name: "Asha", last_name: "Rao", street_address: "12 MG Road", address_locality: "Pune", address_region: "IN-MH", postal_code: "411001", address_country: "IN" };
const session = (over: Partial<Parameters<typeof checkoutView>[0]> = {}) => ({
  id: "0b5e6f7a-1c2d-4e3f-8a9b-0c1d2e3f4a5b",
  status: "incomplete" as const,
  expiresAt: new Date("2026-11-26T18:00:00Z"),
  lineItems: [{ variant_id: VARIANT, quantity: 2 }],
  buyer: null,
  destination: null,
  discountCodes: [],
  ...over,
});

describe("UCP checkout session answers against the specification's schemas", () => {
  it("an incomplete session, with its messages", () => {
    const answer = checkoutView(session({ lineItems: [{ variant_id: VARIANT, quantity: 9 }, { variant_id: "gone", quantity: 1 }] }), shop, read);
    expect(answer.status).toBe("incomplete");
    expectValid(answer);
  });

  it("a session ready to complete, with a code, shipping and totals that add up", () => {
    const answer: UcpCheckout = checkoutView(session({ buyer: { email: "asha@example.com" }, destination: address, discountCodes: ["diwali10", "NOPE"] }), shop, read);
    expect(answer.status).toBe("ready_for_complete");
    expect(answer.totals.map((t) => [t.type, t.amount])).toEqual([["subtotal", 259800], ["discount", -25980], ["fulfillment", 5000], ["total", 238820]]);
    // GST at 5 % inside the total, as lines under it that add up to it.
    const gst = answer.totals.at(-1)!.lines!;
    expect(gst.map((l) => l.display_text)).toEqual(["Excl. GST", "GST"]);
    expect(gst[0]!.amount + gst[1]!.amount).toBe(238820);
    expect(Math.abs(gst[1]!.amount - Math.round((238820 * 5) / 105))).toBeLessThanOrEqual(2);
    expectValid(answer);
  });

  it("a cancelled session, and the answer for a session that does not exist", () => {
    expectValid(checkoutView(session({ status: "canceled" }), shop, read));
    expectValid(sessionNotFound(), ["common/types/error_response.json"]);
  });

  it("a completed session's answers: waiting for the buyer's payment (requires_escalation with continue_url), completed with its order, lapsed", async () => {
    const order: PlacedRead = {
      id: "7d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6", number: 1042, status: "open", paymentStatus: "unpaid", currency: "INR",
      subtotal: 259800, discount: 25980, discountCode: "DIWALI10", shipping: 5000, tax: 11372, total: 238820,
      lines: [{ variantId: VARIANT, title: "Cotton Kurta (M)", unitPrice: 129900, quantity: 2 }],
    };
    const ready = session({ buyer: { email: "asha@example.com" }, destination: address, discountCodes: ["DIWALI10"] });
    const present = (o: PlacedRead) => presentCheckout(placedView(ready, shop, o), { origin: "https://shop.example.in", storeId: "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d", rootSecret: "local-ucp-test-root-secret-000000000" });
    const waiting = await present(order);
    expect(waiting.status).toBe("requires_escalation");
    expect(waiting.continue_url).toMatch(/^https:\/\/shop\.example\.in\/orders\/7d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6\?k=[A-Za-z0-9_-]{43}$/);
    expect(waiting.messages[0]).toMatchObject({ type: "error", code: "payment_required", severity: "requires_buyer_input" });
    expectValid(waiting);
    const paid = await present({ ...order, paymentStatus: "paid" });
    expect(paid.order).toEqual({ id: order.id, label: "#1042", permalink_url: waiting.continue_url });
    expect(paid.continue_url).toBeUndefined();
    expect(paid.totals.map((t) => t.amount)).toEqual([259800, -25980, 5000, 238820]);
    expectValid(paid);
    const lapsed = await present({ ...order, status: "expired" });
    expect([lapsed.status, lapsed.continue_url, lapsed.order]).toEqual(["canceled", undefined, undefined]);
    expectValid(lapsed);
  });

  it("the schema can refuse: a total that is not an integer, a missing status", () => {
    const answer = checkoutView(session(), shop, read);
    const validate = ajv.getSchema(`https://ucp.dev/schemas/${SCHEMAS[0]}`)!;
    expect(validate({ ...answer, totals: [{ type: "subtotal", amount: 1.5 }, { type: "total", amount: 1.5 }] })).toBe(false);
    expect(validate({ ...answer, status: undefined })).toBe(false);
  });
});
