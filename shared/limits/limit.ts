import type { RateLimiter } from "./rate-limiter";
import { AppError } from "../core/errors";
import { clientOf, NETWORK_FACTOR } from "./address";
import { checkPolicy, rateLimitHeaders, type LimitDecision, type LimitPolicy } from "./window";

export const API_POLICY: LimitPolicy = { limit: 120, windowMs: 60_000 };

/**
 * Counts one request against the limiter of `key` (e.g. `grant:<id>`, `ip:register:<ip>`). The policy is
 * checked here, before the call, so a programming error fails in the caller and not inside the object.
 * With `hold`, the request is not counted past that many either (`held`, see `decide` in ./window.ts).
 */
export async function hit(ns: DurableObjectNamespace<RateLimiter>, key: string, policy: LimitPolicy, cost = 1, hold?: number): Promise<LimitDecision> {
  checkPolicy(policy);
  return ns.get(ns.idFromName(key)).check(policy, cost, hold);
}

/** Takes back a request `hit` counted at `at` (its decision's `at`); a request already out of the window is left alone. */
export async function giveBackHit(ns: DurableObjectNamespace<RateLimiter>, key: string, at: number): Promise<void> {
  await ns.get(ns.idFromName(key)).giveBack(at);
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
  return refuseOver(await hit(ns, key, policy), what);
}

/**
 * Counts one request per client (./address.ts), in turn: its address (IPv4, or IPv6 by its /64) under
 * `<key>:<address>`, then for IPv6 its /48 under `<key>:<network>` with NETWORK_FACTOR times the limit (a
 * tunnel broker hands out /48s for free). Answers the first refusal (`by` says which key), else the address's decision.
 */
export async function hitClient(ns: DurableObjectNamespace<RateLimiter>, key: string, ipHeader: string | null | undefined, policy: LimitPolicy): Promise<{ decision: LimitDecision; by: "address" | "network" }> {
  const { address, network } = clientOf(ipHeader);
  const decision = await hit(ns, `${key}:${address}`, policy);
  if (!decision.allowed || !network) return { decision, by: "address" };
  const wide = await hit(ns, `${key}:${network}`, { ...policy, limit: policy.limit * NETWORK_FACTOR });
  return wide.allowed ? { decision, by: "address" } : { decision: wide, by: "network" };
}

/** `enforce` per client (`hitClient`): `what` is completed with "from one address" or "from one IPv6 /48 network". */
export async function enforceClient(ns: DurableObjectNamespace<RateLimiter>, key: string, ipHeader: string | null | undefined, policy: LimitPolicy, what: string): Promise<Record<string, string>> {
  const { decision, by } = await hitClient(ns, key, ipHeader, policy);
  return refuseOver(decision, `${what} ${by === "address" ? "from one address" : "from one IPv6 /48 network"}`);
}

/** The RateLimit headers of an allowed decision; a refused one is thrown as 429 with them and Retry-After. */
function refuseOver(decision: LimitDecision, what: string): Record<string, string> {
  const headers = rateLimitHeaders(decision);
  if (!decision.allowed) {
    const wait = decision.retryAfterSeconds ?? 1;
    throw new AppError("TOO_MANY_REQUESTS", `At most ${decision.limit} ${what}. Retry after ${wait} s.`, { retryAfterSeconds: wait }, headers);
  }
  return headers;
}

/**
 * The store's assistant: messages one member may send a minute in one store, counted before any model call
 * (issue 24 item 5). Ten a minute is more than a person types and reads; a script that loops a
 * conversation is refused after them with 429 and Retry-After.
 */
export const ASSISTANT_MESSAGE_POLICY: LimitPolicy = { limit: 10, windowMs: 60_000 };

/** Counts one message of `userId` in `storeId`'s assistant; throws the 429 past the policy. */
export function countAssistantMessage(ns: DurableObjectNamespace<RateLimiter>, storeId: string, userId: string): Promise<Record<string, string>> {
  return enforce(ns, `assistant:${storeId}:${userId}`, ASSISTANT_MESSAGE_POLICY, "assistant messages per minute from one member");
}
