/**
 * App signing secrets (docs/decisions/0011-app-webhook-secrets.md). Nothing that signs is stored: an app's
 * secret is HMAC-SHA256(APP_WEBHOOK_ROOT_SECRET, "app-webhook:v1:<appId>:<version>:<salt>"), base64url,
 * prefixed `whsec_`. The database keeps the version, a random salt and the secret's SHA-256, so neither the
 * root secret alone nor a copy of the database alone gives an app's secret.
 */
import { z } from "zod";
import { base64Url, randomSecret, sha256Hex } from "../core/tokens";
import { hmacSha256Hex } from "../core/crypto";

export interface AppWebhookConfig {
  rootSecret: string;
  /** APP_ENV development or test: http, any port and loopback hosts are allowed (./url.ts). */
  allowLocalUrls: boolean;
}

/** Development and test values of APP_WEBHOOK_ROOT_SECRET start with this; production refuses them. */
export const LOCAL_ROOT_PREFIX = "local-app-webhook-";

const envSchema = z.object({
  APP_WEBHOOK_ROOT_SECRET: z
    .string({ error: "is required (32 characters or more; in production: wrangler secret put APP_WEBHOOK_ROOT_SECRET)" })
    .min(32, "must be at least 32 characters"),
});

/** The deployment's app webhook configuration; throws naming the variable that is missing or wrong. */
export function appWebhookConfigFromEnv(env: Record<string, unknown>): AppWebhookConfig {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) throw new Error(`App webhooks: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  const allowLocalUrls = env.APP_ENV === "development" || env.APP_ENV === "test";
  if (!allowLocalUrls && parsed.data.APP_WEBHOOK_ROOT_SECRET.startsWith(LOCAL_ROOT_PREFIX)) {
    throw new Error("App webhooks: APP_WEBHOOK_ROOT_SECRET: the development value must not be used in production");
  }
  return { rootSecret: parsed.data.APP_WEBHOOK_ROOT_SECRET, allowLocalUrls };
}

/** What the database keeps of one secret. */
export interface SecretRecord {
  version: number;
  salt: string;
  hash: string;
}

async function hmacBytes(key: string, message: string): Promise<Uint8Array> {
  const enc = new TextEncoder();
  const k = await crypto.subtle.importKey("raw", enc.encode(key), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", k, enc.encode(message)));
}

/** The app's secret for this version and salt. */
export async function deriveAppSecret(rootSecret: string, appId: string, version: number, salt: string): Promise<string> {
  return `whsec_${base64Url(await hmacBytes(rootSecret, `app-webhook:v1:${appId}:${version}:${salt}`))}`;
}

/** A new secret for `appId` at `version`: the secret to show once, and what to store of it. */
export async function newAppSecret(rootSecret: string, appId: string, version: number): Promise<{ secret: string; record: SecretRecord; hint: string }> {
  const salt = randomSecret(32);
  const secret = await deriveAppSecret(rootSecret, appId, version, salt);
  return { secret, record: { version, salt, hash: await sha256Hex(secret) }, hint: secret.slice(-4) };
}

/**
 * The secret a record stands for, or null when the derivation no longer gives it (APP_WEBHOOK_ROOT_SECRET
 * changed since): signing with another key would only make every delivery fail verification.
 */
export async function secretOf(rootSecret: string, appId: string, record: SecretRecord): Promise<string | null> {
  const secret = await deriveAppSecret(rootSecret, appId, record.version, record.salt);
  return (await sha256Hex(secret)) === record.hash ? secret : null;
}

/** `X-Commerce-Signature`: `v1=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>` per secret, comma-separated. */
export async function signatureHeader(secrets: readonly string[], timestamp: number, body: string): Promise<string> {
  const parts = await Promise.all(secrets.map(async (s) => `v1=${await hmacSha256Hex(s, `${timestamp}.${body}`)}`));
  return parts.join(", ");
}
