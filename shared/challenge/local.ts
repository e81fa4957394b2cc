/**
 * The local challenge (development and tests only; ./select.ts refuses it elsewhere): Turnstile's published
 * test keys (developers.cloudflare.com/turnstile/troubleshooting/testing), answered here as siteverify
 * answers them, with no network. A test site key's widget passes (its token is the dummy token
 * `XXXX.DUMMY.TOKEN.XXXX`), always fails (no token), or asks the visitor to act; a test secret key accepts
 * only the dummy token, always fails, or says the token was already spent.
 */
import { tokenShape, type Challenge, type ChallengeVerdict } from "./challenge";

export const DUMMY_TOKEN = "XXXX.DUMMY.TOKEN.XXXX";

export type LocalWidgetBehaviour = "passes" | "blocks" | "interactive";
export type LocalSecretBehaviour = "passes" | "fails" | "spent";

export const TEST_SITE_KEYS: Record<string, LocalWidgetBehaviour> = {
  "1x00000000000000000000AA": "passes",
  "1x00000000000000000000BB": "passes",
  "2x00000000000000000000AB": "blocks",
  "2x00000000000000000000BB": "blocks",
  "3x00000000000000000000FF": "interactive",
};

export const TEST_SECRET_KEYS: Record<string, LocalSecretBehaviour> = {
  "1x0000000000000000000000000000000AA": "passes",
  "2x0000000000000000000000000000000AA": "fails",
  "3x0000000000000000000000000000000AA": "spent",
};

/** The test keys `npm run dev` and the tests use unless told otherwise: the widget and the check both pass. */
export const PASSING_SITE_KEY = "1x00000000000000000000AA";
export const PASSING_SECRET_KEY = "1x0000000000000000000000000000000AA";

export function localChallenge(config: { siteKey: string; secretKey: string }): Challenge {
  const secret = TEST_SECRET_KEYS[config.secretKey];
  if (!TEST_SITE_KEYS[config.siteKey] || !secret) throw new RangeError("the local challenge takes only Turnstile's test keys");
  return {
    widget: { provider: "local", siteKey: config.siteKey },
    async verify(token): Promise<ChallengeVerdict> {
      const shape = tokenShape(token);
      if (shape !== "ok") return shape;
      if (secret === "spent") return { passed: false, reason: "expired", codes: ["timeout-or-duplicate"] };
      // A test secret accepts only the dummy token (and rejects real ones), as siteverify does.
      if (secret === "fails" || token !== DUMMY_TOKEN) return { passed: false, reason: "failed", codes: ["invalid-input-response"] };
      return { passed: true };
    },
  };
}
