import { z } from "zod";
import { plan, type Plan } from "../db/plan";
import type { Q } from "../db/steps";
import { generateSigningKey, openPrivateKey, sealPrivateKey, type PublicJwk, type SigningKey } from "./keys";
import { currentSigningKey, insertSigningKey, publishedSigningKeys, retireSigningKey } from "./statements";

/**
 * A store's UCP signing keys over time (migration 0052): one key signs; rotating makes a new one and keeps the
 * replaced key published for KEY_GRACE_DAYS, so agents that cached the profile still verify what the store
 * signed with it (the specification's rotation: at least 7 days). Private halves are sealed under the
 * deployment's UCP_SIGNING_ROOT_SECRET, per store and key.
 */
export const KEY_GRACE_DAYS = 7;

/** Development and test values of UCP_SIGNING_ROOT_SECRET start with this; production refuses them. */
const LOCAL_PREFIX = "local-ucp-";

export interface UcpSigningConfig {
  rootSecret: string;
}

const EnvSchema = z.object({
  APP_ENV: z.string().optional(),
  UCP_SIGNING_ROOT_SECRET: z
    .string({ error: "is required (32 characters or more; in production: wrangler secret put UCP_SIGNING_ROOT_SECRET)" })
    .min(32, { error: "must be at least 32 characters" }),
});

/** The signing configuration from the Worker's env; throws naming the variable and what to do. */
export function ucpSigningFromEnv(env: Record<string, unknown>): UcpSigningConfig {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`UCP signing: ${String(issue.path[0])}: ${issue.message}`);
  }
  const local = parsed.data.APP_ENV === "development" || parsed.data.APP_ENV === "test";
  if (!local && parsed.data.UCP_SIGNING_ROOT_SECRET.startsWith(LOCAL_PREFIX)) {
    throw new Error("UCP signing: UCP_SIGNING_ROOT_SECRET: the development value must not be used in production");
  }
  return { rootSecret: parsed.data.UCP_SIGNING_ROOT_SECRET };
}

/** A new key for the store, made and sealed before its unit (the unit stores it). */
export interface NewStoreKey {
  kid: string;
  publicJwk: PublicJwk;
  sealed: string;
}

export async function newStoreKey(config: UcpSigningConfig, storeId: string): Promise<NewStoreKey> {
  const { publicJwk, privateJwk } = await generateSigningKey();
  return { kid: publicJwk.kid, publicJwk, sealed: await sealPrivateKey(config.rootSecret, storeId, publicJwk.kid, privateJwk) };
}

/** The unit's store signs with `key` from now on; its previous key stays published KEY_GRACE_DAYS. */
export function rotateKeyPlan(q: Q, key: NewStoreKey): Plan<{ kid: string }> {
  return plan([retireSigningKey(q, KEY_GRACE_DAYS), insertSigningKey(q, { kid: key.kid, publicJwk: { ...key.publicJwk }, sealed: key.sealed })] as const, ([, [row]]) => ({ kid: row!.kid }));
}

/** The keys the unit's store publishes (its profile's `keys`), the signing key first. */
export function publishedKeysPlan(q: Q): Plan<PublicJwk[]> {
  return plan([publishedSigningKeys(q)] as const, ([rows]) => rows.map((r) => r.public_jwk));
}

/** The unit's store's signing key, still sealed; undefined when it has none yet. */
export function signingKeyPlan(q: Q): Plan<{ kid: string; sealed: string } | undefined> {
  return plan([currentSigningKey(q)] as const, ([[row]]) => (row ? { kid: row.kid, sealed: row.private_sealed } : undefined));
}

/** The signing key, opened for use (never kept beyond the request that signs). */
export function openStoreKey(config: UcpSigningConfig, storeId: string, key: { kid: string; sealed: string }): Promise<SigningKey> {
  return openPrivateKey(config.rootSecret, storeId, key.kid, key.sealed);
}
