import type { SQL } from "drizzle-orm";
import { plan, type Plan } from "../db/plan";
import type { Q } from "../db/steps";
import { AppError } from "../core/errors";
import { orderViewStatement, type OrderView } from "./order-view";
import { orderDetail, type AttemptView, type OrderEventView, type OrderLineView, type RefundRowView, type ReturnView, type ShipmentView, type TaskView } from "./statements/order-view";

export type { AttemptReview, AttemptView, OrderEventView, OrderLineView, RefundRowView, ReturnView, ShipmentView, TaskView } from "./statements/order-view";

/** What orders.get answers: the order view plus its lines, attempts, shipments and timeline (issue 11 "Shapes"). */
export interface OrderDetail extends OrderView {
  phone: string | null;
  shippingAddress: Record<string, string>;
  paymentMethod: string;
  discountCode: string | null;
  placedAt: Date;
  expiresAt: Date | null;
  lines: OrderLineView[];
  attempts: AttemptView[];
  shipments: ShipmentView[];
  refunds: RefundRowView[];
  returns: ReturnView[];
  tasks: TaskView[];
  events: OrderEventView[];
  /** The AI agent platform whose UCP checkout session placed the order (its profile URL and host); null for the storefront's own checkout. */
  agent: { profileUrl: string; host: string } | null;
}

export const orderNotFound = () => new AppError("NOT_FOUND", "Order not found in this store.");

/**
 * The order's own fields, lines (by position), attempts (newest first) and the outbox events that name it
 * in `payload.orderId` (oldest first; events of one transaction share its time and are ordered by kind),
 * read by `order_id`, which a trigger fills from the payload (migration 0026; an expression on the payload
 * cannot use an index under RLS).
 */
export function orderDetailPlan(q: Q, store: SQL, orderId: string): Plan<OrderDetail> {
  const detail = orderDetail(q, store, orderId);
  return plan([orderViewStatement(q, store, orderId), detail] as const, ([[viewRow], [row]]) => {
    const view = viewRow?.order;
    if (!view || !row) throw orderNotFound();
    return {
      ...view,
      phone: row.phone,
      shippingAddress: row.shipping_address,
      paymentMethod: row.payment_method,
      discountCode: row.discount_code,
      placedAt: row.placed_at,
      expiresAt: row.expires_at,
      lines: row.lines,
      attempts: row.attempts.map((a) => ({ ...a, createdAt: new Date(a.createdAt) })),
      shipments: row.shipments,
      refunds: row.refunds,
      returns: row.returns,
      tasks: row.tasks,
      events: row.events.map((e) => ({ ...e, createdAt: new Date(e.createdAt) })),
      agent: row.agent_profile ? { profileUrl: row.agent_profile, host: row.agent_host ?? row.agent_profile } : null,
    };
  });
}
