import { describe, expect, it } from "vitest";
import { orderEntity, type OrderSnapshot } from "./order-entity";
import { ucpSchemas } from "../../test/node/ucp-schemas";

/**
 * The order entity an agent's platform receives (./order-webhooks.ts) against the specification's own order
 * schema (test/fixtures/ucp/2026-08-25), in each state an update is sent for: placed and paid, shipped with
 * tracking, delivered, refunded with a return, cancelled; made by the same function the worker sends with.
 */
const validate = ucpSchemas().getSchema("https://ucp.dev/schemas/shopping/order.json")!;

function expectValid(entity: unknown) {
  expect(validate(entity), JSON.stringify(validate.errors)).toBe(true);
}

const KURTA = "7a1c1d7e-8a3b-4c2d-9e1f-0a1b2c3d4e5f";
const SCARF = "8b2d2e8f-9b4c-4d3e-8f20-1b2c3d4e5f60";
const PARCEL = "9c3e3f90-ac5d-4e4f-9031-2c3d4e5f6071";
const SHIPMENT = "ad4f40a1-bd6e-4f50-8142-3d4e5f607182";
const SESSION = "0b5e6f7a-1c2d-4e3f-8a9b-0c1d2e3f4a5b";
const LINK = "https://kurta.example.in/orders/5e6f7a8b-1c2d-4e3f-8a9b-0c1d2e3f4a5b?k=abc";

const placed: OrderSnapshot = {
  id: "5e6f7a8b-1c2d-4e3f-8a9b-0c1d2e3f4a5b",
  number: 1042,
  currency: "INR",
  status: "open",
  subtotal: 289800,
  discount: 0,
  discountCode: null,
  shipping: 5000,
  tax: 14038,
  total: 294800,
  shippingAddress: { name: "Asha Rao", line1: "12 MG Road", city: "Pune", state: "IN-MH", postalCode: "411001", country: "IN" },
  cancelledAt: null,
  lines: [
    { id: KURTA, variantId: "v-kurta-m", productTitle: "Cotton Kurta", variantTitle: "M", quantity: 2, unitPrice: 129900 },
    { id: SCARF, variantId: null, productTitle: "Silk Scarf", variantTitle: "Default", quantity: 1, unitPrice: 30000 },
  ],
  parcels: [{ id: PARCEL, lines: [{ orderLineId: KURTA, quantity: 2 }, { orderLineId: SCARF, quantity: 1 }] }],
  shipments: [],
  refunds: [],
  returns: [],
};

const shipment = (status: string, events: string[]): OrderSnapshot["shipments"][number] => ({
  id: SHIPMENT,
  parcelId: PARCEL,
  awb: "DLV-123456",
  courierName: "Delhivery",
  trackingUrl: "https://track.example/DLV-123456",
  status,
  createdAt: "2026-11-27T09:00:00.000Z",
  events: events.map((s, i) => ({ status: s, occurredAt: `2026-11-2${7 + i}T10:00:00.000Z` })),
});

describe("the UCP order entity against the specification's order schema", () => {
  it("placed and paid: every line processing, one expectation, no events, the money as the session showed it", () => {
    const entity = orderEntity(placed, SESSION, LINK);
    expectValid(entity);
    expect(entity).toMatchObject({ id: placed.id, label: "#1042", checkout_id: SESSION, permalink_url: LINK, currency: "INR" });
    expect(entity.line_items.map((l) => [l.id, l.item.title, l.quantity, l.status])).toEqual([
      ["li_1", "Cotton Kurta (M)", { original: 2, total: 2, fulfilled: 0 }, "processing"],
      ["li_2", "Silk Scarf", { original: 1, total: 1, fulfilled: 0 }, "processing"],
    ]);
    expect(entity.fulfillment).toEqual({
      expectations: [
        {
          id: PARCEL,
          line_items: [{ id: "li_1", quantity: 2 }, { id: "li_2", quantity: 1 }],
          method_type: "shipping",
          destination: { first_name: "Asha", last_name: "Rao", street_address: "12 MG Road", address_locality: "Pune", address_region: "IN-MH", postal_code: "411001", address_country: "IN" },
          fulfillable_on: "now",
        },
      ],
      events: [],
    });
    expect(entity.totals.map((t) => [t.type, t.amount])).toEqual([["subtotal", 289800], ["fulfillment", 5000], ["total", 294800]]);
    expect(entity.totals.at(-1)!.lines).toEqual([{ display_text: "Excl. GST", amount: 280762 }, { display_text: "GST", amount: 14038 }]);
  });

  it("shipped with tracking, then delivered: the courier's log as events, the lines fulfilled", () => {
    const shipped = orderEntity({ ...placed, shipments: [shipment("in_transit", ["pending", "in_transit", "in_transit"])] }, SESSION, LINK);
    expectValid(shipped);
    expect(shipped.fulfillment.events).toEqual([
      { id: `${SHIPMENT}:shipped`, occurred_at: "2026-11-27T10:00:00.000Z", type: "shipped", line_items: [{ id: "li_1", quantity: 2 }, { id: "li_2", quantity: 1 }], tracking_number: "DLV-123456", tracking_url: "https://track.example/DLV-123456", carrier: "Delhivery" },
      expect.objectContaining({ id: `${SHIPMENT}:in_transit`, type: "in_transit", occurred_at: "2026-11-28T10:00:00.000Z" }),
    ]);
    expect(shipped.line_items.map((l) => l.status)).toEqual(["fulfilled", "fulfilled"]);
    const delivered = orderEntity({ ...placed, shipments: [shipment("delivered", ["pending", "in_transit", "delivered"])] }, SESSION, LINK);
    expectValid(delivered);
    expect(delivered.fulfillment.events.map((e) => e.type)).toEqual(["shipped", "in_transit", "delivered"]);
  });

  it("refunded, part of it for a returned kurta: refund adjustments with the returned line, the line's total reduced", () => {
    const entity = orderEntity(
      {
        ...placed,
        shipments: [shipment("delivered", ["pending", "delivered"])],
        returns: [{ id: "ret-1", status: "refunded", lines: [{ orderLineId: KURTA, quantity: 1 }] }],
        refunds: [
          { id: "rf-1", amount: 129900, status: "processed", reason: "Too small", returnId: "ret-1", createdAt: "2026-12-02T08:00:00Z" },
          { id: "rf-2", amount: 5000, status: "pending", reason: null, returnId: null, createdAt: "2026-12-02T09:00:00Z" },
        ],
      },
      SESSION,
      LINK,
    );
    expectValid(entity);
    expect(entity.adjustments).toEqual([
      { id: "rf-1", type: "refund", occurred_at: "2026-12-02T08:00:00.000Z", status: "completed", line_items: [{ id: "li_1", quantity: -1 }], totals: [{ type: "total", amount: -129900 }], description: "Too small" },
      { id: "rf-2", type: "refund", occurred_at: "2026-12-02T09:00:00.000Z", status: "pending", totals: [{ type: "total", amount: -5000 }] },
    ]);
    expect(entity.line_items[0]!.quantity).toEqual({ original: 2, total: 1, fulfilled: 1 });
    // The order's money stays as placed: refunds are adjustments beside it.
    expect(entity.totals.find((t) => t.type === "total")!.amount).toBe(294800);
  });

  it("cancelled (after a full refund): every line removed, a cancellation adjustment, no expectation left", () => {
    const entity = orderEntity(
      {
        ...placed,
        status: "cancelled",
        cancelledAt: new Date("2026-11-28T12:00:00Z"),
        discount: 10000,
        discountCode: "DIWALI10",
        total: 284800,
        refunds: [{ id: "rf-1", amount: 284800, status: "processed", reason: null, returnId: null, createdAt: "2026-11-28T11:00:00Z" }],
      },
      SESSION,
      LINK,
    );
    expectValid(entity);
    expect(entity.line_items.map((l) => [l.quantity.total, l.status])).toEqual([[0, "removed"], [0, "removed"]]);
    expect(entity.fulfillment.expectations).toEqual([]);
    expect(entity.adjustments.at(-1)).toEqual({
      id: `${placed.id}:cancellation`,
      type: "cancellation",
      occurred_at: "2026-11-28T12:00:00.000Z",
      status: "completed",
      line_items: [{ id: "li_1", quantity: -2 }, { id: "li_2", quantity: -1 }],
      description: "The order was cancelled.",
    });
    expect(entity.totals.map((t) => [t.type, t.amount])).toEqual([["subtotal", 289800], ["discount", -10000], ["fulfillment", 5000], ["total", 284800]]);
  });

  it("the schema can refuse: a line without its status, an order without permalink_url", () => {
    const entity = orderEntity(placed, SESSION, LINK);
    expect(validate({ ...entity, permalink_url: undefined })).toBe(false);
    expect(validate({ ...entity, line_items: [{ ...entity.line_items[0], status: "shipped" }] })).toBe(false);
  });
});
