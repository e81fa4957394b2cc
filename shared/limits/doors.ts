import type { RateLimiter } from "./rate-limiter";
import { giveBackHit, hit, peek } from "./limit";
import { checkPolicy, rateLimitHeaders, type LimitDecision, type LimitPolicy } from "./window";

/**
 * A door's limit on one key (an address, a network, a store): past `limit` requests in the window the next
 * is refused with 429; past `challengeAfter` (a count in the same window, below the limit) each further
 * request must carry a passed challenge (docs/decisions/0019-shopper-limits-and-challenge.md). An address's
 * key counts every request (`countThrough`); a store's key counts, past its threshold, only the requests
 * that passed the challenge (`admit`), so its limit is reached by a real crowd and never by refused scripts.
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

export type DoorRefusal = { allowed: false; policy: DoorPolicy; retryAfterSeconds: number; headers: Record<string, string> };
/** Where and when a request was counted, to give it back (`giveBackAll`) when it turns out not to count. */
export type Counted = { key: string; at: number };
export type DoorOutcome = { allowed: true; challenge: boolean; headers: Record<string, string>; counted: Counted[] } | DoorRefusal;

export interface DoorKey {
  key: string;
  policy: DoorPolicy;
}

/**
 * Counts one request against each key in turn (an address's keys: the address, then its network), stopping
 * at the first that refuses it: a request its address is refused never counts against its network. Allowed,
 * it answers whether a challenge is due and the first key's RateLimit headers.
 */
export async function countThrough(ns: DurableObjectNamespace<RateLimiter>, keys: readonly DoorKey[]): Promise<DoorOutcome> {
  let challenge = false;
  let headers: Record<string, string> = {};
  const counted: Counted[] = [];
  for (const [i, { key, policy }] of keys.entries()) {
    const decision = await hit(ns, key, policy);
    if (!decision.allowed) return refusal(decision, policy);
    if (i === 0) headers = rateLimitHeaders(decision, policy.name);
    challenge ||= challengeDue(decision, policy);
    counted.push({ key, at: decision.at! });
  }
  return { allowed: true, challenge, headers, counted };
}

/**
 * Counts one request against a store's key, which only an address's allowed requests reach. Under the
 * threshold it is counted; past it, a request that has not `passed` a challenge is not counted and the
 * answer is `challenge: true` (ask again with `passed` once it has); a passed request is counted up to the
 * limit, which then refuses (a real overload: a refused script or a failed check never fills it).
 */
export async function admit(ns: DurableObjectNamespace<RateLimiter>, { key, policy }: DoorKey, passed: boolean): Promise<DoorOutcome> {
  const decision = await hit(ns, key, policy, 1, passed ? undefined : policy.challengeAfter);
  if (decision.held) return { allowed: true, challenge: true, headers: {}, counted: [] };
  if (!decision.allowed) return refusal(decision, policy);
  return { allowed: true, challenge: false, headers: {}, counted: [{ key, at: decision.at! }] };
}

/** A door's keys at one store. */
export interface DoorKeys {
  /** The client's: counted in turn, every request (`countThrough`). */
  address: DoorKey[];
  /** The store's: counted after them, past its threshold only with a passed challenge (`admit`). */
  store: DoorKey | null;
}

export type Passed = { allowed: true; headers: Record<string, string>; counted: Counted[] };

/**
 * Runs one request through a door's keys: the client's (a refusal there never reaches the store's), then
 * the store's. When either asks for the person check, `check` makes it: null when the person passed (the
 * caller makes it once per request, a token being spent when checked), else the caller's refusal, handed
 * back as `checkRefused` (the store's key not counted). Allowed: the client key's headers and what was
 * counted (to give back if the request turns out not to count).
 */
export async function passThrough<R>(ns: DurableObjectNamespace<RateLimiter>, keys: DoorKeys, check: () => Promise<R | null>): Promise<Passed | DoorRefusal | { allowed: false; checkRefused: R }> {
  const counted = await countThrough(ns, keys.address);
  if (!counted.allowed) return counted;
  let passed = false;
  const person = async () => {
    const refused = await check();
    passed = refused === null;
    return refused;
  };
  if (counted.challenge) {
    const refused = await person();
    if (refused !== null) return { allowed: false, checkRefused: refused };
  }
  if (!keys.store) return { allowed: true, headers: counted.headers, counted: counted.counted };
  let admitted = await admit(ns, keys.store, passed);
  if (admitted.allowed && admitted.challenge) {
    const refused = await person();
    if (refused !== null) return { allowed: false, checkRefused: refused };
    admitted = await admit(ns, keys.store, true);
  }
  if (!admitted.allowed) return admitted;
  return { allowed: true, headers: counted.headers, counted: [...counted.counted, ...admitted.counted] };
}

/** Gives back requests counted that turned out not to count (a discount code that was right, the store's password). */
export async function giveBackAll(ns: DurableObjectNamespace<RateLimiter>, counted: readonly Counted[]): Promise<void> {
  await Promise.all(counted.map(({ key, at }) => giveBackHit(ns, key, at)));
}

/** The same question without counting (keys looked at together): would one more request be refused, or need a challenge? */
export async function peekThrough(ns: DurableObjectNamespace<RateLimiter>, keys: readonly DoorKey[]): Promise<DoorOutcome> {
  const decisions = await Promise.all(keys.map(({ key, policy }) => peek(ns, key, policy)));
  const refused = decisions.findIndex((d) => !d.allowed);
  if (refused >= 0) return refusal(decisions[refused]!, keys[refused]!.policy);
  return { allowed: true, challenge: decisions.some((d, i) => challengeDue(d, keys[i]!.policy)), headers: {}, counted: [] };
}

/** Whether the next request through a door's keys would need a challenge (a page shows the widget ahead). */
export async function challengeAhead(ns: DurableObjectNamespace<RateLimiter>, { address, store }: DoorKeys): Promise<boolean> {
  const outcome = await peekThrough(ns, store ? [...address, store] : address);
  return !outcome.allowed || outcome.challenge;
}

function refusal(decision: LimitDecision, policy: DoorPolicy): DoorRefusal {
  return { allowed: false, policy, retryAfterSeconds: decision.retryAfterSeconds ?? 1, headers: rateLimitHeaders(decision, policy.name) };
}

/** "At most 300 cart changes per minute from one address. Retry after 12 s." */
export function refusalMessage(outcome: DoorRefusal): string {
  return `At most ${outcome.policy.limit} ${outcome.policy.what}. Retry after ${outcome.retryAfterSeconds} s.`;
}
