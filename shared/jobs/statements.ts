import type { SQL } from "drizzle-orm";
import { outboxEvent, shipment } from "../db/schema";
import { EXAMPLE, orNull, pg, statement } from "../db/statement";
import { CURRENT_STORE, sql } from "../db/steps";
import { hashNamed } from "../procedures/media";

/**
 * The jobs' statements in SQL (decision 0026): the relay's claim and marks (./outbox.ts), failures kept for
 * the merchant (./per-store.ts), the daily prune (./activity-prune.ts), the domains' checks
 * (./domains-verify.ts), the couriers' tracking (./shipping-track.ts) and the media sweep (./media-sweep.ts).
 */

const { id: ID, store: STORE, at: AT } = EXAMPLE;

/** The store's relay lock for this transaction, or false when another relay holds it. */
export const tryRelayLock = statement("jobs.tryRelayLock", {
  row: { ok: pg.bool() },
  examples: [["outbox-relay:x"]],
  sql: (key: string) => sql`select pg_try_advisory_xact_lock(hashtext(${key})) as ok`,
});

/** The store's due rows, oldest first, a bounded batch, claimed (rows another relay holds are skipped). */
export const claimDueEvents = statement("jobs.claimDueEvents", {
  row: { id: outboxEvent.id, kind: outboxEvent.kind, payload: outboxEvent.payload, created_at: outboxEvent.createdAt, attempts: outboxEvent.attempts },
  examples: [[ID, AT, 100]],
  sql: (storeId: string, now: Date, limit: number) =>
    sql`select id, kind, payload, created_at, attempts from outbox_event
     where store_id = ${storeId} and processed_at is null and dead_at is null and available_at <= ${now}
     order by seq limit ${limit} for update skip locked`,
});

/** A failed send: one more try counted, the row waits until `retryAt`, or is dead at `now` after the last try. */
export const failedSend = statement("jobs.failedSend", {
  row: {},
  examples: [[ID, ID, { error: "down", dead: false, retryAt: AT, now: AT }]],
  sql: (storeId: string, id: string, f: { error: string; dead: boolean; retryAt: Date; now: Date }) =>
    sql`update outbox_event set attempts = attempts + 1, last_error = ${f.error},
       available_at = case when ${f.dead}::boolean then available_at else ${f.retryAt}::timestamptz end,
       dead_at = case when ${f.dead}::boolean then ${f.now}::timestamptz else null end
     where store_id = ${storeId} and id = ${id}`,
});

/** Rows relayed: processed_at is when they really left (the wall clock), not when the pass was due. */
export const markRelayed = statement("jobs.markRelayed", {
  row: {},
  examples: [[ID, [ID]]],
  sql: (storeId: string, ids: readonly string[]) =>
    sql`update outbox_event set processed_at = clock_timestamp(), last_error = null where store_id = ${storeId} and id = any(${sql.param(ids)}::uuid[])`,
});

/** A store's failure of a job, kept for its merchant: counted, its first time reset after a day without one. */
export const keepJobFailure = statement("jobs.keepJobFailure", {
  row: {},
  examples: [["{outbox}-relay", "down", AT]],
  sql: (job: string, error: string, at: Date) =>
    sql`insert into job_failure (store_id, job, error, first_failed_at, last_failed_at) values (${CURRENT_STORE}, ${job}, ${error}, ${at}, ${at})
      on conflict (store_id, job) do update set error = excluded.error, last_failed_at = excluded.last_failed_at,
        failures = job_failure.failures + 1,
        first_failed_at = case when job_failure.last_failed_at < excluded.last_failed_at - interval '1 day' then excluded.last_failed_at else job_failure.first_failed_at end`,
});

/** The unit's API activity last touched before `before`, deleted; answers how many. */
export const pruneOldActivity = statement("jobs.pruneOldActivity", {
  row: { n: pg.int4() },
  examples: [[AT]],
  sql: (before: Date) => sql`with gone as (delete from api_activity where store_id = ${CURRENT_STORE} and last_at < ${before} returning 1) select count(*)::int as n from gone`,
});

/**
 * The oldest batch of outbox rows sent before `before` that name no order, read in order from
 * outbox_event_sent_idx (migration 0028), whose rows are exactly these; then deleted where they lie, by
 * their row addresses (a TID scan: no index descent per row, ~1 µs a row against ~2.5 µs through the
 * primary key). As an array, so that the planner cannot take a big store's rows to be better read by a
 * hash join over the whole table. Both halves read one snapshot; a row changed meanwhile has a new address
 * and is left for the next run. Answers how many.
 */
/** The store's Idempotency-Keys made before `before` (shared/pipeline/idempotency-key.ts: they answer for 24 hours). */
export const pruneIdempotencyKeys = statement("jobs.pruneIdempotencyKeys", {
  row: { n: pg.int4() },
  examples: [[AT]],
  sql: (before: Date) =>
    sql`with gone as (delete from idempotency_key where store_id = ${CURRENT_STORE} and created_at < ${before} returning 1)
        select count(*)::int as n from gone`,
});

export const pruneSentOutbox = statement("jobs.pruneSentOutbox", {
  row: { n: pg.int4() },
  examples: [[AT, 1000]],
  sql: (before: Date, batch: number) =>
    sql`with gone as (
          delete from outbox_event where store_id = ${CURRENT_STORE} and ctid = any (array(
            select ctid from outbox_event
            where store_id = ${CURRENT_STORE} and processed_at < ${before} and order_id is null
            order by processed_at limit ${batch}))
          returning 1)
        select count(*)::int as n from gone`,
});

/** The DNS check recorded on the domain (when it is still the one looked up): how many, the result, the next one. */
export const recordDomainCheck = statement("jobs.recordDomainCheck", {
  row: {},
  examples: [[{ domainId: ID, now: AT, result: "not_found", next: AT }, sql`id = ${ID}`]],
  sql: (c: { domainId: string; now: Date; result: string; next: Date }, current: SQL) =>
    sql`insert into domain_check (store_id, domain_id, last_checked_at, last_result, next_check_at)
        select ${CURRENT_STORE}, ${c.domainId}, ${c.now}, ${c.result}, ${c.next} where exists (select 1 from store_domain where ${current})
        on conflict (domain_id) do update set checks = domain_check.checks + 1, last_checked_at = excluded.last_checked_at,
          last_result = excluded.last_result, next_check_at = excluded.next_check_at`,
});

/**
 * A claim settled as `becomes` says (one row: to_status, to_reason), when `current` still finds it, with
 * its `domain.<status>` event (`extra` joins a failure's payload); answers the event's kind and reason.
 */
export const settleClaim = statement("jobs.settleClaim", {
  row: { kind: outboxEvent.kind, reason: orNull(pg.text()) },
  examples: [[sql`select 'failed' as to_status, 'lapsed' as to_reason`, sql`id = ${ID}`, AT, "{}"]],
  sql: (becomes: SQL, current: SQL, now: Date, extra: string) =>
    sql`with becomes as (${becomes}),
        changed as (
          update store_domain set status = b.to_status, failed_reason = b.to_reason,
            verified_at = case when b.to_status = 'verified' then ${now}::timestamptz end, updated_at = now()
          from becomes b where ${current}
          returning id, hostname, status, failed_reason)
        insert into outbox_event (store_id, kind, payload)
        select ${CURRENT_STORE}, 'domain.' || c.status,
          jsonb_build_object('domainId', c.id, 'hostname', c.hostname)
            || case when c.status = 'failed' then jsonb_build_object('reason', c.failed_reason) || ${extra}::jsonb else '{}'::jsonb end
        from changed c
        returning kind, payload ->> 'reason' as reason`,
});

/** The store's shipments still on their way whose courier can be asked, the longest-unasked first. */
export const openShipments = statement("jobs.openShipments", {
  row: { id: shipment.id, awb: shipment.awb, provider: shipment.provider, status: shipment.status },
  examples: [[STORE, 50]],
  sql: (store: SQL, limit: number) =>
    sql`select id, awb, provider, status from shipment
        where store_id = ${store} and status in ('pending', 'in_transit', 'rto_initiated') and provider <> 'manual'
        order by tracked_at nulls first, created_at, id limit ${limit}`,
});

/** The shipments the courier was asked about, marked. */
export const markTracked = statement("jobs.markTracked", {
  row: {},
  examples: [[STORE, [ID], AT]],
  sql: (store: SQL, ids: readonly string[], now: Date) => sql`update shipment set tracked_at = ${now} where store_id = ${store} and id = any(${sql.param(ids)}::uuid[])`,
});

/**
 * Whether the unit's store still exists, and which of `hashes` a row of it names (a product's image, the
 * theme's logo, favicon or banner, a collection's image: procedures/media.ts `hashNamed`, the rule a removal
 * keeps files by). One statement, under the store's row-level security.
 */
export const namedMediaHashes = statement("jobs.namedMediaHashes", {
  row: { store_exists: pg.bool(), named: pg.textArray() },
  examples: [[[EXAMPLE.hash]]],
  sql: (hashes: readonly string[]) =>
    sql`select exists (select 1 from store where id = ${CURRENT_STORE}) as store_exists,
        array(select h from unnest(${sql.param(hashes)}::text[]) as h where ${hashNamed(CURRENT_STORE, sql`h`)}) as named`,
});
