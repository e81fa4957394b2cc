/**
 * Razorpay's entities as its API documents them (the fields we read; others pass through unread), and how
 * they map onto the port: payment statuses, webhook events, the checkout's signed confirmation.
 */
import { z } from "zod";
import { openSignedWebhook, verifyHmacSha256Hex } from "../core/crypto";
import type { ClientConfirmation, GatewayPayment, PaymentStatus, RefundEvent, WebhookEvent } from "./gateway";

// Only the fields we read are required: a webhook must never be dropped because Razorpay left out or
// added a field we do not use.

/** Razorpay's notes: an object of key-value pairs, or `[]` when there are none. */
const notes = z.union([z.record(z.string(), z.unknown()), z.array(z.unknown())]).optional();
export type RazorpayNotes = z.infer<typeof notes>;

export const razorpayOrder = z.object({
  id: z.string(),
  entity: z.literal("order"),
  amount: z.number().int(),
  amount_paid: z.number().int().optional(),
  amount_due: z.number().int().optional(),
  currency: z.string(),
  receipt: z.string().nullable(),
  status: z.enum(["created", "attempted", "paid"]),
  attempts: z.number().int().optional(),
  notes,
  created_at: z.number().int().optional(),
});
export type RazorpayOrder = z.infer<typeof razorpayOrder>;

export const razorpayPayment = z.object({
  id: z.string(),
  entity: z.literal("payment"),
  amount: z.number().int(),
  currency: z.string(),
  status: z.enum(["created", "authorized", "captured", "refunded", "failed"]),
  order_id: z.string().nullable(),
  method: z.string().nullish(),
  amount_refunded: z.number().int().optional(),
  refund_status: z.enum(["partial", "full"]).nullish(),
  captured: z.boolean().optional(),
  email: z.string().nullish(),
  contact: z.string().nullish(),
  error_code: z.string().nullish(),
  error_description: z.string().nullish(),
  notes,
  created_at: z.number().int().optional(),
});
export type RazorpayPayment = z.infer<typeof razorpayPayment>;

export const razorpayRefund = z.object({
  id: z.string(),
  entity: z.literal("refund"),
  amount: z.number().int(),
  currency: z.string(),
  payment_id: z.string(),
  receipt: z.string().nullish(),
  status: z.enum(["pending", "processed", "failed"]),
  speed_requested: z.string().optional(),
  notes,
  created_at: z.number().int().optional(),
});
export type RazorpayRefund = z.infer<typeof razorpayRefund>;

export function collectionOf<T extends z.ZodType>(item: T) {
  return z.object({ entity: z.literal("collection"), count: z.number().int(), items: z.array(item) });
}

/** A payment's status on the port: a fully refunded payment is `refunded` even if Razorpay still says captured. */
export function portStatusOf(p: RazorpayPayment): PaymentStatus {
  if (p.status === "refunded" || p.refund_status === "full") return "refunded";
  if (p.status === "created") return "pending";
  return p.status;
}

// The payment that decides an order's state: money taken beats money held beats a try under way beats failures.
const RANK: Record<PaymentStatus, number> = { refunded: 5, captured: 4, authorized: 3, pending: 2, failed: 1, created: 0 };

/** What Razorpay holds for an order: its deciding payment, or `created` when nobody has tried to pay. */
export function paymentOfOrder(order: RazorpayOrder, payments: RazorpayPayment[]): GatewayPayment {
  let best: RazorpayPayment | undefined;
  for (const p of payments) if (!best || RANK[portStatusOf(p)] > RANK[portStatusOf(best)]) best = p;
  if (!best) return { status: "created", amount: order.amount, currency: order.currency };
  return { status: portStatusOf(best), amount: best.amount, currency: best.currency, providerPaymentId: best.id };
}

const webhookBody = z.object({
  entity: z.literal("event"),
  event: z.string(),
  payload: z.object({
    payment: z.object({ entity: razorpayPayment }).optional(),
    order: z.object({ entity: razorpayOrder }).optional(),
    refund: z.object({ entity: razorpayRefund }).optional(),
  }),
});

/** The payment events we act on and the attempt status each one means. */
export const RAZORPAY_EVENT_STATUS = {
  "payment.authorized": "authorized",
  "payment.captured": "captured",
  "payment.failed": "failed",
  "order.paid": "captured",
} as const satisfies Record<string, PaymentStatus>;

/** The refund events we act on and what each says of the refund. Every other event is acknowledged and ignored. */
export const RAZORPAY_REFUND_EVENTS = {
  "refund.processed": "processed",
  "refund.failed": "failed",
} as const satisfies Record<string, RefundEvent["status"]>;

const isIn = <T extends object>(table: T, event: string): event is Extract<keyof T, string> => Object.hasOwn(table, event);

/** The key under which each Razorpay order and each refund this server creates name their store. */
export const STORE_NOTE = "store_id";

/**
 * The store the `store_id` note of an entity this server created names (a Razorpay order's or a refund's,
 * from their create calls), or null. Never a payment's: its notes come from the Hosted Checkout form, which
 * the shopper's browser posts and can change (decision 0022 §8).
 */
export function storeOfNote(notes: RazorpayNotes): string | null {
  return notes && !Array.isArray(notes) && typeof notes[STORE_NOTE] === "string" ? notes[STORE_NOTE] : null;
}

/**
 * Checks `X-Razorpay-Signature` (hex HMAC-SHA256 of the raw body with the webhook secret) before reading
 * anything. The dedupe key is `X-Razorpay-Event-Id`, the same on every retry of one event; without it,
 * the body's digest.
 */
export async function verifyRazorpayWebhook(rawBody: string, headers: Headers, secret: string): Promise<WebhookEvent | null> {
  const opened = await openSignedWebhook(rawBody, headers.get("x-razorpay-signature"), headers.get("x-razorpay-event-id"), secret);
  if (!opened) return null;
  const { eventId } = opened;
  const parsed = webhookBody.safeParse(opened.json);
  if (!parsed.success) return { kind: "ignored", eventId, event: "unknown", reason: "the body is not a Razorpay event" };
  const { event, payload } = parsed.data;
  const payment = payload.payment?.entity;
  const order = payload.order?.entity;
  const providerRef = order?.id ?? payment?.order_id;
  const known = isIn(RAZORPAY_EVENT_STATUS, event) || isIn(RAZORPAY_REFUND_EVENTS, event);
  if (!known) return { kind: "ignored", eventId, event, reason: "not an event we act on" };
  if (!payment || !providerRef) return { kind: "ignored", eventId, event, reason: "no payment of an order in the payload" };
  if (isIn(RAZORPAY_REFUND_EVENTS, event)) {
    const refund = payload.refund?.entity;
    if (!refund) return { kind: "ignored", eventId, event, reason: "no refund in the payload" };
    return {
      kind: "refund",
      eventId,
      event,
      providerRef,
      refundId: refund.id,
      status: RAZORPAY_REFUND_EVENTS[event],
      amount: refund.amount,
      currency: refund.currency,
      providerPaymentId: payment.id,
      payment: { amount: payment.amount, currency: payment.currency },
      storeId: storeOfNote(refund.notes),
    };
  }
  const status = RAZORPAY_EVENT_STATUS[event as keyof typeof RAZORPAY_EVENT_STATUS];
  return {
    kind: "payment",
    eventId,
    event,
    providerRef,
    status,
    amount: payment.amount,
    currency: payment.currency,
    providerPaymentId: payment.id,
    // order.paid carries the Razorpay order; payment.* events carry the payment alone (null: the attempt decides).
    storeId: order ? storeOfNote(order.notes) : null,
  };
}

const checkoutResponse = z.object({
  razorpay_order_id: z.string().min(1).max(100),
  razorpay_payment_id: z.string().min(1).max(100),
  razorpay_signature: z.string().min(1).max(200),
});

/**
 * Razorpay Checkout's success fields (JSON from the handler, or the form it POSTs to callback_url):
 * `razorpay_signature` = hex HMAC-SHA256 of `<order_id>|<payment_id>` with the key secret.
 */
export async function verifyRazorpayConfirmation(payload: unknown, keySecret: string): Promise<ClientConfirmation | null> {
  const parsed = checkoutResponse.safeParse(payload);
  if (!parsed.success) return null;
  const { razorpay_order_id: orderId, razorpay_payment_id: paymentId, razorpay_signature: signature } = parsed.data;
  if (!(await verifyHmacSha256Hex(keySecret, `${orderId}|${paymentId}`, signature))) return null;
  return { providerRef: orderId, providerPaymentId: paymentId, status: "authorized" };
}
