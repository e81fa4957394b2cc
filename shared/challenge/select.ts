/**
 * Which challenge the deployment uses, from the Worker's configuration (wrangler vars and `wrangler secret
 * put`; docs/decisions/0019-shopper-limits-and-challenge.md):
 * - `CHALLENGE=local` (the default, as `npm run dev` wants): Turnstile's test keys answered locally; refused
 *   unless APP_ENV is development or test. TURNSTILE_SITE_KEY and TURNSTILE_SECRET_KEY default to the keys
 *   that always pass; set them to the other test keys to see a widget that blocks or a check that fails.
 * - `CHALLENGE=turnstile`: Cloudflare Turnstile with the widget's TURNSTILE_SITE_KEY and TURNSTILE_SECRET_KEY
 *   (the secret with `wrangler secret put`). In production the test keys are refused: they pass everyone.
 */
import { z } from "zod";
import type { FetchLike } from "#shared/core/exchange";
import type { Challenge } from "./challenge";
import { localChallenge, PASSING_SECRET_KEY, PASSING_SITE_KEY, TEST_SECRET_KEYS, TEST_SITE_KEYS } from "./local";
import { turnstileChallenge } from "./turnstile";

export type ChallengeConfig = { provider: "local" | "turnstile"; siteKey: string; secretKey: string };

const testSiteKey = z.string().refine((k) => k in TEST_SITE_KEYS, "must be one of Turnstile's test site keys with CHALLENGE=local");
const testSecretKey = z.string().refine((k) => k in TEST_SECRET_KEYS, "must be one of Turnstile's test secret keys with CHALLENGE=local");

const envSchema = z.discriminatedUnion("CHALLENGE", [
  z.object({
    CHALLENGE: z.literal("local"),
    TURNSTILE_SITE_KEY: testSiteKey.default(PASSING_SITE_KEY),
    TURNSTILE_SECRET_KEY: testSecretKey.default(PASSING_SECRET_KEY),
  }),
  z.object({
    CHALLENGE: z.literal("turnstile"),
    TURNSTILE_SITE_KEY: z.string({ error: "is required (the widget's site key, Turnstile → the widget → Settings)" }).regex(/^[0-9A-Za-z_-]{10,64}$/, "must be the widget's site key"),
    TURNSTILE_SECRET_KEY: z.string({ error: "is required (set it with wrangler secret put)" }).regex(/^[0-9A-Za-z_-]{20,128}$/, "must be the widget's secret key"),
  }),
]);

/** The deployment's challenge configuration; throws naming the variable that is missing or wrong. */
export function challengeConfigFromEnv(env: Record<string, unknown>): ChallengeConfig {
  const parsed = envSchema.safeParse({ CHALLENGE: "local", ...env });
  if (!parsed.success) {
    throw new Error(`Challenge configuration: ${parsed.error.issues.map((i) => `${i.path.join(".") || "CHALLENGE"}: ${i.message}`).join("; ")}`);
  }
  const e = parsed.data;
  const production = env.APP_ENV !== "development" && env.APP_ENV !== "test";
  // The local challenge passes whoever holds the dummy token: a production deployment that fell back to it
  // would have no challenge at all. APP_ENV defaults to production (shared/core/env.ts).
  if (e.CHALLENGE === "local" && production) throw new Error("Challenge configuration: CHALLENGE: the local challenge is for development and tests only");
  if (e.CHALLENGE === "turnstile" && production) {
    const test = e.TURNSTILE_SITE_KEY in TEST_SITE_KEYS ? "TURNSTILE_SITE_KEY" : e.TURNSTILE_SECRET_KEY in TEST_SECRET_KEYS ? "TURNSTILE_SECRET_KEY" : null;
    if (test) throw new Error(`Challenge configuration: ${test}: Turnstile's test keys are for development and tests only`);
  }
  return { provider: e.CHALLENGE, siteKey: e.TURNSTILE_SITE_KEY, secretKey: e.TURNSTILE_SECRET_KEY };
}

export interface ChallengeOptions {
  fetch?: FetchLike;
  /** siteverify's address, for tests against a local server. */
  url?: string;
  timeoutMs?: number;
}

export function challengeFor(config: ChallengeConfig, options: ChallengeOptions = {}): Challenge {
  if (config.provider === "local") return localChallenge(config);
  return turnstileChallenge({ siteKey: config.siteKey, secretKey: config.secretKey, ...options });
}
