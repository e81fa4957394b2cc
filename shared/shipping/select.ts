/**
 * Which courier a store uses, and the secret its webhooks are checked with, from the Worker's configuration
 * (wrangler vars and `wrangler secret put`; docs/shipping.md). The local courier is the default, as
 * `npm run dev` wants.
 */
import { z } from "zod";
import type { Courier, CourierProvider } from "./courier";
import { localCourier, localCourierBehaviour, parseLocalCourierBehaviour, type LocalCourierBehaviour } from "./local";
import { deriveLocalCourierSecret } from "./local-protocol";
import { shiprocketCourier } from "./shiprocket";
import type { FetchLike, ShiprocketTokens } from "./shiprocket-http";

export type CourierConfig =
  | { provider: "local"; rootSecret: string; pageOrigin: string; behaviour?: LocalCourierBehaviour }
  | { provider: "shiprocket"; email: string; password: string; webhookToken: string };

/** Where the local tracking page is when LOCAL_COURIER_ORIGIN is not set: the worker of `npm run dev`. */
export const DEFAULT_LOCAL_COURIER_ORIGIN = "http://localhost:8789";

const secret = z.string().min(16, "must be at least 16 characters");

const envSchema = z.discriminatedUnion("COURIER", [
  z.object({
    COURIER: z.literal("local"),
    LOCAL_COURIER_SECRET: secret,
    LOCAL_COURIER_BEHAVIOUR: z.string().optional(),
    LOCAL_COURIER_ORIGIN: z.url({ protocol: /^https?$/, error: "must be the worker's origin, e.g. http://localhost:8789" }).optional(),
  }),
  z.object({
    COURIER: z.literal("shiprocket"),
    SHIPROCKET_EMAIL: z.email("must be the email of a Shiprocket API user"),
    SHIPROCKET_PASSWORD: z.string().min(1, "is required"),
    SHIPROCKET_WEBHOOK_TOKEN: secret,
  }),
]);

/** The deployment's courier configuration; throws naming the variable that is missing or wrong. */
export function courierConfigFromEnv(env: Record<string, unknown>): CourierConfig {
  const parsed = envSchema.safeParse({ COURIER: "local", ...env });
  if (!parsed.success) throw new Error(`Courier configuration: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  const e = parsed.data;
  if (e.COURIER === "local") {
    // Its parcels are make-believe: a production deployment that fell back to it would never ship anything.
    // APP_ENV defaults to production (shared/core/env.ts), so only an explicit development or test allows it.
    if (env.APP_ENV !== "development" && env.APP_ENV !== "test") throw new Error("Courier configuration: COURIER: the local courier is for development and tests only");
    return {
      provider: "local",
      rootSecret: e.LOCAL_COURIER_SECRET,
      pageOrigin: new URL(e.LOCAL_COURIER_ORIGIN ?? DEFAULT_LOCAL_COURIER_ORIGIN).origin,
      behaviour: parseLocalCourierBehaviour(e.LOCAL_COURIER_BEHAVIOUR),
    };
  }
  return { provider: "shiprocket", email: e.SHIPROCKET_EMAIL, password: e.SHIPROCKET_PASSWORD, webhookToken: e.SHIPROCKET_WEBHOOK_TOKEN };
}

export interface StoreCourier {
  courier: Courier;
  provider: CourierProvider;
  /** For verifyWebhook. */
  webhookSecret: string;
}

/** One store's courier and the secret its webhook route checks with. */
export async function storeCourier(
  config: CourierConfig,
  storeId: string,
  options: { fetch?: FetchLike; baseUrl?: string; timeoutMs?: number; tokens?: ShiprocketTokens } = {},
): Promise<StoreCourier> {
  if (config.provider === "local") {
    const storeSecret = await deriveLocalCourierSecret(config.rootSecret, storeId);
    const courier = localCourier({
      storeId,
      secret: storeSecret,
      pageOrigin: config.pageOrigin,
      behaviour: localCourierBehaviour.parse(config.behaviour ?? {}),
      timeoutMs: options.timeoutMs,
    });
    return { courier, provider: "local", webhookSecret: storeSecret };
  }
  // One Shiprocket account per deployment: every store's webhook carries the token set in its panel.
  const courier = shiprocketCourier({ email: config.email, password: config.password, ...options });
  return { courier, provider: "shiprocket", webhookSecret: config.webhookToken };
}

/**
 * The path segments under which a courier's webhook is accepted (`/webhooks/shipments/<segment>/<storeId>`):
 * its name, and for Shiprocket also `tracking`, the one to enter in its panel, which refuses a URL that
 * contains "shiprocket", "kartrocket", "sr" or "kr".
 */
export const WEBHOOK_SEGMENTS: Readonly<Record<CourierProvider, readonly string[]>> = {
  local: ["local"],
  shiprocket: ["shiprocket", "tracking"],
};

export function isWebhookSegmentOf(segment: string, provider: CourierProvider): boolean {
  return WEBHOOK_SEGMENTS[provider].includes(segment);
}
