/**
 * Claims on a hostname (docs/domains.md "Claims"; decision 0024). Several stores may claim one hostname
 * (each a pending domain with its own TXT token); the first whose record is found wins it, and only a
 * verified domain is unique across stores (migration 0035). What the verify job and domains.add need to
 * decide that: who holds a hostname now (the privileged id lookup the storefront uses), a lock that puts
 * the claims of one hostname in line, and the merchant's words for a claim that failed.
 */
import type { SQL, SQLWrapper } from "drizzle-orm";
import type { DomainFailedReason } from "../db/schema";
import { sql, type Q, type Step } from "../db/steps";
import { lockHostname } from "./statements";

/** True while a verified domain (of another store, for a hostname this store only claims) holds `hostname`. */
export const heldByAStore = (hostname: string | SQLWrapper): SQL => sql`privileged.store_id_by_hostname(${hostname}) is not null`;

/**
 * Waits for, then holds until the unit ends, the lock of `hostname`'s claims: a unit that may verify a
 * claim takes it before it reads who holds the hostname, so of two stores verifying one hostname at once
 * the second reads after the first has committed and finds it taken. The key is the hostname's 64-bit
 * hash: two hostnames that share one only wait for each other.
 */
export const hostnameLock = (q: Q, hostname: string): Step<{ locked: string }[]> =>
  lockHostname(q, hostname);

/** The merchant's words for a failed claim (domains.list `failure.message`, Settings → Domains). */
export const FAILED_REASON_TEXT: Readonly<Record<DomainFailedReason, string>> = {
  lapsed: "The TXT record was not found within 7 days of adding the domain. Remove it and add it again once the record is in place.",
  taken: "Another store verified this hostname first, so it serves that store. Remove it here; it can be added again if that store removes it.",
};

/** Why domains.add refuses a hostname another store has verified. */
export const TAKEN_AT_ADD = "This hostname is verified by another store and serves it. A verified hostname belongs to one store; it can be added here once that store removes it.";
