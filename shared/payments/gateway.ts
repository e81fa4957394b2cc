/**
 * The payment gateway port (docs/payments.md). Adapters do I/O with the provider only: no database.
 * Money is integer minor units. Every failure of a call to the provider is a GatewayError, never a raw
 * error; a bad signature is `null`, never an error.
 */

/** The states of a payment attempt (SPEC "Payment attempt"), as a gateway reports them. */
export const PAYMENT_STATUSES = ["created", "pending", "authorized", "captured", "refunded", "failed"] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

export type GatewayProvider = "local" | "razorpay";

export type GatewayErrorKind = "declined" | "unavailable" | "timeout" | "rate_limited" | "bad_request" | "auth";

/** Kinds where the same call may succeed later; the others need a different request or new credentials. */
const RETRYABLE: Record<GatewayErrorKind, boolean> = {
  declined: false,
  unavailable: true,
  timeout: true,
  rate_limited: true,
  bad_request: false,
  auth: false,
};

export interface GatewayErrorDetails {
  /** HTTP status the provider answered, when it answered. */
  status?: number;
  /** The provider's own error code, e.g. Razorpay's `BAD_REQUEST_ERROR`. */
  code?: string;
  /** The request field the provider named, when it named one. */
  field?: string;
  /** From a Retry-After header, in whole seconds. */
  retryAfterSeconds?: number;
}

export class GatewayError extends Error {
  readonly provider: GatewayProvider;
  readonly kind: GatewayErrorKind;
  readonly retryable: boolean;
  readonly status: number | undefined;
  readonly code: string | undefined;
  readonly field: string | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(provider: GatewayProvider, kind: GatewayErrorKind, message: string, details: GatewayErrorDetails = {}) {
    super(message);
    this.name = "GatewayError";
    this.provider = provider;
    this.kind = kind;
    this.retryable = RETRYABLE[kind];
    this.status = details.status;
    this.code = details.code;
    this.field = details.field;
    this.retryAfterSeconds = details.retryAfterSeconds;
  }
}

export function isGatewayError(e: unknown): e is GatewayError {
  return e instanceof GatewayError;
}

export interface CreatePaymentInput {
  orderId: string;
  /** The order's human number, shown on the gateway's page and kept in the provider's notes. */
  orderNumber: string;
  attempt: number;
  /** `<orderId>:<attempt>` (SPEC "Checkout and payment behaviour" 1). Same key, same payment. */
  idempotencyKey: string;
  /** Minor units (paise). */
  amount: number;
  /** ISO 4217, e.g. "INR". */
  currency: string;
  customer: { email: string; phone?: string };
  /**
   * Where the shopper comes back after the gateway's page: a URL that accepts a POST of the gateway's
   * confirmation fields (Razorpay's `callback_url`; the local page posts its own fields there too).
   */
  returnUrl: string;
}

/**
 * How to send the shopper to the gateway's page. The local gateway's page is a plain link (GET);
 * Razorpay's hosted checkout is entered by a form POST, so its fields travel with it.
 */
export type PaymentRedirect =
  | { method: "GET"; url: string }
  | { method: "POST"; url: string; fields: Record<string, string> };

export interface CreatedPayment {
  /** The provider's reference for this attempt (Razorpay order id; the local gateway's signed token). */
  providerRef: string;
  redirect: PaymentRedirect;
  /** `redirect.url` when the page is a plain link (the issue's `payment.redirectUrl?`), else absent. */
  redirectUrl?: string;
}

export interface GatewayPayment {
  status: PaymentStatus;
  /** The amount of the payment that decides `status`, or the amount asked for when nobody has paid. */
  amount: number;
  currency: string;
  providerPaymentId?: string;
}

/** A verified webhook that moves an attempt. `eventId` is the dedupe key. */
export interface PaymentEvent {
  kind: "payment";
  eventId: string;
  /** The provider's event name, e.g. `payment.captured`. */
  event: string;
  providerRef: string;
  status: PaymentStatus;
  /** Minor units: the payment's amount. */
  amount: number;
  currency: string;
  providerPaymentId?: string;
  /**
   * The store named by a record this server made and the shopper cannot change (Razorpay: the `store_id`
   * note of the Razorpay order, which order.paid carries; local: the store of the signed ref): the webhook
   * door applies the event only at that store's address. Null when the event brings no such record
   * (Razorpay's payment.* events carry only the payment, whose notes come from the shopper's browser):
   * then the event is applied only where an attempt holds its reference, the address's own store (RLS).
   */
  storeId: string | null;
}

/** A verified webhook about a refund: it went through (`processed`) or the gateway gave up (`failed`). */
export interface RefundEvent {
  kind: "refund";
  eventId: string;
  event: string;
  /** The reference of the attempt whose payment was refunded. */
  providerRef: string;
  refundId: string;
  status: "processed" | "failed";
  /** Minor units: the refund's amount. */
  amount: number;
  currency: string;
  providerPaymentId?: string;
  /** The refunded payment's own amount and currency: a refund proves a capture, checked as a capture report is. */
  payment?: { amount: number; currency: string };
  /** As a payment event's: the refund's own `store_id` note (null for a refund made in Razorpay's dashboard). */
  storeId: string | null;
}

/** A verified webhook with nothing for an attempt (an event we do not act on): answer 2xx, write nothing. */
export interface IgnoredEvent {
  kind: "ignored";
  eventId: string;
  event: string;
  reason: string;
}

export type WebhookEvent = PaymentEvent | RefundEvent | IgnoredEvent;

/** What the shopper's browser brought back from the gateway's page, once its signature checks. */
export interface ClientConfirmation {
  providerRef: string;
  providerPaymentId: string;
  /** What the signature proves: Razorpay's proves `authorized`; the local gateway's names its outcome. */
  status: PaymentStatus;
  /** Present when the confirmation itself carries them (local); Razorpay binds the payment to the order's amount. */
  amount?: number;
  currency?: string;
}

export interface RefundResult {
  refundId: string;
  status: "pending" | "processed" | "failed";
}

export interface PaymentGateway {
  readonly provider: GatewayProvider;
  createPayment(input: CreatePaymentInput): Promise<CreatedPayment>;
  /** What the provider holds for a reference; ask this before expiring an unpaid order. */
  getPayment(providerRef: string): Promise<GatewayPayment>;
  /** `null` when the signature is missing or wrong; nothing in the body is trusted before it checks. */
  verifyWebhook(rawBody: string, headers: Headers, secret: string): Promise<WebhookEvent | null>;
  /** `null` when the fields are missing or the signature is wrong. */
  verifyClientConfirmation(payload: unknown, secret: string): Promise<ClientConfirmation | null>;
  refund(providerPaymentId: string, amount: number, idempotencyKey: string): Promise<RefundResult>;
}

/** The checks both adapters make on a createPayment input before anything is sent. */
export function checkCreateInput(provider: GatewayProvider, input: CreatePaymentInput): void {
  const bad = (field: string, message: string) => new GatewayError(provider, "bad_request", `${field}: ${message}`, { field });
  if (!Number.isSafeInteger(input.amount) || input.amount < 1) throw bad("amount", "must be a positive integer of minor units");
  if (!/^[A-Z]{3}$/.test(input.currency)) throw bad("currency", "must be an ISO 4217 code");
  if (!Number.isSafeInteger(input.attempt) || input.attempt < 1) throw bad("attempt", "must be a positive integer");
  if (input.idempotencyKey !== `${input.orderId}:${input.attempt}`) throw bad("idempotencyKey", "must be <orderId>:<attempt>");
  if (!URL.canParse(input.returnUrl)) throw bad("returnUrl", "must be an absolute URL");
}
