import { NETWORK_FACTOR, type Client } from "./address";
import { checkDoorPolicy, type DoorKey, type DoorKeys, type DoorPolicy } from "./doors";

/**
 * The shopper's writes (and the PDFs of their tax documents) and their limits, in one table (docs/decisions/0019-shopper-limits-and-challenge.md
 * gives the reasoning for each number). Each door is counted per client address and IPv6 /48 (./address.ts)
 * and, where it has a store key, per store, before any database work: the store is known by the request's
 * hostname, which needs no lookup, so even a request for a hostname the HOSTS cache does not hold yet is
 * refused without reaching the database.
 */
export type ShopperDoor = "cart" | "discount" | "checkout" | "payment" | "notify" | "emailLink" | "document" | "suggest" | "mcp" | "ucp" | "ucpProfile";

const MINUTE = 60_000;

function per(windowMs: number): string {
  if (windowMs % 3_600_000 === 0) return windowMs === 3_600_000 ? "hour" : `${windowMs / 3_600_000} hours`;
  if (windowMs % MINUTE === 0) return windowMs === MINUTE ? "minute" : `${windowMs / MINUTE} minutes`;
  return `${windowMs / 1000} seconds`;
}

/**
 * A door's keys: every request per address and, for IPv6, per /48 network; a store's key where the door
 * has one, which past its threshold asks for a challenge instead of refusing (`admit` in ./doors.ts).
 */
export interface DoorLimits {
  address: DoorPolicy;
  network: DoorPolicy;
  store: DoorPolicy | null;
}

type Numbers = Omit<DoorPolicy, "name" | "what">;

/** A door's policies from an address's numbers (its /48's follow) and the store's, if it has a store key. */
function limits(noun: string, address: Numbers, store?: Numbers & { challengeAfter: number }, storeNoun = noun): DoorLimits {
  const network = { ...address, limit: address.limit * NETWORK_FACTOR, ...(address.challengeAfter === undefined ? {} : { challengeAfter: address.challengeAfter * NETWORK_FACTOR }) };
  return {
    address: checkDoorPolicy({ ...address, name: "address", what: `${noun} per ${per(address.windowMs)} from one address` }),
    network: checkDoorPolicy({ ...network, name: "network", what: `${noun} per ${per(network.windowMs)} from one IPv6 /48 network` }),
    store: store ? checkDoorPolicy({ ...store, name: "store", what: `${storeNoun} per ${per(store.windowMs)} at this store` }) : null,
  };
}

export const SHOPPER_LIMITS: Record<ShopperDoor, DoorLimits> = {
  // Cart creation, lines added, changed and removed, a code dropped: one round trip each, no stock held.
  // No store key: a cart change cannot carry a challenge, and a ceiling would close every shopper's cart.
  cart: limits("cart changes", { limit: 300, windowMs: MINUTE }),
  // Discount code attempts, right or wrong (wrong ones are also counted on their own, below).
  discount: limits("discount code attempts", { limit: 60, windowMs: 10 * MINUTE }),
  // Orders placed (API and form): each holds stock, so past a few the shopper shows a person is there.
  checkout: limits("checkouts", { limit: 30, windowMs: 10 * MINUTE, challengeAfter: 3 }, { limit: 1800, windowMs: 10 * MINUTE, challengeAfter: 60 }),
  // A new payment attempt for an order, the gateway's return, the local gateway's page: no challenge fits
  // a gateway's return, so no store key either.
  payment: limits("payment attempts", { limit: 30, windowMs: 10 * MINUTE }),
  // "Email me when it is back" posts (a form: past the store's threshold it carries the check).
  notify: limits("back-in-stock sign-ups", { limit: 10, windowMs: 10 * MINUTE }, { limit: 1800, windowMs: 10 * MINUTE, challengeAfter: 600 }),
  // The links in emails: unsubscribing (a mail provider's one-click posts come from its few servers, which
  // cannot pass a challenge: no store key) and confirming marketing consent.
  emailLink: limits("email link posts", { limit: 120, windowMs: MINUTE }),
  // Not a write, but the storefront's most expensive read: a tax invoice's or credit note's PDF is made on
  // each request (tens of milliseconds of CPU). A shopper downloads a few; a loop is refused before any work.
  document: limits("tax document PDFs", { limit: 60, windowMs: 10 * MINUTE }),
  // Search suggestions as the shopper types (a read per keystroke pause): a person types a few dozen a
  // minute; a script walking the catalogue through them is refused before any database work.
  suggest: limits("search suggestions", { limit: 120, windowMs: MINUTE }),
  // The Storefront MCP (docs/storefront-mcp.md): one JSON-RPC message per POST, a search or a cart change
  // each. An agent shopping for a person makes a few calls a minute; a script walking the catalogue through
  // it is refused before any database work. No store key: an agent cannot pass a person check.
  mcp: limits("Storefront MCP calls", { limit: 60, windowMs: MINUTE }),
  // UCP checkout sessions (docs/ucp.md): create, read, update, cancel. An agent checking out for a person
  // makes a handful; a script is refused before any database work. No store key: an agent cannot pass a check.
  ucp: limits("UCP checkout session calls", { limit: 60, windowMs: MINUTE }),
  // The store's UCP profile (`/.well-known/ucp`, a read): an agent fetches it once and keeps it for minutes
  // (its Cache-Control); a loop is refused before any database work. No store key: agents cannot pass a check.
  ucpProfile: limits("UCP profile reads", { limit: 60, windowMs: MINUTE }),
};

/**
 * Code attempts not (yet) proven right, counted apart before the code is looked up and given back when it
 * was right, so guessing codes is slow however many guesses race: a shopper mistypes one or two. Past the
 * store's threshold every code attempt at the store carries the check.
 */
export const WRONG_CODE_LIMITS = limits("wrong discount codes", { limit: 10, windowMs: 10 * MINUTE }, { limit: 3000, windowMs: 60 * MINUTE, challengeAfter: 300 });

/**
 * The storefront password form (it guards the pages and selling): every attempt per address, wrong ones per
 * store (counted before the password is checked, given back when it was right), a check past either
 * threshold, as sign-in has. Keyed by the store's id (the form is answered after the gate), so a store's
 * hostnames share one budget.
 */
export const PASSWORD_LIMITS = limits("storefront password attempts", { limit: 30, windowMs: 10 * MINUTE, challengeAfter: 5 }, { limit: 100, windowMs: 10 * MINUTE, challengeAfter: 10 }, "wrong storefront passwords");

/** A door's keys at one store (its hostname, or its id where the store is known): `shop:<door>:<key>:<store>[:<client>]`. */
function keysOf(name: string, policies: DoorLimits, store: string, client: Client): DoorKeys {
  const address: DoorKey[] = [{ key: `shop:${name}:address:${store}:${client.address}`, policy: policies.address }];
  if (client.network) address.push({ key: `shop:${name}:network:${store}:${client.network}`, policy: policies.network });
  return { address, store: policies.store && { key: `shop:${name}:store:${store}`, policy: policies.store } };
}

export const shopperKeys = (door: ShopperDoor, hostname: string, client: Client) => keysOf(door, SHOPPER_LIMITS[door], hostname, client);
export const wrongCodeKeys = (hostname: string, client: Client) => keysOf("wrong-code", WRONG_CODE_LIMITS, hostname, client);
export const passwordKeys = (storeId: string, client: Client) => keysOf("password", PASSWORD_LIMITS, storeId, client);
