/**
 * A local server that speaks the part of Razorpay's documented API the adapter uses, for tests: Basic
 * auth, Razorpay's validation and error bodies, orders, payments and refunds in memory, failures on
 * demand (5xx, 429 with Retry-After, slowness, declines), and payments a test makes happen, with the
 * webhooks and checkout confirmations signed as Razorpay signs them. Give the adapter its `fetch`.
 */
import { Hono, type Context } from "hono";
import { faultInjection, jsonObject, type Fault as BaseFault } from "./provider";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { RazorpayOrder } from "#shared/payments/razorpay-entities";
import { RazorpayState, razorpayId, type PaymentOutcome, type PayOptions } from "./razorpay-sim";

export interface RazorpayServerOptions {
  keyId?: string;
  keySecret?: string;
  webhookSecret?: string;
  now?: () => number;
}

export interface RazorpayErrorFields {
  code: string;
  description: string;
  field?: string;
  source?: string;
  step?: string;
  reason?: string;
}

/** A failure on demand; with no `error`, Razorpay's own body for the status. */
export interface Fault extends BaseFault {
  error?: RazorpayErrorFields;
}

const CURRENCIES = new Set(["INR", "USD", "EUR", "GBP", "SGD", "AED", "MYR"]);
const ORDER_FIELDS = new Set(["amount", "currency", "receipt", "notes", "partial_payment", "first_payment_min_amount"]);
const REFUND_FIELDS = new Set(["amount", "speed", "notes", "receipt"]);
const REFUND_KEY = /^[A-Za-z0-9_-]{10,}$/;

const DEFAULT_ERRORS: Partial<Record<ContentfulStatusCode, RazorpayErrorFields>> = {
  429: { code: "BAD_REQUEST_ERROR", description: "Too many requests" },
  500: { code: "SERVER_ERROR", description: "The server encountered an error. The incident has been reported to admins." },
  502: { code: "GATEWAY_ERROR", description: "Bad gateway" },
  503: { code: "SERVER_ERROR", description: "Service unavailable" },
};

function errorJson(c: Context, status: ContentfulStatusCode, e: RazorpayErrorFields, headers: Record<string, string> = {}) {
  const body = { error: { source: "NA", step: "NA", reason: "NA", metadata: {}, ...e } };
  return c.json(body, status, headers);
}

function invalid(c: Context, description: string, field?: string) {
  return errorJson(c, 400, { code: "BAD_REQUEST_ERROR", description, field, source: "business", step: "payment_initiation", reason: "input_validation_failed" });
}

function extraFields(body: Record<string, unknown>, allowed: Set<string>): string | undefined {
  const extra = Object.keys(body).filter((k) => !allowed.has(k));
  return extra.length ? `${extra.join(", ")} is/are not required and should not be sent` : undefined;
}

export function razorpayServer(options: RazorpayServerOptions = {}) {
  const keyId = options.keyId ?? "rzp_test_localKey0001";
  const keySecret = options.keySecret ?? "local-key-secret";
  const webhookSecret = options.webhookSecret ?? "local-webhook-secret";
  const state = new RazorpayState({ keySecret, webhookSecret, accountId: "acc_Local0000000001" }, options.now ?? Date.now);
  const faults: Fault[] = [];
  const requests: string[] = [];
  const app = new Hono();

  app.use(
    faultInjection(faults, requests, (c, fault, headers) =>
      errorJson(c, fault.status, fault.error ?? DEFAULT_ERRORS[fault.status] ?? { code: "BAD_REQUEST_ERROR", description: "Failed" }, headers),
    ),
  );
  app.use(async (c, next) => {
    const auth = c.req.header("authorization");
    if (!auth) return errorJson(c, 401, { code: "BAD_REQUEST_ERROR", description: "Please provide your api key for authentication purposes." });
    if (auth !== `Basic ${btoa(`${keyId}:${keySecret}`)}`) return errorJson(c, 401, { code: "BAD_REQUEST_ERROR", description: "The api key provided is invalid" });
    await next();
  });

  app.post("/v1/orders", async (c) => {
    const body = await jsonObject(c);
    if (!body) return invalid(c, "The request body is not valid JSON");
    const extra = extraFields(body, ORDER_FIELDS);
    if (extra) return invalid(c, extra);
    const { amount, currency, receipt, notes } = body;
    if (amount === undefined) return invalid(c, "The amount field is required.", "amount");
    if (typeof amount !== "number" || !Number.isInteger(amount)) return invalid(c, "The amount must be an integer.", "amount");
    if (typeof currency !== "string" || !CURRENCIES.has(currency)) return invalid(c, "The currency field is required and must be a supported currency.", "currency");
    if (amount < 100) return invalid(c, `The amount must be at least ${currency} 1.00`, "amount");
    if (receipt !== undefined && (typeof receipt !== "string" || receipt.length > 40)) return invalid(c, "The receipt may not be greater than 40 characters.", "receipt");
    if (notes !== undefined) {
      const entries = notes && typeof notes === "object" && !Array.isArray(notes) ? Object.entries(notes) : undefined;
      if (!entries || entries.length > 15 || entries.some(([, v]) => typeof v !== "string" || v.length > 256)) {
        return invalid(c, "The notes must be at most 15 key-value pairs of at most 256 characters.", "notes");
      }
    }
    const order: RazorpayOrder = {
      id: razorpayId("order"),
      entity: "order",
      amount,
      amount_paid: 0,
      amount_due: amount,
      currency,
      receipt: typeof receipt === "string" ? receipt : null,
      status: "created",
      attempts: 0,
      notes: notes ? (notes as Record<string, string>) : [],
      created_at: state.seconds(),
    };
    state.orders.set(order.id, order);
    return c.json(order);
  });

  app.get("/v1/orders", (c) => {
    const receipt = c.req.query("receipt");
    const count = Math.min(Number(c.req.query("count") ?? 10) || 10, 100);
    const skip = Number(c.req.query("skip") ?? 0) || 0;
    const all = [...state.orders.values()].filter((o) => receipt === undefined || o.receipt === receipt).reverse();
    const items = all.slice(skip, skip + count);
    return c.json({ entity: "collection", count: items.length, items });
  });

  app.get("/v1/orders/:id", (c) => {
    const order = state.orders.get(c.req.param("id"));
    return order ? c.json(order) : invalid(c, "The id provided does not exist");
  });

  app.get("/v1/orders/:id/payments", (c) => {
    const id = c.req.param("id");
    if (!state.orders.has(id)) return invalid(c, "The id provided does not exist");
    const items = [...state.payments.values()].filter((p) => p.order_id === id);
    return c.json({ entity: "collection", count: items.length, items });
  });

  app.get("/v1/payments/:id", (c) => {
    const payment = state.payments.get(c.req.param("id"));
    return payment ? c.json(payment) : invalid(c, "The id provided does not exist");
  });

  app.post("/v1/payments/:id/refund", async (c) => {
    const payment = state.payments.get(c.req.param("id"));
    if (!payment) return invalid(c, "The id provided does not exist");
    const raw = await c.req.text();
    const key = c.req.header("x-refund-idempotency");
    if (key !== undefined) {
      if (!REFUND_KEY.test(key)) return invalid(c, "The idempotency key must be at least 10 characters of letters, digits, hyphens and underscores.");
      const seen = state.refundKeys.get(key);
      if (seen && seen.body !== raw) return invalid(c, "Different request with the same idempotency key has already been processed.");
      if (seen) return c.json(state.refunds.get(seen.refundId));
    }
    let body: Record<string, unknown>;
    try {
      const parsed: unknown = raw ? JSON.parse(raw) : {};
      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return invalid(c, "The request body is not valid JSON");
      body = parsed as Record<string, unknown>;
    } catch {
      return invalid(c, "The request body is not valid JSON");
    }
    const extra = extraFields(body, REFUND_FIELDS);
    if (extra) return invalid(c, extra);
    if (payment.status !== "captured") return invalid(c, "The payment has not been captured or has been fully refunded");
    const left = payment.amount - (payment.amount_refunded ?? 0);
    const amount = body.amount ?? left;
    if (typeof amount !== "number" || !Number.isInteger(amount)) return invalid(c, "The amount must be an integer.", "amount");
    if (amount < 100) return invalid(c, `The amount must be at least ${payment.currency} 1.00`, "amount");
    if (amount > left) return invalid(c, "The refund amount provided is greater than amount captured", "amount");
    const speed = body.speed ?? "normal";
    if (speed !== "normal" && speed !== "optimum") return invalid(c, "The selected speed is invalid.", "speed");
    const notes = body.notes && typeof body.notes === "object" && !Array.isArray(body.notes) ? (body.notes as Record<string, string>) : undefined;
    const refund = state.refund(payment, amount, speed, notes);
    if (key !== undefined) state.refundKeys.set(key, { body: raw, refundId: refund.id });
    return c.json(refund);
  });

  app.notFound((c) => errorJson(c, 400, { code: "BAD_REQUEST_ERROR", description: "The requested URL was not found on the server." }));

  return {
    app,
    keyId,
    keySecret,
    webhookSecret,
    state,
    /** "METHOD /path" of every request received, in order. */
    requests,
    fetch: (input: string, init?: RequestInit): Promise<Response> => Promise.resolve(app.fetch(new Request(input, init))),
    /** The next matching requests fail (or only answer late) as described. */
    fail(fault: Fault): void {
      faults.push({ ...fault });
    },
    /** A shopper pays for a Razorpay order on Checkout. */
    pay: (orderId: string, outcome: PaymentOutcome, options?: PayOptions) => state.pay(orderId, outcome, options),
    capture: (paymentId: string) => state.capture(paymentId),
    refundWebhook: (refundId: string) => state.refundWebhook(refundId),
    /** Refunds made from now on answer `pending` until `settleRefund` ends them (Razorpay's normal speed). */
    holdRefunds(): void {
      state.refundsPending = true;
    },
    settleRefund: (refundId: string, outcome: "processed" | "failed") => state.settleRefund(refundId, outcome),
  };
}

export type RazorpayServer = ReturnType<typeof razorpayServer>;
