/**
 * The memory behind the local Razorpay server (razorpay-server.ts): orders, payments and refunds as
 * Razorpay's API documents them, payments a test makes happen, and the webhooks and checkout
 * confirmations Razorpay would sign for them.
 */
import { hmacSha256Hex } from "#shared/core/crypto";
import type { RazorpayOrder, RazorpayPayment, RazorpayRefund } from "#shared/payments/razorpay-entities";

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** Razorpay-shaped ids: a prefix and 14 letters or digits. */
export function razorpayId(prefix: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(14));
  return `${prefix}_${Array.from(bytes, (b) => ALPHABET[b % ALPHABET.length]).join("")}`;
}

export interface SignedWebhook {
  event: string;
  eventId: string;
  body: string;
  headers: Record<string, string>;
}

export type PaymentOutcome = "authorized" | "captured" | "failed";

/** What the shopper's Checkout sends besides the outcome. */
export interface PayOptions {
  email?: string;
  phone?: string;
  /** The Hosted Checkout form the adapter answered: its `notes[…]` fields become the payment's notes, as Checkout does. */
  form?: Record<string, string>;
  /**
   * A payment for less than the order (an order that allows partial payments) or in another currency
   * (a misrouted event): what a payment check must refuse to count. Default: the order's.
   */
  amount?: number;
  currency?: string;
}

/** The notes a Checkout form carries (`notes[key]` fields), or Razorpay's `[]` for none. */
function notesOfForm(form: Record<string, string> | undefined): Record<string, string> | never[] {
  const notes = Object.fromEntries(
    Object.entries(form ?? {}).flatMap(([name, value]) => {
      const key = /^notes\[(.+)\]$/.exec(name)?.[1];
      return key ? [[key, value]] : [];
    }),
  );
  return Object.keys(notes).length > 0 ? notes : [];
}

export interface SimulatedPayment {
  payment: RazorpayPayment;
  /** The fields Checkout hands back on success (absent for a failed payment). */
  confirmation?: { razorpay_order_id: string; razorpay_payment_id: string; razorpay_signature: string };
  /** In the order Razorpay sends them. */
  webhooks: SignedWebhook[];
}

export class RazorpayState {
  readonly orders = new Map<string, RazorpayOrder>();
  readonly payments = new Map<string, RazorpayPayment>();
  readonly refunds = new Map<string, RazorpayRefund>();
  /** X-Refund-Idempotency key → the request body it first came with and the refund it made. */
  readonly refundKeys = new Map<string, { body: string; refundId: string }>();
  /** Refunds answer `pending` (Razorpay's normal speed) until settled with `settleRefund`; default processed at once. */
  refundsPending = false;

  constructor(
    private readonly secrets: { keySecret: string; webhookSecret: string; accountId: string },
    private readonly now: () => number,
  ) {}

  seconds(): number {
    return Math.floor(this.now() / 1000);
  }

  async webhook(event: string, entities: { payment?: RazorpayPayment; order?: RazorpayOrder; refund?: RazorpayRefund }): Promise<SignedWebhook> {
    const payload: Record<string, { entity: unknown }> = {};
    for (const [name, entity] of Object.entries(entities)) if (entity) payload[name] = { entity: structuredClone(entity) };
    const body = JSON.stringify({
      entity: "event",
      account_id: this.secrets.accountId,
      event,
      contains: Object.keys(payload),
      payload,
      created_at: this.seconds(),
    });
    const eventId = razorpayId("evt").slice(4);
    const headers = {
      "content-type": "application/json",
      "x-razorpay-signature": await hmacSha256Hex(this.secrets.webhookSecret, body),
      "x-razorpay-event-id": eventId,
    };
    return { event, eventId, body, headers };
  }

  /** A shopper pays on Checkout: the payment, what the browser brings back, and the webhooks. */
  async pay(orderId: string, outcome: PaymentOutcome, contact: PayOptions = {}): Promise<SimulatedPayment> {
    const order = this.orders.get(orderId);
    if (!order) throw new Error(`no order ${orderId}`);
    if (order.status === "paid") throw new Error(`order ${orderId} is already paid`);
    const failed = outcome === "failed";
    const payment: RazorpayPayment = {
      id: razorpayId("pay"),
      entity: "payment",
      amount: contact.amount ?? (order.amount_due ?? order.amount),
      currency: contact.currency ?? order.currency,
      status: failed ? "failed" : "authorized",
      order_id: order.id,
      method: "upi",
      amount_refunded: 0,
      refund_status: null,
      captured: false,
      email: contact.email ?? "void@razorpay.com",
      contact: contact.phone ?? "+919999999999",
      error_code: failed ? "BAD_REQUEST_ERROR" : null,
      error_description: failed ? "Payment was unsuccessful as the bank declined it." : null,
      notes: notesOfForm(contact.form),
      created_at: this.seconds(),
    };
    this.payments.set(payment.id, payment);
    order.attempts = (order.attempts ?? 0) + 1;
    order.status = "attempted";
    if (failed) return { payment, webhooks: [await this.webhook("payment.failed", { payment })] };
    const confirmation = {
      razorpay_order_id: order.id,
      razorpay_payment_id: payment.id,
      razorpay_signature: await hmacSha256Hex(this.secrets.keySecret, `${order.id}|${payment.id}`),
    };
    const webhooks = [await this.webhook("payment.authorized", { payment })];
    if (outcome === "captured") webhooks.push(...(await this.capture(payment.id)));
    return { payment, confirmation, webhooks };
  }

  /**
   * Captures an authorized payment (what automatic capture does at once): payment.captured, and order.paid
   * once the order's whole amount is paid (a partial payment leaves it `attempted`).
   */
  async capture(paymentId: string): Promise<SignedWebhook[]> {
    const payment = this.payments.get(paymentId);
    const order = payment?.order_id ? this.orders.get(payment.order_id) : undefined;
    if (!payment || !order || payment.status !== "authorized") throw new Error(`payment ${paymentId} is not authorized`);
    payment.status = "captured";
    payment.captured = true;
    order.amount_paid = (order.amount_paid ?? 0) + payment.amount;
    order.amount_due = Math.max(order.amount - order.amount_paid, 0);
    const captured = await this.webhook("payment.captured", { payment });
    if (order.amount_due > 0) return [captured];
    order.status = "paid";
    return [captured, await this.webhook("order.paid", { payment, order })];
  }

  /** Records a refund against a captured payment (processed, or pending while `refundsPending`); the caller has checked the amount. */
  refund(payment: RazorpayPayment, amount: number, speed: string, notes?: Record<string, string>): RazorpayRefund {
    const refund: RazorpayRefund = {
      id: razorpayId("rfnd"),
      entity: "refund",
      amount,
      currency: payment.currency,
      payment_id: payment.id,
      receipt: null,
      status: this.refundsPending ? "pending" : "processed",
      speed_requested: speed,
      notes: notes ?? [],
      created_at: this.seconds(),
    };
    this.refunds.set(refund.id, refund);
    payment.amount_refunded = (payment.amount_refunded ?? 0) + amount;
    const full = payment.amount_refunded >= payment.amount;
    payment.refund_status = full ? "full" : "partial";
    if (full) payment.status = "refunded";
    return refund;
  }

  /** The refund.processed (or refund.failed) webhook for a refund, as it is now. */
  async refundWebhook(refundId: string): Promise<SignedWebhook> {
    const refund = this.refunds.get(refundId);
    const payment = refund ? this.payments.get(refund.payment_id) : undefined;
    if (!refund || !payment) throw new Error(`no refund ${refundId}`);
    return this.webhook(refund.status === "failed" ? "refund.failed" : "refund.processed", { refund, payment });
  }

  /**
   * A pending refund ends: processed, or failed (Razorpay gives up, e.g. the customer's account is closed,
   * and the money stays with the merchant: the payment is refundable again). Its webhook.
   */
  async settleRefund(refundId: string, outcome: "processed" | "failed"): Promise<SignedWebhook> {
    const refund = this.refunds.get(refundId);
    const payment = refund ? this.payments.get(refund.payment_id) : undefined;
    if (!refund || !payment || refund.status !== "pending") throw new Error(`refund ${refundId} is not pending`);
    refund.status = outcome;
    if (outcome === "failed") {
      payment.amount_refunded = (payment.amount_refunded ?? 0) - refund.amount;
      payment.refund_status = payment.amount_refunded > 0 ? "partial" : null;
      payment.status = "captured";
    }
    return this.refundWebhook(refundId);
  }
}

/** A Request for a signed webhook, as Razorpay would POST it to `url`. */
export function webhookRequest(url: string, webhook: SignedWebhook): Request {
  return new Request(url, { method: "POST", headers: webhook.headers, body: webhook.body });
}
