import type { RateLimiter } from "./rate-limiter";
import { AppError } from "../http/errors";
import { checkPolicy, rateLimitHeaders, type LimitDecision, type LimitPolicy } from "./window";

export const API_POLICY: LimitPolicy = { limit: 120, windowMs: 60_000 };

/**
 * Counts one request against the limiter of `key` (e.g. `grant:<id>`, `ip:register:<ip>`). The policy is
 * checked here, before the call, so a programming error fails in the caller and not inside the object.
 */
export async function hit(ns: DurableObjectNamespace<RateLimiter>, key: string, policy: LimitPolicy, cost = 1): Promise<LimitDecision> {
  checkPolicy(policy);
  return ns.get(ns.idFromName(key)).check(policy, cost);
}

/** Whether one more request under `key` would be allowed, without counting it. */
export async function peek(ns: DurableObjectNamespace<RateLimiter>, key: string, policy: LimitPolicy): Promise<LimitDecision> {
  checkPolicy(policy);
  return ns.get(ns.idFromName(key)).peek(policy);
}

/**
 * Counts one request and refuses it with 429 (Retry-After and the RateLimit headers) when over the
 * policy; otherwise answers the headers to add to the response. `what` ends the message: "page views
 * per 60 s from one address".
 */
export async function enforce(ns: DurableObjectNamespace<RateLimiter>, key: string, policy: LimitPolicy, what: string): Promise<Record<string, string>> {
  const decision = await hit(ns, key, policy);
  const headers = rateLimitHeaders(decision);
  if (!decision.allowed) {
    const wait = decision.retryAfterSeconds ?? 1;
    throw new AppError("TOO_MANY_REQUESTS", `At most ${decision.limit} ${what}. Retry after ${wait} s.`, { retryAfterSeconds: wait }, headers);
  }
  return headers;
}
