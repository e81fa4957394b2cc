/**
 * {domains}-verify (every 2 minutes; docs/domains.md): the stores with a pending domain whose check is due
 * come from a privileged id list; per store, two round trips: a unit reads the due domains, their TXT
 * records are looked up outside any transaction, then one store unit re-checks each domain (locking it)
 * and records the outcome: found → `verified` with `domain.verified`; not yet → still pending with the
 * check recorded; 7 days after the domain was added without the record → `failed` with `domain.failed`.
 * A store whose unit fails is logged and the others go on; a domain that changed meanwhile (removed,
 * verified by an overlapping run) is left alone.
 */
import { and, eq, lte } from "drizzle-orm";
import { emitStep } from "../db/changes";
import { CURRENT_STORE } from "../db/openings";
import { plan, together, type Plan } from "../db/plan";
import { storeIdsWithDomainsToVerify } from "../db/privileged";
import { domainCheck, storeDomain, type DomainCheckResult } from "../db/schema";
import { raw, sql, type Q } from "../db/steps";
import { sendStoreUnit } from "../db/unit";
import type { JobContext } from "../jobs/types";
import { errorFields } from "../log";
import { checkDomain, type DnsResolver } from "./dns";
import { dnsConfigFromEnv, dnsResolverFor } from "./select";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** A pending domain becomes `failed` when a check this long after it was added still finds no record. */
export const GIVE_UP_AFTER_MS = 7 * DAY;

/**
 * When a domain's next check is due: every run (2 min) in its first hour, every 10 minutes in its first
 * day, then hourly. DNS caches a missing record for its negative TTL anyway, so checking faster than that
 * later on only costs lookups.
 */
export function nextCheckAt(createdAt: Date, now: Date): Date {
  const age = now.getTime() - createdAt.getTime();
  const every = age < HOUR ? MINUTE : age < DAY ? 10 * MINUTE : HOUR;
  return new Date(now.getTime() + every);
}

/** Stores per run (the rest wait for the next run, longest-waiting first) and stores checked at once. */
const STORES_PER_RUN = 100;
const STORES_AT_ONCE = 5;

export interface VerifyDeps {
  dns: DnsResolver;
  storesPerRun?: number;
}

interface StoreOutcome {
  checked: number;
  verified: number;
  failed: number;
  pending: number;
  skipped: number;
}

interface Checked {
  id: string;
  hostname: string;
  createdAt: Date;
  result: DomainCheckResult;
}

export async function verifyDomains(ctx: Pick<JobContext, "db" | "log" | "now">, deps: VerifyDeps): Promise<Record<string, unknown>> {
  const { db, log, now } = ctx;
  const ids = await storeIdsWithDomainsToVerify(db, now, deps.storesPerRun ?? STORES_PER_RUN);
  const totals = { stores: ids.length, storeErrors: 0, checked: 0, verified: 0, failed: 0, pending: 0, skipped: 0 };
  for (let i = 0; i < ids.length; i += STORES_AT_ONCE) {
    await Promise.all(
      ids.slice(i, i + STORES_AT_ONCE).map(async (storeId) => {
        try {
          const outcome = await verifyStore(ctx, storeId, deps.dns);
          for (const k of Object.keys(outcome) as (keyof StoreOutcome)[]) totals[k] += outcome[k];
          log.debug("domains.store_checked", { storeId, ...outcome });
        } catch (e) {
          totals.storeErrors++;
          log.error("domains.store_check_failed", { storeId, ...errorFields(e) });
        }
      }),
    );
  }
  log.info("domains.verify_finished", totals);
  return totals;
}

type Recorded = "verified" | "failed" | "pending" | "skipped";

/** One store's due domains: read, looked up, recorded (two round trips; one when none is due). */
export async function verifyStore({ db, now }: Pick<JobContext, "db" | "now">, storeId: string, dns: DnsResolver): Promise<StoreOutcome> {
  const due = await sendStoreUnit(db, storeId, (q) =>
    plan(
      [
        q
          .select({ id: storeDomain.id, hostname: storeDomain.hostname, token: storeDomain.verificationToken, createdAt: storeDomain.createdAt })
          .from(storeDomain)
          .leftJoin(domainCheck, eq(domainCheck.domainId, storeDomain.id))
          .where(and(eq(storeDomain.storeId, CURRENT_STORE), eq(storeDomain.status, "pending"), lte(sql`coalesce(${domainCheck.nextCheckAt}, ${storeDomain.createdAt})`, now))),
      ] as const,
      ([rows]) => rows,
    ),
  );
  const outcome: StoreOutcome = { checked: 0, verified: 0, failed: 0, pending: 0, skipped: 0 };
  if (due.length === 0) return outcome;
  // Outside any transaction: a slow resolver holds no connection or lock.
  const checked: Checked[] = await Promise.all(due.map(async (d) => ({ ...d, result: await checkDomain(dns, d.hostname, d.token) })));
  const recorded = await sendStoreUnit(db, storeId, (q) => together(Object.fromEntries(checked.map((d, i) => [i, recordPlan(q, d, now)]))), { readOnly: false });
  for (const r of Object.values(recorded)) outcome[r]++;
  outcome.checked = checked.length - outcome.skipped;
  return outcome;
}

/** One domain's check, applied if the domain is still pending under the same hostname (locked first). */
function recordPlan(q: Q, d: Checked, now: Date): Plan<Recorded> {
  const current = sql`store_id = ${CURRENT_STORE} and id = ${d.id} and status = 'pending' and hostname = ${d.hostname}`;
  const next = nextCheckAt(d.createdAt, now);
  const decided = d.result === "verified" ? "verified" : now.getTime() - d.createdAt.getTime() >= GIVE_UP_AFTER_MS ? "failed" : "pending";
  const payload = { domainId: d.id, hostname: d.hostname, ...(decided === "failed" ? { lastResult: d.result } : {}) };
  const stillCurrent = sql`exists (select 1 from store_domain where ${current})`;
  return plan(
    [
      raw<{ id: string }>(q, sql`select id from store_domain where ${current} for update`),
      raw(
        q,
        sql`insert into domain_check (store_id, domain_id, last_checked_at, last_result, next_check_at)
            select ${CURRENT_STORE}, ${d.id}, ${now}, ${d.result}, ${next} where ${stillCurrent}
            on conflict (domain_id) do update set checks = domain_check.checks + 1, last_checked_at = excluded.last_checked_at,
              last_result = excluded.last_result, next_check_at = excluded.next_check_at`,
      ),
      // The event first, on the state the lock holds; then the change it describes, on the same condition.
      ...(decided === "pending"
        ? []
        : [
            emitStep(q, `domain.${decided}`, payload, { when: stillCurrent }),
            raw(q, sql`update store_domain set status = ${decided}, ${decided === "verified" ? sql`verified_at = ${now}, ` : sql``}updated_at = now() where ${current}`),
          ]),
    ],
    ([found]) => ((found as unknown[]).length > 0 ? decided : "skipped"),
  );
}

/** The job as the registry runs it: the resolver from the Worker's configuration (DOMAIN_DNS). */
export function verifyDomainsJob(ctx: JobContext): Promise<Record<string, unknown>> {
  return verifyDomains(ctx, { dns: dnsResolverFor(dnsConfigFromEnv(ctx.env), ctx.env) });
}
