import type { RateLimiter } from "./rate-limiter";
import { checkPolicy, type LimitDecision, type LimitPolicy } from "./window";

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
