import type { RateLimiter } from "./rate-limiter";
import { hit, peek } from "./limit";
import { checkPolicy, rateLimitHeaders, type LimitDecision, type LimitPolicy } from "./window";

/**
 * A door's limit on one key (an address, a store): past `limit` requests in the window the next is refused
 * with 429; past `challengeAfter` (a count in the same window, below the limit) each further request must
 * carry a passed challenge (docs/decisions/0019-shopper-limits-and-challenge.md).
 */
export interface DoorPolicy extends LimitPolicy {
  /** The RateLimit-Policy name of the key: "address", "store", "account". */
  name: string;
  /** How the refusal names what is counted: "cart changes per minute from one address". */
  what: string;
  challengeAfter?: number;
}

export function checkDoorPolicy(policy: DoorPolicy): DoorPolicy {
  checkPolicy(policy);
  const after = policy.challengeAfter;
  if (after !== undefined && (!Number.isInteger(after) || after < 0 || after >= policy.limit)) {
    throw new RangeError("challengeAfter must be an integer from 0 to below the limit");
  }
  return policy;
}

/**
 * Whether a request must carry a passed challenge, from its key's decision: the window holds more than
 * `challengeAfter` requests with this one (a `hit`), or would with the next one (a `peek`, which counts the
 * request it asks about; a full window counts as over).
 */
export function challengeDue(decision: LimitDecision, policy: DoorPolicy): boolean {
  return policy.challengeAfter !== undefined && decision.limit - decision.remaining > policy.challengeAfter;
}

export type DoorOutcome =
  | { allowed: true; challenge: boolean; headers: Record<string, string> }
  | { allowed: false; policy: DoorPolicy; retryAfterSeconds: number; headers: Record<string, string> };

export interface DoorKey {
  key: string;
  policy: DoorPolicy;
}

/**
 * Counts one request against each key in turn, stopping at the first that refuses it: a request one
 * address is refused never counts against the store, so a single script cannot spend the store's budget.
 * Allowed, it answers whether a challenge is due and the first key's RateLimit headers.
 */
export async function countThrough(ns: DurableObjectNamespace<RateLimiter>, keys: readonly DoorKey[]): Promise<DoorOutcome> {
  let challenge = false;
  let headers: Record<string, string> = {};
  for (const [i, { key, policy }] of keys.entries()) {
    const decision = await hit(ns, key, policy);
    if (!decision.allowed) return refusal(decision, policy);
    if (i === 0) headers = rateLimitHeaders(decision, policy.name);
    challenge ||= challengeDue(decision, policy);
  }
  return { allowed: true, challenge, headers };
}

/** The same question without counting (keys looked at together): would one more request be refused, or need a challenge? */
export async function peekThrough(ns: DurableObjectNamespace<RateLimiter>, keys: readonly DoorKey[]): Promise<DoorOutcome> {
  const decisions = await Promise.all(keys.map(({ key, policy }) => peek(ns, key, policy)));
  const refused = decisions.findIndex((d) => !d.allowed);
  if (refused >= 0) return refusal(decisions[refused]!, keys[refused]!.policy);
  return { allowed: true, challenge: decisions.some((d, i) => challengeDue(d, keys[i]!.policy)), headers: {} };
}

function refusal(decision: LimitDecision, policy: DoorPolicy): DoorOutcome {
  return { allowed: false, policy, retryAfterSeconds: decision.retryAfterSeconds ?? 1, headers: rateLimitHeaders(decision, policy.name) };
}

/** "At most 300 cart changes per minute from one address. Retry after 12 s." */
export function refusalMessage(outcome: Extract<DoorOutcome, { allowed: false }>): string {
  return `At most ${outcome.policy.limit} ${outcome.policy.what}. Retry after ${outcome.retryAfterSeconds} s.`;
}
