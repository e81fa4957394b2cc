/**
 * The Razorpay adapter, written to Razorpay's public API: Orders (`POST /v1/orders`, one Razorpay order per
 * attempt), Hosted Checkout (a form POST to `/v1/checkout/embedded`), `GET /v1/orders/:id/payments`,
 * refunds (`POST /v1/payments/:id/refund` with `X-Refund-Idempotency`), signed webhooks and the checkout's
 * signed confirmation. See docs/payments.md.
 */
import { sha256Hex } from "#shared/core/tokens";
import {
  checkCreateInput,
  GatewayError,
  type CreatedPayment,
  type CreatePaymentInput,
  type GatewayPayment,
  type PaymentGateway,
  type RefundResult,
} from "./gateway";
import {
  collectionOf,
  paymentOfOrder,
  razorpayOrder,
  razorpayPayment,
  razorpayRefund,
  STORE_NOTE,
  verifyRazorpayConfirmation,
  verifyRazorpayWebhook,
  type RazorpayOrder,
} from "./razorpay-entities";
import { parseAnswer, razorpayRequest, type FetchLike, type RazorpayHttpConfig } from "./razorpay-http";

export const RAZORPAY_API = "https://api.razorpay.com";
/** Razorpay's receipt is at most 40 characters; the attempt's idempotency key is the receipt. */
export const RAZORPAY_RECEIPT_MAX = 40;

export interface RazorpayConfig {
  keyId: string;
  keySecret: string;
  baseUrl?: string;
  /** Hosted Checkout's form action; defaults to `<baseUrl>/v1/checkout/embedded`. */
  checkoutUrl?: string;
  fetch?: FetchLike;
  /** Per request; default 10 000. */
  timeoutMs?: number;
  /** The name Hosted Checkout shows. */
  merchantName?: string;
  /**
   * Kept as the `store_id` note of each Razorpay order and each refund this adapter creates, so that
   * order.paid and refund events of a shared account name their store. Not put on the Checkout form: a
   * payment's notes come from the shopper's browser, and nothing reads them.
   */
  storeId?: string;
}

const ORDER_ID = /^order_[A-Za-z0-9]{1,40}$/;
const PAYMENT_ID = /^pay_[A-Za-z0-9]{1,40}$/;
// X-Refund-Idempotency: at least 10 characters of letters, digits, hyphens and underscores.
const REFUND_KEY = /^[A-Za-z0-9_-]{10,64}$/;

function badRequest(field: string, message: string): GatewayError {
  return new GatewayError("razorpay", "bad_request", `${field}: ${message}`, { field });
}

/**
 * The form Hosted Checkout takes: Razorpay POSTs the signed result back to `callback_url`. It carries no
 * `notes[…]` fields: they would become the payment's notes, which the shopper can change, so the store of
 * a payment is never read from them (its Razorpay order's note, and the attempt, say it).
 */
export function hostedCheckoutFields(keyId: string, order: RazorpayOrder, input: CreatePaymentInput, merchantName?: string): Record<string, string> {
  const fields: Record<string, string> = {
    key_id: keyId,
    order_id: order.id,
    amount: String(order.amount),
    currency: order.currency,
    description: `Order ${input.orderNumber}`,
    "prefill[email]": input.customer.email,
    callback_url: input.returnUrl,
    cancel_url: input.returnUrl,
  };
  if (merchantName) fields.name = merchantName;
  if (input.customer.phone) fields["prefill[contact]"] = input.customer.phone;
  return fields;
}

export function razorpayGateway(config: RazorpayConfig): PaymentGateway {
  const baseUrl = config.baseUrl ?? RAZORPAY_API;
  const http: RazorpayHttpConfig = {
    keyId: config.keyId,
    keySecret: config.keySecret,
    baseUrl,
    fetch: config.fetch ?? ((input, init) => fetch(input, init)),
    timeoutMs: config.timeoutMs ?? 10_000,
  };
  const checkoutUrl = config.checkoutUrl ?? new URL("/v1/checkout/embedded", baseUrl).toString();

  // Razorpay's Orders API takes no idempotency key, so the receipt is the key: look for it before creating.
  async function orderWithReceipt(receipt: string): Promise<RazorpayOrder | undefined> {
    const query = new URLSearchParams({ receipt, count: "100" });
    const body = await razorpayRequest(http, "GET", `/v1/orders?${query}`);
    return parseAnswer(collectionOf(razorpayOrder), body, "order list").items.find((o) => o.receipt === receipt);
  }

  function created(order: RazorpayOrder, input: CreatePaymentInput): CreatedPayment {
    return { providerRef: order.id, redirect: { method: "POST", url: checkoutUrl, fields: hostedCheckoutFields(config.keyId, order, input, config.merchantName) } };
  }

  return {
    provider: "razorpay",

    async createPayment(input) {
      checkCreateInput("razorpay", input);
      const receipt = input.idempotencyKey;
      if (receipt.length > RAZORPAY_RECEIPT_MAX) throw badRequest("idempotencyKey", `longer than Razorpay's ${RAZORPAY_RECEIPT_MAX}-character receipt`);
      const existing = await orderWithReceipt(receipt);
      if (existing) {
        if (existing.amount !== input.amount || existing.currency !== input.currency) {
          throw badRequest("idempotencyKey", "already used for a different amount or currency");
        }
        return created(existing, input);
      }
      const body = await razorpayRequest(http, "POST", "/v1/orders", {
        body: {
          amount: input.amount,
          currency: input.currency,
          receipt,
          notes: {
            ...(config.storeId ? { [STORE_NOTE]: config.storeId } : {}),
            order_id: input.orderId,
            order_number: input.orderNumber,
            attempt: String(input.attempt),
          },
        },
      });
      return created(parseAnswer(razorpayOrder, body, "order"), input);
    },

    async getPayment(providerRef): Promise<GatewayPayment> {
      if (!ORDER_ID.test(providerRef)) throw badRequest("providerRef", "is not a Razorpay order id");
      const [order, payments] = await Promise.all([
        razorpayRequest(http, "GET", `/v1/orders/${providerRef}`),
        razorpayRequest(http, "GET", `/v1/orders/${providerRef}/payments`),
      ]);
      return paymentOfOrder(parseAnswer(razorpayOrder, order, "order"), parseAnswer(collectionOf(razorpayPayment), payments, "payment list").items);
    },

    verifyWebhook: verifyRazorpayWebhook,
    verifyClientConfirmation: verifyRazorpayConfirmation,

    async refund(providerPaymentId, amount, idempotencyKey): Promise<RefundResult> {
      if (!PAYMENT_ID.test(providerPaymentId)) throw badRequest("providerPaymentId", "is not a Razorpay payment id");
      if (!Number.isSafeInteger(amount) || amount < 1) throw badRequest("amount", "must be a positive integer of minor units");
      if (!idempotencyKey) throw badRequest("idempotencyKey", "is required");
      // Any key maps to one header value that Razorpay accepts, the same on every retry.
      const key = REFUND_KEY.test(idempotencyKey) ? idempotencyKey : await sha256Hex(idempotencyKey);
      const body = await razorpayRequest(http, "POST", `/v1/payments/${providerPaymentId}/refund`, {
        body: { amount, speed: "normal", ...(config.storeId ? { notes: { [STORE_NOTE]: config.storeId } } : {}) },
        headers: { "x-refund-idempotency": key },
      });
      const refund = parseAnswer(razorpayRefund, body, "refund");
      return { refundId: refund.id, status: refund.status };
    },
  };
}
