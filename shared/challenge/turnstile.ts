/**
 * Cloudflare Turnstile's siteverify (developers.cloudflare.com/turnstile/get-started/server-side-validation):
 * `POST https://challenges.cloudflare.com/turnstile/v0/siteverify` with `secret`, `response` (the token),
 * `remoteip` and `idempotency_key` (JSON or a form; the answer is always JSON). It answers
 * `{success, "error-codes": [...], challenge_ts?, hostname?, action?, cdata?}`. A token is valid for 300 s
 * and may be verified once; a retry of the same check must carry the same idempotency key, so a check that
 * failed on the way (no answer, a 5xx, `internal-error`) is sent once more with it.
 *
 * Error codes: missing-input-response → missing; timeout-or-duplicate → expired; invalid-input-response
 * (or any code we do not know) → failed; missing-/invalid-input-secret and bad-request mean our request or
 * our secret is wrong: a ChallengeError("misconfigured"), never the shopper's fault.
 */
import { z } from "zod";
import { exchangeJson, type FetchLike } from "#shared/core/exchange";
import { ChallengeError, tokenShape, type Challenge, type ChallengeVerdict } from "./challenge";

export const SITEVERIFY_URL = "https://challenges.cloudflare.com/turnstile/v0/siteverify";
/** The widget's script; the page loads it from exactly this address (Cloudflare asks that it is not proxied). */
export const TURNSTILE_SCRIPT = "https://challenges.cloudflare.com/turnstile/v0/api.js";

const answer = z.object({ success: z.boolean(), "error-codes": z.array(z.string()).default([]) });
const OURS = new Set(["missing-input-secret", "invalid-input-secret", "bad-request"]);

export interface TurnstileConfig {
  siteKey: string;
  secretKey: string;
  /** Default Cloudflare's endpoint; tests point it at a local server speaking the same API. */
  url?: string;
  fetch?: FetchLike;
  /** Per attempt; default 3 000. */
  timeoutMs?: number;
}

export function turnstileChallenge(config: TurnstileConfig): Challenge {
  const url = config.url ?? SITEVERIFY_URL;
  const timeoutMs = config.timeoutMs ?? 3_000;
  const unavailable = (message: string) => new ChallengeError("unavailable", message);
  const exchange = {
    fetch: config.fetch ?? ((input: string, init: RequestInit) => fetch(input, init)),
    timeoutMs,
    timeout: () => unavailable(`Turnstile siteverify did not answer within ${timeoutMs} ms`),
    unreachable: (message: string) => unavailable(`Turnstile siteverify could not be reached: ${message}`),
  };

  /** One siteverify call: a verdict, or "retry" for a failure on the way that the same key may repeat. */
  async function once(body: string): Promise<ChallengeVerdict | "retry"> {
    const { response, body: json } = await exchangeJson(exchange, url, { method: "POST", headers: { "content-type": "application/json" }, body });
    if (response.status >= 500 || response.status === 429) return "retry";
    const parsed = answer.safeParse(json);
    if (!parsed.success) throw unavailable(`Turnstile siteverify answered ${response.status} without its JSON`);
    const codes = parsed.data["error-codes"];
    if (parsed.data.success) return { passed: true };
    if (codes.includes("internal-error")) return "retry";
    const ours = codes.find((code) => OURS.has(code));
    if (ours) throw new ChallengeError("misconfigured", `Turnstile siteverify refused our request (${ours}): check TURNSTILE_SECRET_KEY`);
    if (codes.includes("missing-input-response")) return { passed: false, reason: "missing", codes };
    if (codes.includes("timeout-or-duplicate")) return { passed: false, reason: "expired", codes };
    return { passed: false, reason: "failed", codes };
  }

  return {
    widget: { provider: "turnstile", siteKey: config.siteKey },
    async verify(token, remoteIp) {
      const shape = tokenShape(token);
      if (shape !== "ok") return shape;
      const body = JSON.stringify({
        secret: config.secretKey,
        response: token,
        ...(remoteIp ? { remoteip: remoteIp } : {}),
        idempotency_key: crypto.randomUUID(),
      });
      for (let attempt = 1; ; attempt++) {
        let outcome: ChallengeVerdict | "retry";
        try {
          outcome = await once(body);
        } catch (e) {
          if (attempt < 2 && e instanceof ChallengeError && e.kind === "unavailable") continue;
          throw e;
        }
        if (outcome !== "retry") return outcome;
        if (attempt >= 2) throw unavailable("Turnstile siteverify failed twice (a server error or internal-error)");
      }
    },
  };
}
