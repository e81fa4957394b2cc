import { and, asc, eq, sql } from "drizzle-orm";
import { CURRENT_STORE } from "../db/openings";
import { plan, type Plan } from "../db/plan";
import { orderLine, shopOrder, ucpCheckoutSession, type UcpSessionStatus } from "../db/schema";
import type { Q } from "../db/steps";
import { CAPABILITIES, shippingMethod, type StoreRead, type SessionRow, type UcpCheckout, type UcpMessage } from "./checkout-session-view";
import { UCP_VERSION } from "./profile";

/**
 * A session that placed its order (./checkout-complete.ts), as the agent reads it from then on: the lines and
 * money the order was placed with (never repriced), and the status the order's payment gives it. The order is
 * placed unpaid (payment is the buyer's, on the store's own page: decision 0042), so the session answers
 * `requires_escalation` (the buyer must pay; `continue_url` is the order's page, where "Pay now" hands them to
 * the store's gateway) until money is in, then `completed` with the order; an order that lapsed unpaid or was
 * cancelled before any money came ends the session `canceled`.
 */

export interface PlacedRead {
  id: string;
  number: number;
  status: string;
  paymentStatus: string;
  currency: string;
  subtotal: number;
  discount: number;
  discountCode: string | null;
  shipping: number;
  tax: number;
  total: number;
  lines: { variantId: string | null; title: string; unitPrice: number; quantity: number }[];
}

/** Payment states in which money came in: the session is completed (and stays so through refunds). */
const MONEY_CAME = new Set(["authorized", "partially_paid", "paid", "partially_refunded", "refunded"]);

/** The order a session (of this store, by this agent when one is named) placed, with its lines; undefined before. */
export function placedOrderPlan(q: Q, sessionId: string, agent: string | null): Plan<PlacedRead | undefined> {
  const ofSession = and(
    eq(ucpCheckoutSession.storeId, CURRENT_STORE),
    eq(ucpCheckoutSession.id, sessionId),
    agent === null ? undefined : eq(ucpCheckoutSession.agentProfile, agent),
  );
  return plan(
    [
      q
        .select({
          id: shopOrder.id,
          number: shopOrder.number,
          status: shopOrder.status,
          paymentStatus: shopOrder.paymentStatus,
          currency: shopOrder.currency,
          subtotal: shopOrder.subtotal,
          discount: shopOrder.discount,
          discountCode: shopOrder.discountCode,
          shipping: shopOrder.shipping,
          tax: shopOrder.tax,
          total: shopOrder.total,
        })
        .from(ucpCheckoutSession)
        .innerJoin(shopOrder, and(eq(shopOrder.storeId, ucpCheckoutSession.storeId), eq(shopOrder.id, ucpCheckoutSession.orderId)))
        .where(ofSession),
      q
        .select({
          variantId: orderLine.variantId,
          title: sql<string>`case when ${orderLine.variantTitle} = 'Default' then ${orderLine.productTitle} else ${orderLine.productTitle} || ' (' || ${orderLine.variantTitle} || ')' end`,
          unitPrice: orderLine.unitPrice,
          quantity: orderLine.quantity,
        })
        .from(ucpCheckoutSession)
        .innerJoin(orderLine, and(eq(orderLine.storeId, ucpCheckoutSession.storeId), eq(orderLine.orderId, ucpCheckoutSession.orderId)))
        .where(ofSession)
        .orderBy(asc(orderLine.position)),
    ] as const,
    ([[order], lines]) => (order ? { ...order, lines: lines.map((l) => ({ ...l, unitPrice: Number(l.unitPrice) })) } : undefined),
  );
}

/** What the order's state makes of its session. */
export function placedStatus(order: Pick<PlacedRead, "status" | "paymentStatus">): UcpSessionStatus {
  if (MONEY_CAME.has(order.paymentStatus)) return "completed";
  if (order.status === "cancelled" || order.status === "expired") return "canceled";
  return "requires_escalation";
}

const MESSAGES: Partial<Record<UcpSessionStatus, UcpMessage>> = {
  requires_escalation: {
    type: "error",
    code: "payment_required",
    severity: "requires_buyer_input",
    content: "The order is placed and its items are held for the buyer: they pay on the store's own payment page (continue_url).",
  },
  canceled: { type: "info", code: "order_not_paid", content: "The order was not paid in time (or was cancelled before payment), so its items were released." },
};

/** The session as its placed order stands: the order's lines and money, its status, and the order once it is completed. */
export function placedView(session: SessionRow, shop: StoreRead, order: PlacedRead): { checkout: UcpCheckout; orderId: string } {
  const status = placedStatus(order);
  const lineItems = order.lines.map((l, i) => {
    const amount = l.unitPrice * l.quantity;
    return { id: `li_${i + 1}`, item: { id: l.variantId ?? "", title: l.title, price: l.unitPrice }, quantity: l.quantity, totals: [{ type: "subtotal", amount }, { type: "total", amount }] };
  });
  const lineIds = lineItems.map((l) => l.id);
  const totals: UcpCheckout["totals"] = [{ type: "subtotal", amount: order.subtotal, display_text: "Subtotal (GST included)" }];
  if (order.discount > 0) totals.push({ type: "discount", amount: -order.discount, display_text: `Discount ${order.discountCode ?? ""}`.trim() });
  totals.push({ type: "fulfillment", amount: order.shipping, display_text: "Shipping" });
  totals.push({ type: "total", amount: order.total, display_text: "Total", lines: [{ display_text: "Excl. GST", amount: order.total - order.tax }, { display_text: "GST", amount: order.tax }] });
  const message = MESSAGES[status];
  const checkout: UcpCheckout = {
    ucp: { version: UCP_VERSION, capabilities: CAPABILITIES, payment_handlers: {} },
    id: session.id,
    status,
    currency: order.currency,
    line_items: lineItems,
    ...(session.buyer ? { buyer: session.buyer } : {}),
    fulfillment: shippingMethod(lineIds, session.destination, order.shipping),
    discounts: { codes: session.discountCodes, applied: order.discount > 0 && order.discountCode ? [{ code: order.discountCode, title: `Discount code ${order.discountCode}`, amount: order.discount, method: "across" }] : [] },
    totals,
    messages: [...(message ? [message] : []), { type: "info", content: "Prices include GST." }],
    links: shop.links,
    expires_at: session.expiresAt.toISOString(),
    ...(status === "completed" ? { order: { id: order.id, label: `#${order.number}` } } : {}),
  };
  return { checkout, orderId: order.id };
}
