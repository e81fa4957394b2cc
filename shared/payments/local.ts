/**
 * The local gateway `npm run dev` uses: it behaves like a real one (a hosted page, signed webhooks,
 * failures, delays and duplicate deliveries on demand) and keeps no state: everything it needs travels in
 * the signed providerRef (local-protocol.ts). See docs/payments.md.
 */
import { z } from "zod";
import { parseJsonVariable } from "#shared/core/env";
import { digestId } from "../core/crypto";
import {
  checkCreateInput,
  GatewayError,
  PAYMENT_STATUSES,
  type GatewayErrorKind,
  type GatewayPayment,
  type PaymentGateway,
  type RefundResult,
} from "./gateway";
import { localPaymentId, readLocalRef, signLocalRef, verifyLocalConfirmation, verifyLocalWebhook } from "./local-protocol";

/** The storefront path of the hosted page, on the shopper's store host: `/-gateway/pay/<providerRef>`. */
export const LOCAL_PAGE_PATH = "/-gateway/pay/";

const errorKind = z.enum(["declined", "unavailable", "timeout", "rate_limited", "bad_request", "auth"]);

/** Failures and delays on demand (e.g. from the LOCAL_GATEWAY_BEHAVIOUR variable, as JSON). */
export const localBehaviour = z.strictObject({
  /** createPayment fails with this kind… */
  failCreate: errorKind.optional(),
  /** …for attempts up to this number only (so that the shopper's retry works); default every attempt. */
  failCreateUpToAttempt: z.number().int().positive().optional(),
  /** createPayment answers this late; at or past timeoutMs it fails with `timeout`. */
  createDelayMs: z.number().int().min(0).max(60_000).optional(),
  /** What getPayment reports (the gateway's own record): default `created`, nobody paid. */
  reportStatus: z.enum(PAYMENT_STATUSES).optional(),
  /** refund fails with this kind. */
  failRefund: errorKind.optional(),
  /** How many times the page delivers each webhook (2: a duplicate delivery); default 1. */
  webhookDeliveries: z.number().int().min(1).max(5).optional(),
  /** How long the page waits before each delivery; default 0. */
  webhookDelayMs: z.number().int().min(0).max(60_000).optional(),
});
export type LocalBehaviour = z.infer<typeof localBehaviour>;

/** LOCAL_GATEWAY_BEHAVIOUR's JSON, checked; an empty or absent value is no behaviour. */
export function parseLocalBehaviour(json: string | undefined): LocalBehaviour {
  return parseJsonVariable("LOCAL_GATEWAY_BEHAVIOUR", json, localBehaviour);
}

export interface LocalGatewayConfig {
  storeId: string;
  /** The store's secret (deriveLocalSecret of the root secret): signs refs, webhooks and confirmations. */
  secret: string;
  behaviour?: LocalBehaviour;
  /** Default 10 000, as for Razorpay. */
  timeoutMs?: number;
}

const LOCAL_PAYMENT_ID = /^lpay_[0-9a-f]{20}$/;

function fail(kind: GatewayErrorKind, message: string, field?: string): GatewayError {
  return new GatewayError("local", kind, message, field ? { field } : {});
}

export function localGateway(config: LocalGatewayConfig): PaymentGateway {
  const behaviour = config.behaviour ?? {};
  const timeoutMs = config.timeoutMs ?? 10_000;

  async function refOrFail(providerRef: string) {
    const ref = await readLocalRef(providerRef, config.secret);
    if (!ref || ref.storeId !== config.storeId) throw fail("bad_request", "providerRef: not a payment of this store's local gateway", "providerRef");
    return ref;
  }

  return {
    provider: "local",

    async createPayment(input) {
      checkCreateInput("local", input);
      if (behaviour.createDelayMs) {
        await new Promise((r) => setTimeout(r, Math.min(behaviour.createDelayMs ?? 0, timeoutMs)));
        if (behaviour.createDelayMs >= timeoutMs) throw fail("timeout", `the local gateway did not answer within ${timeoutMs} ms`);
      }
      if (behaviour.failCreate && input.attempt <= (behaviour.failCreateUpToAttempt ?? Infinity)) {
        throw fail(behaviour.failCreate, `the local gateway was told to fail (${behaviour.failCreate})`);
      }
      const providerRef = await signLocalRef(
        {
          storeId: config.storeId,
          orderId: input.orderId,
          orderNumber: input.orderNumber,
          attempt: input.attempt,
          amount: input.amount,
          currency: input.currency,
          returnUrl: input.returnUrl,
        },
        config.secret,
      );
      const url = new URL(`${LOCAL_PAGE_PATH}${providerRef}`, input.returnUrl).toString();
      return { providerRef, redirect: { method: "GET", url }, redirectUrl: url };
    },

    async getPayment(providerRef): Promise<GatewayPayment> {
      const ref = await refOrFail(providerRef);
      const status = behaviour.reportStatus ?? "created";
      const payment: GatewayPayment = { status, amount: ref.amount, currency: ref.currency };
      if (status !== "created") payment.providerPaymentId = await localPaymentId(providerRef);
      return payment;
    },

    verifyWebhook: verifyLocalWebhook,
    verifyClientConfirmation: verifyLocalConfirmation,

    async refund(providerPaymentId, amount, idempotencyKey): Promise<RefundResult> {
      if (!LOCAL_PAYMENT_ID.test(providerPaymentId)) throw fail("bad_request", "providerPaymentId: not a local gateway payment", "providerPaymentId");
      if (!Number.isSafeInteger(amount) || amount < 1) throw fail("bad_request", "amount: must be a positive integer of minor units", "amount");
      if (!idempotencyKey) throw fail("bad_request", "idempotencyKey: is required", "idempotencyKey");
      if (behaviour.failRefund) throw fail(behaviour.failRefund, `the local gateway was told to fail refunds (${behaviour.failRefund})`);
      return { refundId: `lrfnd_${await digestId(`${providerPaymentId}|${idempotencyKey}`)}`, status: "processed" };
    },
  };
}
