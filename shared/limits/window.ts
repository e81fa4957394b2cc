/**
 * Sliding-log rate limiting: the pure arithmetic behind the RateLimiter Durable Object.
 * The log holds the times of accepted requests still inside the window, oldest first; it never grows
 * past `limit` entries, so the state of one limiter stays small (120 numbers for the API limit).
 */
export interface LimitPolicy {
  /** Requests allowed per window. */
  limit: number;
  /** Window length in milliseconds (rolling). */
  windowMs: number;
}

export interface LimitDecision {
  allowed: boolean;
  limit: number;
  windowSeconds: number;
  /** Requests still allowed right now, after this one. */
  remaining: number;
  /** Seconds until the oldest counted request leaves the window and frees one unit (0 when none counted). */
  resetSeconds: number;
  /** Set when refused: whole seconds to wait before a retry can succeed (at least 1). */
  retryAfterSeconds?: number;
}

export function checkPolicy(policy: LimitPolicy): void {
  if (!Number.isInteger(policy.limit) || policy.limit < 1 || policy.limit > 100_000) {
    throw new RangeError("limit must be an integer between 1 and 100000");
  }
  if (!Number.isInteger(policy.windowMs) || policy.windowMs < 1_000 || policy.windowMs > 86_400_000) {
    throw new RangeError("windowMs must be an integer between 1000 and 86400000");
  }
}

export function decide(log: readonly number[], now: number, policy: LimitPolicy): { decision: LimitDecision; log: number[] } {
  const since = now - policy.windowMs;
  const live = log.filter((t) => t > since && t <= now);
  // A clock that stepped backwards could leave entries "in the future"; keep them counted, not lost.
  const future = log.filter((t) => t > now);
  const kept = [...live, ...future].slice(-policy.limit);
  const windowSeconds = Math.ceil(policy.windowMs / 1000);
  const secondsUntilFree = (entries: number[]) =>
    entries.length === 0 ? 0 : Math.max(1, Math.ceil((entries[0]! + policy.windowMs - now) / 1000));

  if (kept.length < policy.limit) {
    const next = [...kept, now];
    return {
      decision: {
        allowed: true,
        limit: policy.limit,
        windowSeconds,
        remaining: policy.limit - next.length,
        resetSeconds: secondsUntilFree(next),
      },
      log: next,
    };
  }
  const wait = secondsUntilFree(kept);
  return {
    decision: { allowed: false, limit: policy.limit, windowSeconds, remaining: 0, resetSeconds: wait, retryAfterSeconds: wait },
    log: kept,
  };
}

/** RateLimit-Policy / RateLimit headers (IETF httpapi ratelimit-headers draft) and Retry-After on refusal. */
export function rateLimitHeaders(decision: LimitDecision, policyName = "default"): Record<string, string> {
  const headers: Record<string, string> = {
    "RateLimit-Policy": `"${policyName}";q=${decision.limit};w=${decision.windowSeconds}`,
    RateLimit: `"${policyName}";r=${decision.remaining};t=${decision.resetSeconds}`,
  };
  if (!decision.allowed) headers["Retry-After"] = String(decision.retryAfterSeconds ?? 1);
  return headers;
}
