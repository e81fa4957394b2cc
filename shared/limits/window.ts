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
  /**
   * Set when not counted only because the window already holds `hold` requests (below the limit): the
   * request may be counted once it shows more, e.g. a passed challenge (docs/decisions/0019).
   */
  held?: boolean;
  /** Set when counted: the time the request was logged at, to give it back (`giveBack`) if it turns out not to count. */
  at?: number;
}

export function checkPolicy(policy: LimitPolicy): void {
  if (!Number.isInteger(policy.limit) || policy.limit < 1 || policy.limit > 100_000) {
    throw new RangeError("limit must be an integer between 1 and 100000");
  }
  if (!Number.isInteger(policy.windowMs) || policy.windowMs < 1_000 || policy.windowMs > 86_400_000) {
    throw new RangeError("windowMs must be an integer between 1000 and 86400000");
  }
}

/**
 * Counts `cost` requests at `now` when they all fit in the window, or none of them (a batch is all or
 * nothing). A refusal says how long until `cost` units are free. With `hold` below the limit, requests
 * that would take the window past `hold` are not counted either, but `held` rather than refused: past a
 * store's challenge threshold only requests that passed the challenge count (they are asked again without
 * `hold`). A window at its limit refuses, held or not.
 */
export function decide(log: readonly number[], now: number, policy: LimitPolicy, cost = 1, hold = policy.limit): { decision: LimitDecision; log: number[] } {
  if (!Number.isInteger(cost) || cost < 1 || cost > policy.limit) throw new RangeError("cost must be an integer between 1 and the policy's limit");
  if (!Number.isInteger(hold) || hold < 0 || hold > policy.limit) throw new RangeError("hold must be an integer between 0 and the policy's limit");
  const since = now - policy.windowMs;
  const live = log.filter((t) => t > since && t <= now);
  // A clock that stepped backwards could leave entries "in the future"; keep them counted, not lost.
  const future = log.filter((t) => t > now);
  const kept = [...live, ...future].slice(-policy.limit);
  const windowSeconds = Math.ceil(policy.windowMs / 1000);
  const secondsUntil = (t: number | undefined) => (t === undefined ? 0 : Math.max(1, Math.ceil((t + policy.windowMs - now) / 1000)));

  if (kept.length + cost <= policy.limit && kept.length + cost > hold) {
    const decision = { allowed: false, held: true, limit: policy.limit, windowSeconds, remaining: policy.limit - kept.length, resetSeconds: secondsUntil(kept[0]) };
    return { decision, log: kept };
  }
  if (kept.length + cost <= policy.limit) {
    const next = [...kept, ...Array<number>(cost).fill(now)];
    return {
      decision: {
        allowed: true,
        limit: policy.limit,
        windowSeconds,
        remaining: policy.limit - next.length,
        resetSeconds: secondsUntil(next[0]),
        at: now,
      },
      log: next,
    };
  }
  // The oldest entries that must leave the window before `cost` units fit.
  const wait = secondsUntil(kept[kept.length + cost - policy.limit - 1]);
  return {
    decision: { allowed: false, limit: policy.limit, windowSeconds, remaining: Math.max(0, policy.limit - kept.length), resetSeconds: secondsUntil(kept[0]), retryAfterSeconds: wait },
    log: kept,
  };
}

/** The log without one request counted at `at` (it turned out not to count, e.g. a discount code that was right). */
export function giveBack(log: readonly number[], at: number): number[] {
  const i = log.lastIndexOf(at);
  return i < 0 ? [...log] : [...log.slice(0, i), ...log.slice(i + 1)];
}

/** RateLimit-Policy / RateLimit headers (IETF httpapi ratelimit-headers draft) and Retry-After on refusal. */
export function rateLimitHeaders(decision: LimitDecision, policyName = "default"): Record<string, string> {
  const headers: Record<string, string> = {
    "RateLimit-Policy": `"${policyName}";q=${decision.limit};w=${decision.windowSeconds}`,
    RateLimit: `"${policyName}";r=${decision.remaining};t=${decision.resetSeconds}`,
  };
  if (!decision.allowed && !decision.held) headers["Retry-After"] = String(decision.retryAfterSeconds ?? 1);
  return headers;
}
