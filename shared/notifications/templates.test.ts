import { describe, expect, it } from "vitest";
import { renderMessage, renderNotification, TEMPLATE_NAMES, type NotificationFacts } from "./templates";

/**
 * Every shopper message from the one template system: the HTML part (a table layout with a hidden
 * preheader) and the text part carry the same facts (items with variant, quantity and price, each parcel's
 * GST split and tracking, the order's totals, the address, payment and delivery in words, the order link),
 * and every value is escaped in the HTML, a hostile product title included.
 */
const HOSTILE = `Kurta <script>alert("x")</script> & 'Co'`;
const ESCAPED = "Kurta &#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62; &#38; &#39;Co&#39;";
const ORDER_URL = "https://shop.example/orders/7d3c1f0e-1111-4222-8333-444455556666?k=abc";

const facts: NotificationFacts = {
  storeName: `Asha's <Store> & Sons`,
  orderNumber: 1152,
  email: "asha@example.test",
  total: 3_550_00,
  currency: "INR",
  amount: 1_000_00,
  returnNumber: 7,
  expiresAt: "27 Nov 2026, 10:00",
  reason: `Out of stock <b>now</b>`,
  orderUrl: ORDER_URL,
  order: {
    status: "open",
    paymentStatus: "paid",
    fulfillmentStatus: "partially_fulfilled",
    subtotal: 3_500_00,
    discount: 50_00,
    shipping: 100_00,
    tax: 250_00,
    address: { name: "Asha Rao", line1: "12 MG Road", city: "Pune", state: "IN-MH", postalCode: "411001", country: "IN" },
    lines: [
      { productTitle: HOSTILE, variantTitle: "M / Blue", quantity: 2, unitPrice: 1_000_00, lineTotal: 2_000_00, discount: 30_00 },
      { productTitle: "Jutti", variantTitle: "Size 7", quantity: 1, unitPrice: 1_500_00, lineTotal: 1_500_00, discount: 20_00 },
    ],
    parcels: [
      {
        originState: "IN-MH",
        subtotal: 2_000_00,
        discount: 30_00,
        shipping: 50_00,
        tax: 96_20,
        cgst: 48_10,
        sgst: 48_10,
        igst: 0,
        lines: [{ productTitle: HOSTILE, variantTitle: "M / Blue", quantity: 2 }],
        shipments: [{ awb: "BD-778899", courier: "Blue Dart", trackingUrl: "https://track.example/BD-778899", status: "in_transit" }],
      },
      { originState: "IN-KA", subtotal: 1_500_00, discount: 20_00, shipping: 50_00, tax: 153_80, cgst: 0, sgst: 0, igst: 153_80, lines: [{ productTitle: "Jutti", variantTitle: "Size 7", quantity: 1 }], shipments: [] },
    ],
  },
};

describe("shopper messages", () => {
  it.each(TEMPLATE_NAMES)("%s: the HTML and the text part carry the items, parcels with their GST split, totals, address, statuses and the link", (template) => {
    const r = renderNotification(template, facts)!;
    expect(r.subject).toContain("#1152");
    expect(r.subject.endsWith(` · ${facts.storeName}`)).toBe(true);
    for (const part of [r.html, r.text]) {
      for (const said of ["M / Blue", "Jutti", "Size 7", "₹1,000.00", "₹2,000.00", "₹1,500.00", "₹3,550.00", "₹250.00", "₹48.10", "₹153.80", "−₹50.00", "BD-778899", "Blue Dart", "12 MG Road", "Pune", "Maharashtra", "411001"]) {
        expect(part, `${template}: ${said}`).toContain(said);
      }
      expect(part).toMatch(/CGST \(included\)/);
      expect(part).toMatch(/SGST \(included\)/);
      expect(part).toMatch(/IGST \(included\)/);
      expect(part).toContain("Parcel 2 of 2");
      expect(part).toContain("from Karnataka");
      expect(part).toContain("partly shipped");
    }
    expect(r.text).toContain(HOSTILE);
    expect(r.text).toContain("2 × ");
    expect(r.text).toContain(`Your order: ${ORDER_URL}`);
    expect(r.text).toContain("Payment: paid");
    expect(r.text).toContain("Delivery: partly shipped");
    expect(r.text).toContain("Total: ₹3,550.00");
    expect(r.text.endsWith(`— ${facts.storeName}`)).toBe(true);
    // The HTML: escaped everywhere, the link a button, a 600 px table layout with inline styles and a hidden preheader.
    expect(r.html).toContain(ESCAPED);
    expect(r.html).not.toContain("<script");
    expect(r.html).not.toContain(HOSTILE);
    expect(r.html).toContain("Asha&#39;s &#60;Store&#62; &#38; Sons");
    expect(r.html).toContain(`<a href="${ORDER_URL}"`);
    expect(r.html).toContain('width="600"');
    expect(r.html).toMatch(/<div style="display:none[^"]*">[^<]+<\/div>/);
    expect(r.html).not.toMatch(/<style|<link|<form/i);
    expect(r.html).toMatch(/<td[^>]*>Payment: <strong>paid<\/strong>/);
    expect(r.html.length).toBeLessThan(100_000);
  });

  it("says what each message is about, with the event's facts", () => {
    const text = (t: string) => renderNotification(t, facts)!.text;
    expect(text("order_confirmation")).toContain("Thank you for your order #1152 of ₹3,550.00.");
    expect(text("order_shipped")).toContain("Your order #1152 is on its way.");
    expect(text("order_shipped")).toContain("Blue Dart, tracking number BD-778899: in transit (https://track.example/BD-778899)");
    expect(text("order_refunded")).toContain("We have refunded ₹1,000.00 for order #1152.");
    expect(text("return_approved")).toContain("Your return 7 for order #1152 is approved.");
    expect(renderNotification("order_cancelled", facts)!.html).toContain("Reason: Out of stock &#60;b&#62;now&#60;/b&#62;");
    expect(renderNotification("no_such_template", facts)).toBeNull();
  });

  it("shows the store's logo when it has an http(s) one, fitted to 160 × 48 in its own shape, and its name otherwise; a link is only ever http(s)", () => {
    const withLogo = renderNotification("payment_received", { ...facts, logo: { url: "https://cdn.example/logo.png?a=1&b=2", width: 1200, height: 300 } })!.html;
    expect(withLogo).toContain('<img src="https://cdn.example/logo.png?a=1&#38;b=2" alt="Asha&#39;s &#60;Store&#62; &#38; Sons" width="160" height="40" style="display:block;border:0;max-width:160px;height:auto">');
    expect(withLogo).not.toContain("font-size:20px;font-weight:700");
    const tall = renderNotification("payment_received", { ...facts, logo: { url: "https://cdn.example/mark.jpg", width: 400, height: 400 } })!.html;
    expect(tall).toContain('width="48" height="48" style="display:block;border:0;max-width:48px;height:auto"');
    const plain = renderNotification("payment_received", { ...facts, logo: { url: "javascript:alert(1)", width: 100, height: 100 } })!.html;
    expect(plain).not.toContain("<img");
    expect(plain).not.toContain("javascript:");
    const tricky = renderNotification("order_shipped", { ...facts, order: { ...facts.order!, parcels: [{ ...facts.order!.parcels[0]!, shipments: [{ awb: "X1", courier: null, trackingUrl: "javascript:alert(1)", status: "pending" }] }] } })!.html;
    expect(tricky).not.toContain("javascript:");
    expect(tricky).toContain("Courier, tracking number X1: handed to the courier");
  });

  it("an order in a union territory without a legislature shows UTGST for the second half; a message without the order is its sentences alone", () => {
    const ut = renderNotification("order_confirmation", { ...facts, order: { ...facts.order!, parcels: [{ ...facts.order!.parcels[0]!, originState: "IN-CH" }] } })!;
    expect(ut.text).toContain("UTGST (included): ₹48.10");
    const bare = renderNotification("order_delivered", { ...facts, order: undefined, orderUrl: undefined })!;
    expect(bare.text).toBe(`Your order #1152 was delivered. We hope you enjoy it.\n\n— ${facts.storeName}`);
    const consent = renderMessage("Shop & Co", "Confirm", ["Someone asked."], { url: "https://shop.example/c?k=1", text: "Confirm", label: "Yes" });
    expect(consent.text).toContain("Confirm: https://shop.example/c?k=1");
    expect(consent.html).toContain("Shop &#38; Co");
  });
});
