import type { RateLimiter } from "./rate-limiter";
import { checkDoorPolicy, countThrough, peekThrough, type DoorKey, type DoorOutcome, type DoorPolicy } from "./doors";

/**
 * The shopper's writes and their limits, in one table (docs/decisions/0019-shopper-limits-and-challenge.md
 * gives the reasoning for each number). Each door is counted per client address (./address.ts) and per
 * store, before any database work: the store is known by the request's hostname, which needs no lookup, so
 * even a request for a hostname the HOSTS cache does not hold yet is refused without reaching the database.
 */
export type ShopperDoor = "cart" | "discount" | "checkout" | "payment" | "notify" | "emailLink";

const MINUTE = 60_000;

function per(windowMs: number): string {
  if (windowMs % 3_600_000 === 0) return windowMs === 3_600_000 ? "hour" : `${windowMs / 3_600_000} hours`;
  if (windowMs % MINUTE === 0) return windowMs === MINUTE ? "minute" : `${windowMs / MINUTE} minutes`;
  return `${windowMs / 1000} seconds`;
}

function policies(noun: string, address: Omit<DoorPolicy, "name" | "what">, store: Omit<DoorPolicy, "name" | "what">) {
  return {
    address: checkDoorPolicy({ ...address, name: "address", what: `${noun} per ${per(address.windowMs)} from one address` }),
    store: checkDoorPolicy({ ...store, name: "store", what: `${noun} per ${per(store.windowMs)} at this store` }),
  };
}

export const SHOPPER_LIMITS: Record<ShopperDoor, { address: DoorPolicy; store: DoorPolicy }> = {
  // Cart creation, lines added, changed and removed, a code dropped: one round trip each, no stock held.
  cart: policies("cart changes", { limit: 300, windowMs: MINUTE }, { limit: 1000, windowMs: 10_000 }),
  // Discount code attempts, right or wrong (wrong ones are also counted on their own, below).
  discount: policies("discount code attempts", { limit: 60, windowMs: 10 * MINUTE }, { limit: 1000, windowMs: 10_000 }),
  // Orders placed (API and form): each holds stock, so past a few the shopper shows a person is there.
  checkout: policies("checkouts", { limit: 30, windowMs: 10 * MINUTE, challengeAfter: 3 }, { limit: 1800, windowMs: 10 * MINUTE, challengeAfter: 60 }),
  // A new payment attempt for an order, the gateway's return, the local gateway's page.
  payment: policies("payment attempts", { limit: 30, windowMs: 10 * MINUTE }, { limit: 1800, windowMs: 10 * MINUTE }),
  // "Email me when it is back" posts.
  notify: policies("back-in-stock sign-ups", { limit: 10, windowMs: 10 * MINUTE }, { limit: 600, windowMs: 10 * MINUTE }),
  // The links in emails: unsubscribing (a mail provider's one-click posts come from its few servers) and
  // confirming marketing consent.
  emailLink: policies("email link posts", { limit: 120, windowMs: MINUTE }, { limit: 1000, windowMs: MINUTE }),
};

/** Wrong discount codes, counted apart so that guessing codes is slow: a shopper mistypes one or two. */
export const FAILED_CODE_LIMITS = policies("wrong discount codes", { limit: 10, windowMs: 10 * MINUTE }, { limit: 300, windowMs: 60 * MINUTE });

function keysOf(name: string, limits: { address: DoorPolicy; store: DoorPolicy }, hostname: string, address: string): DoorKey[] {
  return [
    { key: `shop:${name}:address:${hostname}:${address}`, policy: limits.address },
    { key: `shop:${name}:store:${hostname}`, policy: limits.store },
  ];
}

export const shopperKeys = (door: ShopperDoor, hostname: string, address: string) => keysOf(door, SHOPPER_LIMITS[door], hostname, address);
export const failedCodeKeys = (hostname: string, address: string) => keysOf("wrong-code", FAILED_CODE_LIMITS, hostname, address);

/** Counts one shopper write at its door: refused (429), allowed, or allowed once a challenge is passed. */
export function countShopperWrite(ns: DurableObjectNamespace<RateLimiter>, door: ShopperDoor, hostname: string, address: string): Promise<DoorOutcome> {
  return countThrough(ns, shopperKeys(door, hostname, address));
}

/** Whether the next checkout from this address would need a challenge (the page shows the widget ahead). */
export async function checkoutChallengeAhead(ns: DurableObjectNamespace<RateLimiter>, hostname: string, address: string): Promise<boolean> {
  const outcome = await peekThrough(ns, shopperKeys("checkout", hostname, address));
  return !outcome.allowed || outcome.challenge;
}

/** Before a discount code is looked up: whether this address and store may still get one wrong. */
export function failedCodesLeft(ns: DurableObjectNamespace<RateLimiter>, hostname: string, address: string): Promise<DoorOutcome> {
  return peekThrough(ns, failedCodeKeys(hostname, address));
}

/** After a code was not found: counted against the address and the store. */
export async function countFailedCode(ns: DurableObjectNamespace<RateLimiter>, hostname: string, address: string): Promise<void> {
  await countThrough(ns, failedCodeKeys(hostname, address));
}
