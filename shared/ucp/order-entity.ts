import { UCP_VERSION } from "./profile";

/**
 * The UCP order entity (issue 26 item 4; the specification's `dev.ucp.shopping.order`, schema
 * `shopping/order.json`): an order an agent placed through a checkout session, as it stands now. The
 * specification sends the full entity on every update, never a delta, so it is built from the order's rows at
 * the moment it is sent (./order-webhooks.ts) and is never stale.
 *
 * - `line_items`: the order's lines by position, `li_<n>` as the session's answer numbered them, each with its
 *   quantities (`total`: what is still bought after a cancellation or a received return; `fulfilled`: what left
 *   in a parcel with a shipment) and the status the specification derives from them.
 * - `fulfillment.expectations`: one per parcel (where it goes, what it holds); none once the order is cancelled.
 * - `fulfillment.events`: each shipment's log as the couriers reported it (`shipped` when it was booked,
 *   `in_transit`, `delivered`, `undeliverable`, `returned_to_sender`), with its AWB, courier and tracking link.
 * - `adjustments`: each refund (with the returned lines when it refunds a return) and the cancellation.
 * - `totals`: the order's money as placed (GST inside `subtotal`, shown as lines under `total`, as the session
 *   showed it); refunds are adjustments and do not change them.
 */

/** An order as the entity is built from it (money in minor units; times as ISO strings or Dates). */
export interface OrderSnapshot {
  id: string;
  number: number;
  currency: string;
  status: string;
  subtotal: number;
  discount: number;
  discountCode: string | null;
  shipping: number;
  tax: number;
  total: number;
  shippingAddress: Record<string, string>;
  /** When the order was cancelled (its `order.cancelled` event); null when it was not. */
  cancelledAt: string | Date | null;
  /** By position. */
  lines: { id: string; variantId: string | null; productTitle: string; variantTitle: string; quantity: number; unitPrice: number }[];
  parcels: { id: string; lines: { orderLineId: string; quantity: number }[] }[];
  shipments: {
    id: string;
    parcelId: string;
    awb: string;
    courierName: string | null;
    trackingUrl: string | null;
    status: string;
    createdAt: string | Date;
    /** What the courier reported, oldest first. */
    events: { status: string; occurredAt: string | Date }[];
  }[];
  refunds: { id: string; amount: number; status: string; reason: string | null; returnId: string | null; createdAt: string | Date }[];
  returns: { id: string; status: string; lines: { orderLineId: string; quantity: number }[] }[];
}

type Total = { type: string; amount: number; display_text?: string; lines?: { display_text: string; amount: number }[] };
type LineRef = { id: string; quantity: number };

export interface UcpOrder {
  ucp: { version: string; capabilities: Record<string, { version: string }[]> };
  id: string;
  label: string;
  checkout_id: string;
  permalink_url: string;
  currency: string;
  line_items: {
    id: string;
    item: { id: string; title: string; price: number };
    quantity: { original: number; total: number; fulfilled: number };
    totals: Total[];
    status: "processing" | "partial" | "fulfilled" | "removed";
  }[];
  fulfillment: {
    expectations: { id: string; line_items: LineRef[]; method_type: string; destination: Record<string, string>; fulfillable_on?: string }[];
    events: { id: string; occurred_at: string; type: string; line_items: LineRef[]; tracking_number?: string; tracking_url?: string; carrier?: string; description?: string }[];
  };
  adjustments: { id: string; type: string; occurred_at: string; status: "pending" | "completed" | "failed"; line_items?: LineRef[]; totals?: Total[]; description?: string }[];
  totals: Total[];
}

/** The order's money as the session showed it (./checkout-order-view.ts): GST inside the subtotal, as lines under the total. */
export function orderTotals(o: Pick<OrderSnapshot, "subtotal" | "discount" | "discountCode" | "shipping" | "tax" | "total">): Total[] {
  const totals: Total[] = [{ type: "subtotal", amount: o.subtotal, display_text: "Subtotal (GST included)" }];
  if (o.discount > 0) totals.push({ type: "discount", amount: -o.discount, display_text: `Discount ${o.discountCode ?? ""}`.trim() });
  totals.push({ type: "fulfillment", amount: o.shipping, display_text: "Shipping" });
  totals.push({ type: "total", amount: o.total, display_text: "Total", lines: [{ display_text: "Excl. GST", amount: o.total - o.tax }, { display_text: "GST", amount: o.tax }] });
  return totals;
}

/** A courier's shipment status as a fulfillment event's type (the specification's common values); none for a cancelled booking. */
const EVENT_TYPE: Record<string, string> = {
  pending: "shipped",
  in_transit: "in_transit",
  delivered: "delivered",
  rto_initiated: "undeliverable",
  rto_delivered: "returned_to_sender",
};

const ADJUSTMENT_STATUS: Record<string, "pending" | "completed" | "failed"> = { pending: "pending", processed: "completed", failed: "failed" };

/** Returns whose goods came back: they reduce what is still bought. */
const RETURNED = new Set(["received", "refunded"]);

const iso = (t: string | Date) => new Date(t).toISOString();
const titleOf = (l: OrderSnapshot["lines"][number]) => (l.variantTitle === "Default" ? l.productTitle : `${l.productTitle} (${l.variantTitle})`);

/** The buyer's address in UCP's postal address fields. */
function destinationOf(a: Record<string, string>): Record<string, string> {
  const [first, ...rest] = (a["name"] ?? "").trim().split(/\s+/);
  const out: Record<string, string> = {
    ...(first ? { first_name: first } : {}),
    ...(rest.length ? { last_name: rest.join(" ") } : {}),
    street_address: a["line1"] ?? "",
    ...(a["line2"] ? { extended_address: a["line2"] } : {}),
    address_locality: a["city"] ?? "",
    address_region: a["state"] ?? "",
    postal_code: a["postalCode"] ?? "",
    address_country: a["country"] ?? "IN",
  };
  if (a["phone"]) out["phone_number"] = a["phone"];
  return out;
}

function lineStatus(total: number, fulfilled: number): UcpOrder["line_items"][number]["status"] {
  if (total === 0) return "removed";
  if (fulfilled >= total) return "fulfilled";
  return fulfilled > 0 ? "partial" : "processing";
}

/** The entity of `order`, placed by checkout session `checkoutId`, whose buyer's page is `permalinkUrl`. */
export function orderEntity(order: OrderSnapshot, checkoutId: string, permalinkUrl: string): UcpOrder {
  const lineId = new Map(order.lines.map((l, i) => [l.id, `li_${i + 1}`]));
  const refs = (lines: readonly { orderLineId: string; quantity: number }[], sign = 1): LineRef[] =>
    lines.filter((l) => l.quantity > 0 && lineId.has(l.orderLineId)).map((l) => ({ id: lineId.get(l.orderLineId)!, quantity: sign * l.quantity }));
  const parcelLines = new Map(order.parcels.map((p) => [p.id, p.lines]));
  const cancelled = order.status === "cancelled";

  const shipped = new Map<string, number>();
  const returned = new Map<string, number>();
  const add = (into: Map<string, number>, lines: readonly { orderLineId: string; quantity: number }[]) => {
    for (const l of lines) into.set(l.orderLineId, (into.get(l.orderLineId) ?? 0) + l.quantity);
  };
  const live = order.shipments.filter((s) => s.status !== "cancelled");
  for (const s of live) add(shipped, parcelLines.get(s.parcelId) ?? []);
  for (const r of order.returns) if (RETURNED.has(r.status)) add(returned, r.lines);

  const lineItems = order.lines.map((l) => {
    const total = cancelled ? 0 : Math.max(0, l.quantity - (returned.get(l.id) ?? 0));
    const fulfilled = Math.min(total, shipped.get(l.id) ?? 0);
    const amount = l.unitPrice * l.quantity;
    return {
      id: lineId.get(l.id)!,
      item: { id: l.variantId ?? l.id, title: titleOf(l), price: l.unitPrice },
      quantity: { original: l.quantity, total, fulfilled },
      totals: [
        { type: "subtotal", amount },
        { type: "total", amount },
      ],
      status: lineStatus(total, fulfilled),
    };
  });

  const destination = destinationOf(order.shippingAddress);
  const expectations = cancelled
    ? []
    : order.parcels
        .map((p) => ({ id: p.id, line_items: refs(p.lines), method_type: "shipping", destination, fulfillable_on: "now" }))
        .filter((e) => e.line_items.length > 0);

  const events: UcpOrder["fulfillment"]["events"] = [];
  for (const s of [...live].sort((a, b) => iso(a.createdAt).localeCompare(iso(b.createdAt)))) {
    const log = s.events.length > 0 ? s.events : [{ status: "pending", occurredAt: s.createdAt }];
    const seen = new Set<string>();
    for (const e of log) {
      const type = EVENT_TYPE[e.status];
      if (!type || seen.has(type)) continue;
      seen.add(type);
      events.push({
        id: `${s.id}:${type}`,
        occurred_at: iso(e.occurredAt),
        type,
        line_items: refs(parcelLines.get(s.parcelId) ?? []),
        tracking_number: s.awb,
        ...(s.trackingUrl ? { tracking_url: s.trackingUrl } : {}),
        ...(s.courierName ? { carrier: s.courierName } : {}),
      });
    }
  }

  const returnLines = new Map(order.returns.map((r) => [r.id, r.lines]));
  const adjustments: UcpOrder["adjustments"] = order.refunds.map((r) => {
    const lines = r.returnId ? refs(returnLines.get(r.returnId) ?? [], -1) : [];
    return {
      id: r.id,
      type: "refund",
      occurred_at: iso(r.createdAt),
      status: ADJUSTMENT_STATUS[r.status] ?? "pending",
      ...(lines.length ? { line_items: lines } : {}),
      totals: [{ type: "total", amount: -r.amount }],
      ...(r.reason ? { description: r.reason } : {}),
    };
  });
  if (cancelled) {
    adjustments.push({
      id: `${order.id}:cancellation`,
      type: "cancellation",
      occurred_at: iso(order.cancelledAt ?? new Date()),
      status: "completed",
      line_items: order.lines.filter((l) => l.quantity > 0).map((l) => ({ id: lineId.get(l.id)!, quantity: -l.quantity })),
      description: "The order was cancelled.",
    });
  }

  return {
    ucp: { version: UCP_VERSION, capabilities: { "dev.ucp.shopping.order": [{ version: UCP_VERSION }] } },
    id: order.id,
    label: `#${order.number}`,
    checkout_id: checkoutId,
    permalink_url: permalinkUrl,
    currency: order.currency,
    line_items: lineItems,
    fulfillment: { expectations, events },
    adjustments,
    totals: orderTotals(order),
  };
}
