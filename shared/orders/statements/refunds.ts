import type { SQL } from "drizzle-orm";
import { orderReturn, paymentAttempt, refund } from "../../db/schema";
import { EXAMPLE, orNull, pg, statement } from "../../db/statement";
import { sql } from "../../db/steps";

/**
 * The statements of refunds: the claim (../refund-claims.ts), its record (../refund-record.ts) and what
 * the gateway reports (../gateway-refunds.ts).
 */

const { id: ID, store: STORE } = EXAMPLE;

/** A refund row as it is now: `pending` with no provider refund id is a claim not answered yet. */
export interface RowState {
  status: "pending" | "processed" | "failed";
  providerRefundId: string | null;
}

/** One attempt drawn on: the claimed row (its id is the gateway's key) and what the call needs. */
export interface ClaimedPiece {
  id: string;
  attemptId: string;
  attempt: number;
  provider: string;
  providerPaymentId: string | null;
  amount: number;
  /** The row's updated_at when claimed: only the call holding it may drop the row. */
  lease: string;
}

export type ClaimVerdict = "not_found" | "gate" | "in_progress" | "again" | "nothing_to_refund" | "exceeds_refundable" | "new";

/** What a claim asks, as the statement takes it (../refund-claims.ts `ClaimAsk`). */
export interface ClaimTerms {
  order: SQL;
  amount: SQL;
  reason: SQL;
  returnId: string | null;
  gate: SQL | undefined;
}

/** An unanswered claim younger than this may have its call in flight. */
export const CLAIM_LEASE = "2 minutes";

/** Decides and claims (see ../refund-claims.ts). */
export const claimRefund = statement("orders.claimRefund", {
  row: {
    orderId: orNull(pg.uuid()),
    orderNumber: orNull(pg.int4()),
    kind: pg.text<ClaimVerdict>(),
    refundable: pg.float8(),
    reason: orNull(pg.text()),
    pieces: pg.json<(ClaimedPiece & RowState)[]>(),
  },
  examples: [
    [STORE, sql`null::uuid`, { order: sql`${ID}::uuid`, amount: sql`null`, reason: sql`null`, returnId: null, gate: undefined }],
    [STORE, sql`null::uuid`, { order: sql`${ID}::uuid`, amount: sql`${100}`, reason: sql`${"damaged"}`, returnId: ID, gate: sql`true` }],
  ],
  sql: (store: SQL, memberId: SQL, ask: ClaimTerms) =>
    sql`with o as (select id, number from shop_order where store_id = ${store} and id = ${ask.order}),
     ask as (select ${ask.amount}::bigint as amount, ${ask.reason}::text as reason, ${ask.returnId}::uuid as return_id),
     open_claims as (
       select r.id, r.amount, r.created_at, r.updated_at, r.return_id, r.reason from refund r
       where r.store_id = ${store} and r.order_id = (select id from o) and r.status = 'pending' and r.provider_refund_id is null),
     held as (
       select a.id, a.attempt,
         greatest(a.amount - coalesce((select sum(r.amount) from refund r where r.store_id = a.store_id and r.payment_attempt_id = a.id
                                       and r.status in ('pending', 'processed')), 0), 0) as free
       from payment_attempt a where a.store_id = ${store} and a.order_id = (select id from o) and a.status in ('captured', 'refunded')),
     total as (select coalesce(sum(free), 0) as refundable from held),
     candidates as (
       -- The call this one repeats: its claims nobody answered whose lease ran out or, for a return still
       -- received, the refund rows it already has (a report settled them before the call's record).
       select c.id, c.created_at, c.amount, c.status, c.provider_refund_id from refund c
       where c.store_id = ${store} and c.order_id = (select id from o) and c.return_id is not distinct from (select return_id from ask)
         and ((c.status = 'pending' and c.provider_refund_id is null and c.updated_at <= now() - ${CLAIM_LEASE}::interval
               and c.reason is not distinct from (select reason from ask))
              or ((select return_id from ask) is not null and c.status <> 'failed'))),
     again as (
       select created_at from candidates group by created_at
       having (select return_id from ask) is not null
         or case when (select amount from ask) is null then (select refundable from total) = 0 else sum(amount) = (select amount from ask) end
       order by created_at desc limit 1),
     verdict as (
       select case
         when not (${ask.gate ?? sql`true`}) then 'gate'
         when not exists (select 1 from o) then 'not_found'
         when exists (select 1 from open_claims where updated_at > now() - ${CLAIM_LEASE}::interval) then 'in_progress'
         when exists (select 1 from again) then 'again'
         when (select refundable from total) = 0 then 'nothing_to_refund'
         when coalesce((select amount from ask), (select refundable from total)) > (select refundable from total) then 'exceeds_refundable'
         else 'new' end as kind),
     spread as (
       select h.id, h.attempt,
         least(h.free, greatest(coalesce((select amount from ask), (select refundable from total))
               - coalesce(sum(h.free) over (order by h.attempt desc rows between unbounded preceding and 1 preceding), 0), 0)) as piece
       from held h where (select kind from verdict) = 'new'),
     pieces as (select id, piece, row_number() over (order by attempt desc) as k from spread where piece > 0),
     counted as (select count(*)::int as n from refund where store_id = ${store} and order_id = (select id from o)),
     numbered as (
       select row_number() over (order by g.n) as k, d.id
       from counted, generate_series(counted.n + 1, 2 * counted.n + (select count(*)::int from pieces)) as g(n)
       cross join lateral (select substring(sha256(convert_to((select id from o)::text || ':refund:' || g.n, 'UTF8')) from 1 for 16) as h) x
       cross join lateral (select encode(set_byte(set_byte(x.h, 6, (get_byte(x.h, 6) & 15) | 128), 8, (get_byte(x.h, 8) & 63) | 128), 'hex')::uuid as id) d
       where not exists (select 1 from refund r where r.store_id = ${store} and r.id = d.id)),
     made as (
       insert into refund (id, store_id, order_id, payment_attempt_id, return_id, amount, reason, status, created_by)
       select n.id, ${store}, (select id from o), p.id, (select return_id from ask), p.piece, (select reason from ask), 'pending', ${memberId}
       from pieces p join numbered n on n.k = p.k
       returning id, payment_attempt_id, amount, updated_at, status, provider_refund_id),
     repeated as (select c.* from candidates c where (select kind from verdict) = 'again' and c.created_at = (select created_at from again)),
     taken as (
       update refund r set updated_at = now() from repeated c
       where r.store_id = ${store} and r.id = c.id and c.status = 'pending' and c.provider_refund_id is null
       returning r.id, r.payment_attempt_id, r.amount, r.updated_at, r.status, r.provider_refund_id),
     kept as (
       select r.id, r.payment_attempt_id, r.amount, r.updated_at, r.status, r.provider_refund_id from refund r join repeated c on c.id = r.id
       where r.store_id = ${store} and not (c.status = 'pending' and c.provider_refund_id is null))
     select (select id from o) as "orderId", (select number from o) as "orderNumber", (select kind from verdict) as kind,
       (select refundable from total)::float8 as refundable, (select reason from ask) as reason,
       coalesce((select json_agg(json_build_object('id', c.id, 'attemptId', a.id, 'attempt', a.attempt, 'provider', a.provider,
                   'providerPaymentId', a.provider_payment_id, 'amount', c.amount, 'lease', c.updated_at,
                   'status', c.status, 'providerRefundId', c.provider_refund_id) order by a.attempt desc)
                 from (select * from made union all select * from taken union all select * from kept) c
                 join payment_attempt a on a.store_id = ${store} and a.id = c.payment_attempt_id), '[]'::json) as pieces`,
});

/** An order's payment attempts with what processed refunds gave back of each. */
export const attemptsWithRefunded = statement("orders.attemptsWithRefunded", {
  row: { id: paymentAttempt.id, attempt: paymentAttempt.attempt, status: paymentAttempt.status, amount: pg.float8(), refunded: pg.float8() },
  examples: [[STORE, sql`${ID}::uuid`]],
  sql: (store: SQL, order: SQL) =>
    sql`select a.id, a.attempt, a.status, a.amount::float8 as amount,
          coalesce((select sum(r.amount) from refund r where r.store_id = a.store_id and r.payment_attempt_id = a.id and r.status = 'processed'), 0)::float8 as refunded
        from payment_attempt a where a.store_id = ${store} and a.order_id = ${order}`,
});

/** An attempt's amount and what processed refunds gave back of it. */
export const attemptRefunded = statement("orders.attemptRefunded", {
  row: { amount: pg.float8(), refunded: pg.float8() },
  examples: [[STORE, ID]],
  sql: (store: SQL, attemptId: string | SQL) =>
    sql`select a.amount::float8 as amount,
          coalesce((select sum(r.amount) from refund r where r.store_id = a.store_id and r.payment_attempt_id = a.id and r.status = 'processed'), 0)::float8 as refunded
        from payment_attempt a where a.store_id = ${store} and a.id = ${attemptId}`,
});

/** The refund row holding a provider refund id (locked, with `lock`). */
export const refundByProviderId = statement("orders.refundByProviderId", {
  row: { id: refund.id, attemptId: refund.paymentAttemptId, status: refund.status, amount: pg.float8(), returnId: refund.returnId },
  examples: [
    [STORE, "rfnd_1", false],
    [STORE, "rfnd_1", true],
  ],
  sql: (store: SQL, refundId: string, lock: boolean) =>
    sql`select id, payment_attempt_id as "attemptId", status, amount::float8 as amount, return_id as "returnId"
        from refund where store_id = ${store} and provider_refund_id = ${refundId}${lock ? sql` for update` : sql``}`,
});

/** An attempt's claims no answer reached yet, the newest claimed first (locked, with `lock`). */
export const unansweredClaims = statement("orders.unansweredClaims", {
  row: { id: refund.id, amount: pg.float8(), returnId: refund.returnId },
  examples: [
    [STORE, ID, false],
    [STORE, ID, true],
  ],
  sql: (store: SQL, attemptId: string | SQL, lock: boolean) =>
    sql`select id, amount::float8 as amount, return_id as "returnId" from refund
        where store_id = ${store} and payment_attempt_id = ${attemptId} and status = 'pending' and provider_refund_id is null
        order by updated_at desc, id${lock ? sql` for update` : sql``}`,
});

/** Refund rows by id or by provider refund id, as they are. */
export const refundRowsNow = statement("orders.refundRowsNow", {
  row: { id: refund.id, status: refund.status, providerRefundId: refund.providerRefundId },
  examples: [[STORE, [ID], ["rfnd_1"]]],
  sql: (store: SQL, ids: readonly string[], refundIds: readonly string[]) =>
    sql`select id, status, provider_refund_id as "providerRefundId" from refund
        where store_id = ${store} and (id = any(${sql.param(ids)}::uuid[]) or provider_refund_id = any(${sql.param(refundIds)}::text[]))`,
});

/** The return refunded, as it is (none for a refund of no return). */
export const returnNow = statement("orders.returnNow", {
  row: { id: orderReturn.id, number: orderReturn.number, status: orderReturn.status },
  examples: [[STORE, ID]],
  sql: (store: SQL, returnId: string | null) => sql`select id, number, status from order_return where store_id = ${store} and id = ${returnId}`,
});

/** Drops a claim nobody answered, when this call still holds it (its lease). */
export const dropClaim = statement("orders.dropClaim", {
  row: {},
  examples: [[STORE, ID, "2026-01-01 00:00:00+00"]],
  sql: (store: SQL, id: string, lease: string) =>
    sql`delete from refund where store_id = ${store} and id = ${id} and status = 'pending' and provider_refund_id is null
          and updated_at = ${lease}::timestamptz`,
});

/** A refund row the gateway reported final: its status, and the refund id it had not recorded yet. */
export const settleRefund = statement("orders.settleRefund", {
  row: {},
  examples: [
    [STORE, ID, "rfnd_1", "processed", null],
    [STORE, ID, "rfnd_1", "failed", "Refused."],
  ],
  sql: (store: SQL, id: string, refundId: string, status: "processed" | "failed", error: string | null) =>
    sql`update refund set status = ${status}, provider_refund_id = coalesce(provider_refund_id, ${refundId}), last_error = ${error}, updated_at = now()
        where store_id = ${store} and id = ${id}`,
});
