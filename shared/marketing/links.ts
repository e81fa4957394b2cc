import { z } from "zod";
import { sha256Hex } from "../auth/tokens";
import type { StoreTx } from "../db/with-store";
import { hmacSha256Hex } from "../payments/crypto";

/**
 * Links in marketing messages (docs/marketing.md): the store's address and the message's unsubscribe link.
 *
 * The unsubscribe key is HMAC-SHA256(MARKETING_LINK_SECRET, "unsubscribe:v1:<messageId>"): the same on every
 * retry of one message (the mail provider's idempotency key expects the same content), never stored; the
 * database keeps its SHA-256 on the message row, which is all the storefront needs to check it.
 */
export const LOCAL_LINK_PREFIX = "local-marketing-link-";

const envSchema = z.object({
  MARKETING_LINK_SECRET: z
    .string({ error: "is required (32 characters or more; in production: wrangler secret put MARKETING_LINK_SECRET)" })
    .min(32, "must be at least 32 characters"),
});

/** The deployment's link secret; throws naming the variable that is missing or wrong. */
export function marketingSecretFromEnv(env: Readonly<Record<string, unknown>>): string {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) throw new Error(`Marketing: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  const local = env["APP_ENV"] === "development" || env["APP_ENV"] === "test";
  if (!local && parsed.data.MARKETING_LINK_SECRET.startsWith(LOCAL_LINK_PREFIX)) {
    throw new Error("Marketing: MARKETING_LINK_SECRET: the development value must not be used in production");
  }
  return parsed.data.MARKETING_LINK_SECRET;
}

export async function unsubscribeKey(secret: string, messageId: string): Promise<{ key: string; hash: string }> {
  const key = await hmacSha256Hex(secret, `unsubscribe:v1:${messageId}`);
  return { key, hash: await sha256Hex(key) };
}

/** Local hostnames (`*.localhost`) are served by `wrangler dev` on this port, over http. */
const LOCAL_STOREFRONT_PORT = 8788;

/** Where a shopper reaches the store: its primary verified hostname (else its first verified one), or null. */
export async function storefrontBase(tx: StoreTx): Promise<string | null> {
  const { rows } = await tx.$client.query<{ hostname: string }>(
    "select hostname from store_domain where store_id = $1 and status = 'verified' order by is_primary desc, hostname limit 1",
    [tx.storeId],
  );
  const host = rows[0]?.hostname;
  if (!host) return null;
  return host.endsWith(".localhost") || host === "localhost" ? `http://${host}:${LOCAL_STOREFRONT_PORT}` : `https://${host}`;
}
