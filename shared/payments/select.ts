/**
 * Which gateway a store uses, and its secrets, from the Worker's configuration (wrangler vars and
 * `wrangler secret put`; docs/payments.md). The local gateway is the default, as `npm run dev` wants.
 */
import { z } from "zod";
import type { GatewayProvider, PaymentGateway } from "./gateway";
import { localBehaviour, localGateway, parseLocalBehaviour, type LocalBehaviour } from "./local";
import { deriveLocalSecret } from "./local-protocol";
import { razorpayGateway } from "./razorpay";
import type { FetchLike } from "./razorpay-http";

export type GatewayConfig =
  | { provider: "local"; rootSecret: string; behaviour?: LocalBehaviour }
  | { provider: "razorpay"; keyId: string; keySecret: string; webhookSecret: string; merchantName?: string };

const secret = z.string().min(16, "must be at least 16 characters");

const envSchema = z.discriminatedUnion("PAYMENT_GATEWAY", [
  z.object({
    PAYMENT_GATEWAY: z.literal("local"),
    LOCAL_GATEWAY_SECRET: secret,
    LOCAL_GATEWAY_BEHAVIOUR: z.string().optional(),
  }),
  z.object({
    PAYMENT_GATEWAY: z.literal("razorpay"),
    RAZORPAY_KEY_ID: z.string().regex(/^rzp_(test|live)_[A-Za-z0-9]+$/, "must be a Razorpay key id (rzp_test_… or rzp_live_…)"),
    RAZORPAY_KEY_SECRET: secret,
    RAZORPAY_WEBHOOK_SECRET: secret,
    RAZORPAY_MERCHANT_NAME: z.string().max(100).optional(),
  }),
]);

/** The deployment's gateway configuration; throws naming the variable that is missing or wrong. */
export function gatewayConfigFromEnv(env: Record<string, unknown>): GatewayConfig {
  const parsed = envSchema.safeParse({ PAYMENT_GATEWAY: "local", ...env });
  if (!parsed.success) throw new Error(`Payment gateway configuration: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  const e = parsed.data;
  if (e.PAYMENT_GATEWAY === "local") {
    // Its payments are make-believe: a production deployment that fell back to it would ship goods for free.
    // APP_ENV defaults to production (shared/core/env.ts), so only an explicit development or test allows it.
    if (env.APP_ENV !== "development" && env.APP_ENV !== "test") throw new Error("Payment gateway configuration: PAYMENT_GATEWAY: the local gateway is for development and tests only");
    return { provider: "local", rootSecret: e.LOCAL_GATEWAY_SECRET, behaviour: parseLocalBehaviour(e.LOCAL_GATEWAY_BEHAVIOUR) };
  }
  return {
    provider: "razorpay",
    keyId: e.RAZORPAY_KEY_ID,
    keySecret: e.RAZORPAY_KEY_SECRET,
    webhookSecret: e.RAZORPAY_WEBHOOK_SECRET,
    merchantName: e.RAZORPAY_MERCHANT_NAME,
  };
}

export interface StoreGateway {
  gateway: PaymentGateway;
  provider: GatewayProvider;
  /** For verifyWebhook. */
  webhookSecret: string;
  /** For verifyClientConfirmation. */
  confirmationSecret: string;
}

/** One store's gateway and the secrets its webhook and confirmation routes check with. */
export async function storeGateway(
  config: GatewayConfig,
  storeId: string,
  options: { fetch?: FetchLike; baseUrl?: string; timeoutMs?: number } = {},
): Promise<StoreGateway> {
  if (config.provider === "local") {
    const storeSecret = await deriveLocalSecret(config.rootSecret, storeId);
    const gateway = localGateway({ storeId, secret: storeSecret, behaviour: localBehaviour.parse(config.behaviour ?? {}), timeoutMs: options.timeoutMs });
    return { gateway, provider: "local", webhookSecret: storeSecret, confirmationSecret: storeSecret };
  }
  const gateway = razorpayGateway({ keyId: config.keyId, keySecret: config.keySecret, merchantName: config.merchantName, storeId, ...options });
  return { gateway, provider: "razorpay", webhookSecret: config.webhookSecret, confirmationSecret: config.keySecret };
}
