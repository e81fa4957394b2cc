/**
 * {domains}-verify (every 2 minutes; docs/domains.md): the stores with a pending domain whose check is due
 * come from a privileged id list; per store, two round trips: a unit reads the due domains, their TXT
 * records are looked up outside any transaction, then one store unit re-checks each domain (locking it)
 * and records the outcome: found → `verified` with `domain.verified`, unless another store verified the
 * hostname first (claims: ./claims.ts) → `failed` (`taken`) with `domain.failed`; not yet → still pending
 * with the check recorded; 7 days after the domain was added without the record → `failed` (`lapsed`).
 * A claim on a hostname another store holds fails at its store's next run, without a lookup.
 * Stores go through the jobs' store loop (../jobs/per-store.ts): a store whose work fails is logged and
 * recorded for its merchant, and the others go on; a domain that changed meanwhile (removed, verified by
 * an overlapping run) is left alone.
 */
import { movedNothing } from "../core/log";
import { and, eq, lte, or, type SQL } from "drizzle-orm";
import { markEmits } from "../db/changes";
import { CURRENT_STORE } from "../db/openings";
import { plan, together, type Plan } from "../db/plan";
import { storeIdsWithDomainsToVerify } from "../db/privileged";
import { domainCheck, storeDomain, type DomainCheckResult } from "../db/schema";
import { sql, type Q, type Step } from "../db/steps";
import { sendStoreUnit } from "../db/unit";
import { forEachStore, type Counts } from "./per-store";
import { recordDomainCheck, settleClaim } from "./statements";
import type { JobContext } from "./types";
import { heldByAStore, hostnameLock } from "../domains/claims";
import { checkDomain, type DnsResolver } from "../domains/dns";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** A claim lapses (`failed`, reason `lapsed`) when a check this long after it was added still finds no record. */
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

type StoreOutcome = {
  /** DNS lookups recorded. */
  checked: number;
  verified: number;
  /** Lapsed: no record 7 days after the domain was added. */
  failed: number;
  /** Failed because another store verified the hostname first. */
  taken: number;
  pending: number;
  /** Changed meanwhile (removed, decided by an overlapping run): left alone. */
  skipped: number;
};

interface Checked {
  id: string;
  hostname: string;
  createdAt: Date;
  /** Null: not looked up, another store holds the hostname. */
  result: DomainCheckResult | null;
}

export async function verifyDomains(ctx: Pick<JobContext, "db" | "log" | "now" | "job">, deps: VerifyDeps): Promise<Counts> {
  const ids = await storeIdsWithDomainsToVerify(ctx.db, ctx.now, deps.storesPerRun ?? STORES_PER_RUN);
  const totals = await forEachStore(ctx, ids, (storeId) => verifyStore(ctx, storeId, deps.dns), { atOnce: STORES_AT_ONCE });
  ctx.log[movedNothing(totals) ? "debug" : "info"]("domains.verify_finished", totals);
  return totals;
}

type Recorded = "verified" | "failed" | "taken" | "pending" | "skipped";

/** One store's due domains: read, looked up, recorded (two round trips; one when none is due). */
export async function verifyStore({ db, now }: Pick<JobContext, "db" | "now">, storeId: string, dns: DnsResolver): Promise<StoreOutcome> {
  const held = heldByAStore(storeDomain.hostname);
  const due = await sendStoreUnit(db, storeId, (q) =>
    plan(
      [
        q
          .select({ id: storeDomain.id, hostname: storeDomain.hostname, token: storeDomain.verificationToken, createdAt: storeDomain.createdAt, taken: sql<boolean>`${held}` })
          .from(storeDomain)
          .leftJoin(domainCheck, eq(domainCheck.domainId, storeDomain.id))
          .where(and(eq(storeDomain.storeId, CURRENT_STORE), eq(storeDomain.status, "pending"), or(lte(sql`coalesce(${domainCheck.nextCheckAt}, ${storeDomain.createdAt})`, now), held))),
      ] as const,
      ([rows]) => rows,
    ),
  );
  const outcome: StoreOutcome = { checked: 0, verified: 0, failed: 0, taken: 0, pending: 0, skipped: 0 };
  if (due.length === 0) return outcome;
  // Outside any transaction: a slow resolver holds no connection or lock. A hostname another store holds
  // already is not looked up: that claim fails whatever its record says.
  const checked: Checked[] = await Promise.all(
    due.map(async ({ token, taken, ...d }) => ({ ...d, result: taken ? null : await checkDomain(dns, d.hostname, token) })),
  );
  const recorded = await sendStoreUnit(db, storeId, (q) => together(Object.fromEntries(checked.map((d, i) => [i, recordPlan(q, d, now)]))), { readOnly: false });
  checked.forEach((d, i) => {
    const r = recorded[i]!;
    outcome[r]++;
    if (d.result !== null && r !== "skipped") outcome.checked++;
  });
  return outcome;
}

/**
 * One domain's check, applied if the domain is still pending under the same hostname (locked first):
 * the check recorded, then what the claim becomes and its event, in one statement. A found record wins
 * the hostname unless another store holds it by then (read under the hostname's lock, so two stores'
 * claims are decided one after the other); a claim 7 days old without its record lapses.
 */
function recordPlan(q: Q, d: Checked, now: Date): Plan<Recorded> {
  const current = sql`store_id = ${CURRENT_STORE} and id = ${d.id} and status = 'pending' and hostname = ${d.hostname}`;
  const held = heldByAStore(d.hostname);
  const lapsed = d.result !== null && d.result !== "verified" && now.getTime() - d.createdAt.getTime() >= GIVE_UP_AFTER_MS;
  // What the claim becomes (one row), or nothing: it stays pending.
  const becomes =
    d.result === "verified"
      ? sql`select case when h.held then 'failed' else 'verified' end as to_status, case when h.held then 'taken' end as to_reason from (select ${held} as held) h`
      : d.result === null
        ? sql`select 'failed' as to_status, 'taken' as to_reason where ${held}`
        : lapsed
          ? sql`select 'failed' as to_status, 'lapsed' as to_reason`
          : null;
  const extra = lapsed ? { lastResult: d.result } : {};
  const locks = d.result === "verified" ? [hostnameLock(q, d.hostname)] : [];
  const steps: Step[] = [
    ...locks,
    q.select({ id: storeDomain.id }).from(storeDomain).where(current).for("update"),
    ...(d.result === null ? [] : [checkStep(q, d, d.result, current, now)]),
    ...(becomes
      ? [
          markEmits(settleClaim(q, becomes, current, now, JSON.stringify(extra))),
        ]
      : []),
  ];
  return plan(steps, (results): Recorded => {
    if ((results[locks.length] as unknown[]).length === 0) return "skipped";
    const [event] = (becomes ? results.at(-1) : []) as { kind: string; reason: string | null }[];
    if (!event) return "pending";
    return event.kind === "domain.verified" ? "verified" : event.reason === "taken" ? "taken" : "failed";
  });
}

/** The DNS check recorded on the domain (when it is still the one looked up): how many, the result, the next one. */
function checkStep(q: Q, d: Checked, result: DomainCheckResult, current: SQL, now: Date): Step {
  const next = nextCheckAt(d.createdAt, now);
  return recordDomainCheck(q, { domainId: d.id, now, result, next }, current);
}

/** The job as the registry runs it: the resolver of the Worker's configuration (DOMAIN_DNS). */
export async function verifyDomainsJob(ctx: JobContext): Promise<Counts> {
  if (!ctx.dns) throw new Error("The {domains}-verify job runs with the Worker's DNS resolver (shared/jobs/run.ts), and none was given");
  return verifyDomains(ctx, { dns: ctx.dns() });
}
