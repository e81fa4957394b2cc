import { z } from "zod";
import { base64Url, sha256Hex } from "../core/tokens";
import { CURRENT_STORE } from "../db/openings";
import { plan, type Plan } from "../db/plan";
import { and, desc, eq } from "drizzle-orm";
import { storeDomain } from "../db/schema";
import type { Q } from "../db/steps";
import { hmacSha256Hex } from "../core/crypto";

/**
 * Links in emails (docs/marketing.md, docs/events.md): the store's address, a marketing message's
 * unsubscribe link and a notification's link to the order. Each key is derived from EMAIL_LINK_SECRET and
 * the row it opens, so every retry of a message carries the same link (the mail provider's idempotency key
 * expects the same content); no key is stored, only its SHA-256 on the row, which is all the storefront
 * needs to check one. A marketing consent's confirmation link is made the same way (consentKey). The
 * storefront never holds the secret.
 */
export const LOCAL_LINK_PREFIX = "local-email-link-";

const envSchema = z.object({
  EMAIL_LINK_SECRET: z
    .string({ error: "is required (32 characters or more; in production: wrangler secret put EMAIL_LINK_SECRET)" })
    .min(32, "must be at least 32 characters"),
});

/** The deployment's link secret; throws naming the variable that is missing or wrong. */
export function emailLinkSecretFromEnv(env: Readonly<Record<string, unknown>>): string {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) throw new Error(`Email links: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  const local = env["APP_ENV"] === "development" || env["APP_ENV"] === "test";
  if (!local && parsed.data.EMAIL_LINK_SECRET.startsWith(LOCAL_LINK_PREFIX)) {
    throw new Error("Email links: EMAIL_LINK_SECRET: the development value must not be used in production");
  }
  return parsed.data.EMAIL_LINK_SECRET;
}

/** A link's key for `purpose` (64 hex characters: HMAC-SHA256 of the secret) and its hash. */
async function hexKey(secret: string, purpose: string): Promise<{ key: string; hash: string }> {
  const key = await hmacSha256Hex(secret, purpose);
  return { key, hash: await sha256Hex(key) };
}

/** A marketing message's unsubscribe key (64 hex characters) and its hash. */
export const unsubscribeKey = (secret: string, messageId: string) => hexKey(secret, `unsubscribe:v1:${messageId}`);

/**
 * A consent request's confirmation key (decision 0021), from the `customer.consent_requested` event that
 * announced the request: every retry of its email carries the same link, and a later request's link is
 * another one (the customer row keeps only the latest request's hash).
 */
export const consentKey = (secret: string, eventId: string) => hexKey(secret, `marketing-consent:v1:${eventId}`);

/**
 * The order link's key for emails: base64url of HMAC-SHA256(secret, "order-email:v1:<orderId>"), 43
 * characters like the buyer's own key (decision 0009), so `/orders/<id>?k=` takes either.
 */
export async function orderEmailKey(secret: string, orderId: string): Promise<{ key: string; hash: string }> {
  const enc = new TextEncoder();
  const k = await crypto.subtle.importKey("raw", enc.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const key = base64Url(new Uint8Array(await crypto.subtle.sign("HMAC", k, enc.encode(`order-email:v1:${orderId}`))));
  return { key, hash: await sha256Hex(key) };
}

/** Local hostnames (`*.localhost`) are served by `wrangler dev` on this port, over http. */
const LOCAL_STOREFRONT_PORT = 8788;

/** Where a shopper reaches the store: its primary verified hostname (else its first verified one), or null. A statement of the caller's unit. */
export function storefrontBasePlan(q: Q): Plan<string | null> {
  return plan(
    [
      q
        .select({ hostname: storeDomain.hostname })
        .from(storeDomain)
        .where(and(eq(storeDomain.storeId, CURRENT_STORE), eq(storeDomain.status, "verified")))
        .orderBy(desc(storeDomain.isPrimary), storeDomain.hostname)
        .limit(1),
    ] as const,
    ([[row]]) => {
      const host = row?.hostname;
      if (!host) return null;
      return host.endsWith(".localhost") || host === "localhost" ? `http://${host}:${LOCAL_STOREFRONT_PORT}` : `https://${host}`;
    },
  );
}
