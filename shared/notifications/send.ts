import type { Database } from "../db/database";
import { isUuid } from "../db/ids";
import { CURRENT_STORE } from "../db/openings";
import { mapPlan, plan, together, type Plan } from "../db/plan";
import { notification } from "../db/schema";
import type { RowOfStatement } from "../db/statement";
import { sql, type Q } from "../db/steps";
import { sendStoreUnit } from "../db/unit";
import type { RoutedEvent } from "../events/routes";
import type { Logger } from "../core/log";
import { orderEmailKey, storefrontBasePlan } from "../mail/links";
import { mediaPath } from "../media/limits";
import { orderPath } from "../orders/access";
import { invoicePath } from "../orders/buyer-invoices";
import type { MailConfig } from "../mail/select";
import { CONSENT_TEMPLATE, sendConsentRequest } from "./consent";
import { deliver, RetryLater, type NotificationDeps } from "./deliver";
import { orderToNotify, storeOrderLink } from "./statements";
import { themeImageSchema } from "../storefront/theme";
import { LOGO_BOX, renderNotification, TEMPLATE_NAMES, type EmailLogo, type NotificationFacts } from "./templates";

/**
 * The `{notifications}-send` consumer: one message to the shopper per event and template, in two round
 * trips with the provider call between them, outside any transaction:
 *
 * 1. a store unit reads the order and the `notification` row (unique per event and template); a row
 *    already `sent` or `failed` means a duplicate delivery: nothing more happens. The same unit stores the
 *    order link's key hash, so the link works by the time the message arrives;
 * 2. the mailer sends with the key `<eventId>:<template>`, so a retry after a lost answer is one message;
 * 3. a store unit records the try and its outcome on the row (unless another delivery finished it). A
 *    retryable failure is recorded and thrown (the queue retries it later, then dead-letters it); a refusal
 *    (bad address) is recorded as `failed` and not retried (2 and 3: ./deliver.ts).
 *
 * The marketing consent confirmation (`customer.consent_requested`) names a customer, not an order: it
 * takes the same path from ./consent.ts.
 */
export { RetryLater };

type OrderRow = RowOfStatement<typeof orderToNotify>;

/**
 * The store's published logo as a message shows it, served from the store's own domain (`base`, the order
 * link's origin) as the storefront serves it: the JPEG (every mail client reads JPEG, not all read WebP), at
 * the first width made that stays sharp at twice LOGO_BOX's width, else the widest.
 */
function emailLogo(base: string, stored: unknown): EmailLogo | undefined {
  const parsed = themeImageSchema.safeParse(stored);
  if (!parsed.success) return undefined;
  const { hash, width, height, widths } = parsed.data;
  const served = widths.find((w) => w >= 2 * LOGO_BOX.width) ?? widths[widths.length - 1]!;
  return { url: `${base}${mediaPath(hash, served, "jpg")}`, width, height };
}

/** The event's notification row and its order, in one unit; with a link key, the order's link is stored too. */
function readPlan(q: Q, message: RoutedEvent, template: string, orderId: string, linkHash: string | null): Plan<{ done: boolean; order: OrderRow | undefined; base: string | null }> {
  const mine = sql`store_id = ${CURRENT_STORE} and event_id = ${message.eventId} and template = ${template}`;
  const read = plan(
    [
      q.select({ status: notification.status }).from(notification).where(mine),
      orderToNotify(q, orderId, String(message.payload["returnId"] ?? "")),
    ] as const,
    ([[row], [order]]) => ({ done: row !== undefined && row.status !== "sending", order }),
  );
  if (linkHash === null) return mapPlan(read, (r) => ({ ...r, base: null }));
  const link = plan(
    [
      storeOrderLink(q, orderId, linkHash, mine),
    ] as const,
    () => undefined,
  );
  return mapPlan(together({ read, base: storefrontBasePlan(q), link }), (o) => ({ ...o.read, base: o.base }));
}

export async function sendNotification(message: RoutedEvent, deps: NotificationDeps): Promise<"sent" | "duplicate" | "skipped" | "failed"> {
  const template = message.route.replace(/^notification:/, "");
  if (template === CONSENT_TEMPLATE) return sendConsentRequest(message, deps);
  const orderId = message.payload["orderId"];
  if (!isUuid(orderId) || !isUuid(message.eventId)) {
    deps.log.warn("notification.skipped", { eventId: message.eventId, template, reason: "no order in the event" });
    return "skipped";
  }
  const skipped = () => {
    deps.log.warn("notification.skipped", { eventId: message.eventId, template, reason: "no such order or template" });
    return "skipped" as const;
  };
  if (!TEMPLATE_NAMES.includes(template)) return skipped();
  const link = deps.linkSecret ? await orderEmailKey(deps.linkSecret, orderId) : null;
  const read = await sendStoreUnit(deps.db, message.storeId, (q) => readPlan(q, message, template, orderId, link?.hash ?? null), { readOnly: link === null });
  if (read.done) return "duplicate";
  const o = read.order;
  if (!o) return skipped();
  const facts: NotificationFacts = {
    storeName: o.store_name,
    orderNumber: o.number,
    email: o.email,
    total: o.total,
    currency: o.currency,
    amount: typeof message.payload["amount"] === "number" ? message.payload["amount"] : undefined,
    returnNumber: o.return_number ?? undefined,
    expiresAt: typeof message.payload["expiresAt"] === "string" ? message.payload["expiresAt"] : undefined,
    reason: typeof message.payload["reason"] === "string" ? message.payload["reason"] : undefined,
    order: {
      status: o.status,
      paymentStatus: o.payment_status,
      fulfillmentStatus: o.fulfillment_status,
      subtotal: o.subtotal,
      discount: o.discount,
      shipping: o.shipping,
      tax: o.tax,
      address: o.shipping_address,
      lines: o.lines,
      parcels: o.parcels,
    },
  };
  if (link && read.base) {
    const base = read.base;
    facts.logo = emailLogo(base, o.logo);
    facts.orderUrl = `${base}${orderPath(orderId, link.key)}`;
    facts.invoiceUrl = (invoiceId) => `${base}${invoicePath(orderId, invoiceId, link.key)}`;
  }
  const rendered = renderNotification(template, facts)!;
  return deliver(message, deps, template, { email: o.email, storeName: o.store_name, sender: "orders" }, rendered);
}
