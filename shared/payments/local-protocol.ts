/**
 * The local gateway's wire protocol, stateless by design (a Worker keeps nothing between requests):
 *
 * - providerRef: `lp1.<payload>.<sig>`, payload = base64url JSON of what the attempt needs (store, order,
 *   attempt, amount, currency, return URL), sig = hex HMAC-SHA256 of `lp1.<payload>` with the store's
 *   secret. Deterministic, so the same attempt always gets the same ref, and unforgeable.
 * - webhook: `POST /webhooks/payments/local/<storeId>`, JSON body built from the ref alone, headers
 *   `X-Local-Signature` (hex HMAC-SHA256 of the raw body) and `X-Local-Event-Id`; the event id and the
 *   payment id are digests of the ref (and outcome), so a second delivery or a second click carries the
 *   same event id.
 * - confirmation: the page POSTs `local_ref`, `local_payment_id`, `local_status`, `local_signature`
 *   (HMAC of `<ref>|<payment id>|<status>`) to the attempt's return URL, as Razorpay's Checkout does.
 */
import { z } from "zod";
import { digestId, hmacSha256Hex, openSignedWebhook, openToken, signToken, verifyHmacSha256Hex } from "../core/crypto";
import type { ClientConfirmation, PaymentStatus, WebhookEvent } from "./gateway";

const REF_VERSION = "lp1";

const refPayload = z.object({
  s: z.string().min(1),
  o: z.string().min(1),
  n: z.string(),
  a: z.number().int().positive(),
  m: z.number().int().positive(),
  c: z.string().length(3),
  r: z.url(),
});

export interface LocalPaymentRef {
  storeId: string;
  orderId: string;
  orderNumber: string;
  attempt: number;
  amount: number;
  currency: string;
  returnUrl: string;
}

/** The store's own secret, derived from one root secret so that no store's secret is stored anywhere. */
export function deriveLocalSecret(rootSecret: string, storeId: string): Promise<string> {
  return hmacSha256Hex(rootSecret, `local-gateway|${storeId}`);
}

export function signLocalRef(ref: LocalPaymentRef, secret: string): Promise<string> {
  return signToken(REF_VERSION, { s: ref.storeId, o: ref.orderId, n: ref.orderNumber, a: ref.attempt, m: ref.amount, c: ref.currency, r: ref.returnUrl }, secret);
}

/** What a ref carries, or null when it is not one of this secret's refs (the page answers 404 then). */
export async function readLocalRef(providerRef: string, secret: string): Promise<LocalPaymentRef | null> {
  const parsed = refPayload.safeParse(await openToken(providerRef, REF_VERSION, secret));
  if (!parsed.success) return null;
  const p = parsed.data;
  return { storeId: p.s, orderId: p.o, orderNumber: p.n, attempt: p.a, amount: p.m, currency: p.c, returnUrl: p.r };
}

export type LocalOutcome = "authorized" | "captured" | "failed";
const LOCAL_EVENTS = { "payment.authorized": "authorized", "payment.captured": "captured", "payment.failed": "failed" } as const;
const EVENT_OF: Record<LocalOutcome, keyof typeof LOCAL_EVENTS> = {
  authorized: "payment.authorized",
  captured: "payment.captured",
  failed: "payment.failed",
};

export async function localPaymentId(providerRef: string): Promise<string> {
  return `lpay_${await digestId(providerRef)}`;
}

export interface LocalWebhook {
  url: string;
  eventId: string;
  body: string;
  headers: Record<string, string>;
}

/**
 * The signed webhook the hosted page sends when the shopper presses Pay or Fail. `amount` and `currency`
 * override the ref's (a payment that does not add up, as a gateway can report one). Null when the ref is
 * not this secret's.
 */
export async function buildLocalWebhook(input: {
  providerRef: string;
  outcome: LocalOutcome;
  secret: string;
  /** The worker's origin, e.g. http://localhost:8789. */
  workerOrigin: string;
  amount?: number;
  currency?: string;
}): Promise<LocalWebhook | null> {
  const ref = await readLocalRef(input.providerRef, input.secret);
  if (!ref) return null;
  const amount = input.amount ?? ref.amount;
  const currency = input.currency ?? ref.currency;
  const event = EVENT_OF[input.outcome];
  const eventId = `evt_${await digestId(`${input.providerRef}|${event}|${amount}${currency === ref.currency ? "" : `|${currency}`}`)}`;
  const payment = { id: await localPaymentId(input.providerRef), ref: input.providerRef, amount, currency, status: input.outcome };
  const body = JSON.stringify({ entity: "event", id: eventId, event, payload: { payment } });
  return {
    url: new URL(`/webhooks/payments/local/${encodeURIComponent(ref.storeId)}`, input.workerOrigin).toString(),
    eventId,
    body,
    headers: { "content-type": "application/json", "x-local-signature": await hmacSha256Hex(input.secret, body), "x-local-event-id": eventId },
  };
}

/** Sends one webhook `deliveries` times (a duplicate delivery on demand), `delayMs` before each; the statuses. */
export async function sendLocalWebhook(
  webhook: LocalWebhook,
  options: { deliveries?: number; delayMs?: number; fetch?: (request: Request) => Promise<Response> } = {},
): Promise<number[]> {
  const send = options.fetch ?? ((request: Request) => fetch(request));
  const statuses: number[] = [];
  for (let i = 0; i < (options.deliveries ?? 1); i++) {
    if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs));
    const response = await send(new Request(webhook.url, { method: "POST", headers: webhook.headers, body: webhook.body }));
    statuses.push(response.status);
  }
  return statuses;
}

const webhookBody = z.object({
  entity: z.literal("event"),
  id: z.string(),
  event: z.string(),
  payload: z.object({
    payment: z.object({ id: z.string(), ref: z.string(), amount: z.number().int(), currency: z.string(), status: z.string() }),
  }),
});

export async function verifyLocalWebhook(rawBody: string, headers: Headers, secret: string): Promise<WebhookEvent | null> {
  const opened = await openSignedWebhook(rawBody, headers.get("x-local-signature"), headers.get("x-local-event-id"), secret);
  if (!opened) return null;
  const { eventId } = opened;
  const parsed = webhookBody.safeParse(opened.json);
  if (!parsed.success) return { kind: "ignored", eventId, event: "unknown", reason: "the body is not a local gateway event" };
  const { event, payload } = parsed.data;
  if (!Object.hasOwn(LOCAL_EVENTS, event)) return { kind: "ignored", eventId, event, reason: "not an event we act on" };
  const status: PaymentStatus = LOCAL_EVENTS[event as keyof typeof LOCAL_EVENTS];
  const p = payload.payment;
  // The store is the one the signed ref names (a ref that is not this secret's names none).
  const storeId = (await readLocalRef(p.ref, secret))?.storeId ?? null;
  return { kind: "payment", eventId, event, providerRef: p.ref, status, amount: p.amount, currency: p.currency, providerPaymentId: p.id, storeId };
}

/** The fields the page POSTs to the attempt's return URL after Pay or Fail (or null for a foreign ref). */
export async function localConfirmationFields(providerRef: string, outcome: LocalOutcome, secret: string): Promise<Record<string, string> | null> {
  if (!(await readLocalRef(providerRef, secret))) return null;
  const paymentId = await localPaymentId(providerRef);
  return {
    local_ref: providerRef,
    local_payment_id: paymentId,
    local_status: outcome,
    local_signature: await hmacSha256Hex(secret, `${providerRef}|${paymentId}|${outcome}`),
  };
}

const confirmationFields = z.object({
  local_ref: z.string().min(1).max(4000),
  local_payment_id: z.string().min(1).max(100),
  local_status: z.enum(["authorized", "captured", "failed"]),
  local_signature: z.string().min(1).max(200),
});

export async function verifyLocalConfirmation(payload: unknown, secret: string): Promise<ClientConfirmation | null> {
  const parsed = confirmationFields.safeParse(payload);
  if (!parsed.success) return null;
  const { local_ref: providerRef, local_payment_id: paymentId, local_status: status, local_signature: signature } = parsed.data;
  if (!(await verifyHmacSha256Hex(secret, `${providerRef}|${paymentId}|${status}`, signature))) return null;
  const ref = await readLocalRef(providerRef, secret);
  if (!ref) return null;
  return { providerRef, providerPaymentId: paymentId, status, amount: ref.amount, currency: ref.currency };
}
