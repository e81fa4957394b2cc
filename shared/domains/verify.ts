/**
 * {domains}-verify (every 2 minutes; docs/domains.md): the stores with a pending domain whose check is due
 * come from a privileged id list; per store, the due domains' TXT records are looked up outside any
 * transaction, then one store unit re-checks each domain and records the outcome: found → `verified`
 * with `domain.verified`; not yet → still pending with the check recorded; 7 days after the domain was
 * added without the record → `failed` with `domain.failed`. A store whose unit fails is logged and the
 * others go on; a domain that changed meanwhile (removed, verified by an overlapping run) is left alone.
 */
import { and, eq, lte, sql } from "drizzle-orm";
import { emit } from "../db/outbox";
import { storeIdsWithDomainsToVerify } from "../db/privileged";
import { domainCheck, storeDomain, type DomainCheckResult } from "../db/schema";
import { withStore, type StoreTx } from "../db/with-store";
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

async function verifyStore({ db, now }: Pick<JobContext, "db" | "now">, storeId: string, dns: DnsResolver): Promise<StoreOutcome> {
  const due = await withStore(
    db,
    storeId,
    (tx) =>
      tx
        .select({ id: storeDomain.id, hostname: storeDomain.hostname, token: storeDomain.verificationToken, createdAt: storeDomain.createdAt })
        .from(storeDomain)
        .leftJoin(domainCheck, eq(domainCheck.domainId, storeDomain.id))
        .where(and(eq(storeDomain.storeId, tx.storeId), eq(storeDomain.status, "pending"), lte(sql`coalesce(${domainCheck.nextCheckAt}, ${storeDomain.createdAt})`, now))),
    { readOnly: true },
  );
  // Outside any transaction: a slow resolver holds no connection or lock.
  const checked: Checked[] = await Promise.all(due.map(async (d) => ({ ...d, result: await checkDomain(dns, d.hostname, d.token) })));
  return withStore(db, storeId, async (tx) => {
    const outcome: StoreOutcome = { checked: 0, verified: 0, failed: 0, pending: 0, skipped: 0 };
    for (const d of checked) outcome[await record(tx, d, now)]++;
    outcome.checked = checked.length - outcome.skipped;
    return outcome;
  });
}

/** One domain's check, applied if the domain is still pending under the same hostname. */
async function record(tx: StoreTx, d: Checked, now: Date): Promise<"verified" | "failed" | "pending" | "skipped"> {
  const mine = and(eq(storeDomain.storeId, tx.storeId), eq(storeDomain.id, d.id));
  const [row] = await tx
    .select({ id: storeDomain.id })
    .from(storeDomain)
    .where(and(mine, eq(storeDomain.status, "pending"), eq(storeDomain.hostname, d.hostname)))
    .for("update");
  if (!row) return "skipped";
  const next = nextCheckAt(d.createdAt, now);
  await tx
    .insert(domainCheck)
    .values({ storeId: tx.storeId, domainId: d.id, lastCheckedAt: now, lastResult: d.result, nextCheckAt: next })
    .onConflictDoUpdate({
      target: domainCheck.domainId,
      set: { checks: sql`${domainCheck.checks} + 1`, lastCheckedAt: now, lastResult: d.result, nextCheckAt: next },
    });
  const payload = { domainId: d.id, hostname: d.hostname };
  if (d.result === "verified") {
    await tx.update(storeDomain).set({ status: "verified", verifiedAt: now, updatedAt: sql`now()` }).where(mine);
    await emit(tx, "domain.verified", payload);
    return "verified";
  }
  if (now.getTime() - d.createdAt.getTime() >= GIVE_UP_AFTER_MS) {
    await tx.update(storeDomain).set({ status: "failed", updatedAt: sql`now()` }).where(mine);
    await emit(tx, "domain.failed", { ...payload, lastResult: d.result });
    return "failed";
  }
  return "pending";
}

/** The job as the registry runs it: the resolver from the Worker's configuration (DOMAIN_DNS). */
export function verifyDomainsJob(ctx: JobContext): Promise<Record<string, unknown>> {
  return verifyDomains(ctx, { dns: dnsResolverFor(dnsConfigFromEnv(ctx.env), ctx.env) });
}
