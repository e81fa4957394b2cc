import { APP_ROUTE, goesToAppsQueue } from "../apps/events";
import { ENROLLING_KINDS } from "../marketing/enrol";
import { mayRestock } from "../restock/alerts";
import type { WorkQueue } from "../events/routes";
import { goesToAgents, UCP_ORDER_ROUTE } from "../ucp/order-webhooks";
import { CREDIT_NOTE_ROUTE } from "./documents-consumer";

/**
 * Which routes an event kind takes (SPEC "Events"; docs/events.md). A route is a queue and a name; the
 * relay sends the event once per route, with the event id as the consumer's dedupe key.
 *
 * Notification templates go to the shopper of the order named in the payload (the consent confirmation
 * to the customer named). `order.rto` has none: the merchant's RTO task was written with the change
 * (decision 0010) and the shopper gets no message.
 * `return.*` events each carry their returnId and are separate events, so each return step of each
 * return gets its own `return_*` email.
 */
export const NOTIFICATION_TEMPLATES: Readonly<Record<string, string>> = {
  "order.placed": "order_confirmation",
  "order.paid": "payment_received",
  "order.fulfilled": "order_shipped",
  "order.delivered": "order_delivered",
  "order.cancelled": "order_cancelled",
  "order.expired": "order_expired",
  "order.refunded": "order_refunded",
  "order.payment_reminder": "payment_reminder",
  "order.balance_requested": "balance_requested",
  "order.balance_reminder": "balance_reminder",
  "return.requested": "return_requested",
  "return.approved": "return_approved",
  "return.rejected": "return_rejected",
  "return.received": "return_received",
  "return.refunded": "return_refunded",
  // Not an order's: the double opt-in's confirmation email to the customer named (shared/notifications/consent.ts).
  "customer.consent_requested": "marketing_consent",
};

export interface Route {
  queue: WorkQueue;
  route: string;
}

/** Routes chosen by a matcher (a prefix or a part's own list of kinds), listed here in one place. */
export interface RouteRule {
  queue: WorkQueue;
  route: string;
  matches(kind: string, payload: Record<string, unknown>): boolean;
}

const RULES: readonly RouteRule[] = [
  { queue: "domains", route: "domain", matches: (kind) => kind.startsWith("domain.") },
  { queue: "appEvents", route: APP_ROUTE, matches: (kind) => goesToAppsQueue(kind) },
  // An agent's order updates (shared/ucp/order-webhooks.ts): on the apps' queues, as a route of their own.
  { queue: "appEvents", route: UCP_ORDER_ROUTE, matches: goesToAgents },
  { queue: "marketing", route: "marketing", matches: (kind) => Object.hasOwn(ENROLLING_KINDS, kind) },
  { queue: "restock", route: "restock", matches: mayRestock },
  // A processed refund's credit notes (shared/orders/credit-notes.ts).
  { queue: "documents", route: CREDIT_NOTE_ROUTE, matches: (kind) => kind === "order.refunded" },
];

export function routesOf(kind: string, payload: Record<string, unknown>): Route[] {
  const routes: Route[] = [];
  const template = NOTIFICATION_TEMPLATES[kind];
  if (template) routes.push({ queue: "notifications", route: `notification:${template}` });
  for (const rule of RULES) if (rule.matches(kind, payload)) routes.push({ queue: rule.queue, route: rule.route });
  return routes;
}
