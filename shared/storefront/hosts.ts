import { isUuid } from "../db/ids";

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

interface HostEntry {
  storeId: string | null;
  at: number;
}

const keyOf = (hostname: string) => `host:${hostname}`;

function parseEntry(value: unknown): HostEntry | null {
  if (typeof value !== "object" || value === null) return null;
  const { storeId, at } = value as Record<string, unknown>;
  if (typeof at !== "number" || !(storeId === null || isUuid(storeId))) return null;
  return { storeId, at };
}

export interface HostResolution {
  storeId: string | null;
  /** True when the answer came from the cache (no database lookup). */
  cached: boolean;
}

/**
 * The store serving `hostname` (already normalised): from the cache while its entry is younger than
 * 60 s, else from `lookup` (the privileged id lookup), whose answer, found or not, is written back.
 */
export async function resolveHost(
  kv: HostsKv,
  hostname: string,
  lookup: (hostname: string) => Promise<string | null>,
  now: number = Date.now(),
): Promise<HostResolution> {
  const entry = parseEntry(await kv.get(keyOf(hostname), "json").catch(() => null));
  if (entry && now - entry.at >= 0 && now - entry.at < HOST_CACHE_MS) return { storeId: entry.storeId, cached: true };
  const storeId = await lookup(hostname);
  // The database answered: serve from it even if KV cannot take the entry right now.
  await writeHostEntry(kv, hostname, storeId, now).catch(() => undefined);
  return { storeId, cached: false };
}

/** Overwrites a hostname's entry at once (a domain added, verified, removed or moved; null: serves no store). */
export async function writeHostEntry(kv: HostsKv, hostname: string, storeId: string | null, now: number = Date.now()): Promise<void> {
  const entry: HostEntry = { storeId, at: now };
  await kv.put(keyOf(hostname), JSON.stringify(entry), { expirationTtl: KV_EXPIRY_SECONDS });
}
