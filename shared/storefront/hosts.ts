import { isUuid } from "../db/ids";
import { readTheme, type Theme } from "./theme";
import { readMenu, type MenuLink } from "./menu";

/**
 * Host → store for the storefront (SPEC "Storefront behaviour" 1, "Limits"; ARCHITECTURE §13): the
 * privileged lookup behind the HOSTS KV namespace. An entry is trusted for 60 000 ms after it was
 * written, unknown hostnames included (a negative entry), so a flood of requests for a host costs one
 * database lookup a minute per location. The age is checked against the entry's own timestamp, so the
 * 60 s hold exactly whatever KV's own expiry (whose minimum is 60 s) does; KV expiry only clears the
 * key later. Whoever adds, verifies, removes or moves a domain overwrites its entry at once
 * (`writeHostEntry`).
 */
export const HOST_CACHE_MS = 60_000;
/** KV's own expiry: a backstop that clears old keys (KV refuses anything under 60 s). */
const KV_EXPIRY_SECONDS = 120;

const HOSTNAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;

/**
 * A hostname as the cache and the lookup know it: lower case, without port or trailing dot. Null for
 * anything that cannot be a hostname, so junk never reaches KV or the database.
 */
export function normaliseHostname(raw: string): string | null {
  const lower = raw.trim().toLowerCase();
  if (lower.startsWith("[")) return null; // an IPv6 literal names no store
  const host = lower.replace(/:\d{1,5}$/, "").replace(/\.$/, "");
  if (host.length === 0 || host.length > 253 || !HOSTNAME.test(host)) return null;
  return host;
}

/** The part of a KV namespace the cache uses (the HOSTS binding; also typed where Workers types are absent). */
export interface HostsKv {
  get(key: string, type: "json"): Promise<unknown>;
  put(key: string, value: string, options?: { expirationTtl?: number }): Promise<void>;
}

/**
 * One entry of the HOSTS namespace, trusted for 60 000 ms after it was written: from the cache while it is
 * younger than that, else from `load` (a database read), whose answer, found or not, is written back.
 */
async function held<T>(
  kv: HostsKv,
  key: string,
  parse: (value: unknown) => T | undefined,
  load: () => Promise<T>,
  now: number,
): Promise<{ value: T; cached: boolean }> {
  const entry = (await kv.get(key, "json").catch(() => null)) as { value?: unknown; at?: unknown } | null;
  const at = typeof entry?.at === "number" ? entry.at : NaN;
  const value = entry && now - at >= 0 && now - at < HOST_CACHE_MS ? parse(entry.value) : undefined;
  if (value !== undefined) return { value, cached: true };
  const loaded = await load();
  // The database answered: serve from it even if KV cannot take the entry right now.
  await writeHeld(kv, key, loaded, now).catch(() => undefined);
  return { value: loaded, cached: false };
}

function writeHeld(kv: HostsKv, key: string, value: unknown, now: number): Promise<void> {
  return kv.put(key, JSON.stringify({ value, at: now }), { expirationTtl: KV_EXPIRY_SECONDS });
}

/** Waits before each retry of a change's write: a KV write can fail for a moment (a busy store, a 5xx). */
export const PUSH_RETRY_DELAYS_MS = [25, 100, 400] as const;

/**
 * A change's own write (a domain moved, a store's facts after a commit): retried, because a lost one leaves
 * every location serving the old entry for up to 60 s. A miss's write-back is not: the next miss writes it.
 */
async function pushHeld(kv: HostsKv, key: string, value: unknown, now: number): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await writeHeld(kv, key, value, now);
    } catch (e) {
      const wait = PUSH_RETRY_DELAYS_MS[attempt];
      if (wait === undefined) throw e;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

const hostKey = (hostname: string) => `host:${hostname}`;
const parseStoreId = (v: unknown) => (v === null || isUuid(v) ? v : undefined);

export interface HostResolution {
  storeId: string | null;
  /** True when the answer came from the cache (no database lookup). */
  cached: boolean;
}

/** The store serving `hostname` (already normalised), through its held entry (`lookup`: the privileged id lookup). */
export async function resolveHost(
  kv: HostsKv,
  hostname: string,
  lookup: (hostname: string) => Promise<string | null>,
  now: number = Date.now(),
): Promise<HostResolution> {
  const { value, cached } = await held(kv, hostKey(hostname), parseStoreId, () => lookup(hostname), now);
  return { storeId: value, cached };
}

/** Overwrites a hostname's entry at once (a domain added, verified, removed or moved; null: serves no store). */
export function writeHostEntry(kv: HostsKv, hostname: string, storeId: string | null, now: number = Date.now()): Promise<void> {
  return pushHeld(kv, hostKey(hostname), storeId, now);
}

/**
 * What the storefront's gate and pages need of a store, held beside the hostnames so that a warm page
 * costs no database work: the name and currency, the password state and the catalogue version that keys
 * the edge cache. The password is held only as the SHA-256 of the cookie value that opens the store.
 */
export interface StoreFacts {
  id: string;
  name: string;
  currency: string;
  /** SHA-256 (hex) of the `wc_sf_pass` value that opens the store while its password is on; null while off. */
  passwordCookieHash: string | null;
  version: number;
  /** The published theme (./theme.ts); null or absent while the store has published none. */
  theme?: Theme | null;
  /** The navigation menu's links shoppers see (./menu.ts); absent in an entry held from before the menu. */
  menu?: MenuLink[];
}

const factsKey = (storeId: string) => `store:${storeId}`;

function parseFacts(v: unknown): StoreFacts | null | undefined {
  if (v === null) return null;
  if (typeof v !== "object") return undefined;
  const f = v as Record<string, unknown>;
  const ok =
    isUuid(f["id"]) &&
    typeof f["name"] === "string" &&
    typeof f["currency"] === "string" &&
    (f["passwordCookieHash"] === null || typeof f["passwordCookieHash"] === "string") &&
    typeof f["version"] === "number";
  // A theme that does not read as one is an entry to load afresh, never a look to guess at.
  if (!ok || (f["theme"] != null && !readTheme(f["theme"]))) return undefined;
  // So is a menu that does not read as one (a link the menu would never hold).
  if (f["menu"] !== undefined && !readMenu(f["menu"])) return undefined;
  return f as unknown as StoreFacts;
}

/** A store's facts through their held entry (`load` reads them from the database; null: no such store). */
export async function resolveStoreFacts(
  kv: HostsKv,
  storeId: string,
  load: () => Promise<StoreFacts | null>,
  now: number = Date.now(),
): Promise<{ facts: StoreFacts | null; cached: boolean }> {
  const { value, cached } = await held(kv, factsKey(storeId), parseFacts, load, now);
  return { facts: value, cached };
}

/** Overwrites a store's facts at once (after a commit that changed what its storefront shows). */
export function writeStoreFacts(kv: HostsKv, facts: StoreFacts, now: number = Date.now()): Promise<void> {
  return pushHeld(kv, factsKey(facts.id), facts, now);
}
