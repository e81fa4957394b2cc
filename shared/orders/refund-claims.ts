import type { SQL } from "drizzle-orm";
import { mapPlan, plan, together, type Plan } from "../db/plan";
import { raw, sql, type Q } from "../db/steps";
import { AppError } from "../core/errors";
import { conflict } from "./actions";
import { orderNotFound } from "./order-detail";
import { orderReadingPlan, type OrderReading } from "./routines";
import type { AttemptStatus } from "../rules/status";

/**
 * A refund's claim (docs/payments.md, "Refunds in two round trips"): the first unit of `orders.refund` and
 * `returns.refund`. Under the order's lock it decides in SQL what is refunded from which attempt and
 * writes one `pending` row per attempt drawn on, with no provider refund id: the row's id is the gateway's
 * idempotency key, committed before the gateway is called. The second unit (./refund-record.ts) records
 * what the gateway answered on those rows, or drops them when it failed.
 *
 * The id is derived from the order and the refund's number (`uuidFrom("<orderId>:refund:<n>")`, computed
 * here in SQL), n counting the order's refund rows (an id in use is skipped): a dropped claim frees its
 * number, so the retry of a failed refund asks with the same key. While a claim is unanswered and younger than CLAIM_LEASE (its
 * call may be in flight) the order takes no other refund (409 `refund_in_progress`); an older one is taken
 * over, key and all, by a call asking for the same refund (same amount, reason and return; or everything,
 * when nothing else is left), so a call that died between the gateway and its second unit is finished by
 * its retry instead of being paid twice. A return still received whose refund rows a gateway's report
 * settled already (its call died before its record) is finished the same way, without asking again.
 */
export const CLAIM_LEASE = "2 minutes";

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

/** A refund row as it is now: `pending` with no provider refund id is a claim not answered yet. */
export interface RowState {
  status: "pending" | "processed" | "failed";
  providerRefundId: string | null;
}

/** What the second unit decides from (read by the claim's unit, or again after a lost race). */
export interface RefundReading {
  order: OrderReading;
  attempts: Record<string, { attempt: number; status: AttemptStatus; amount: number; refunded: number }>;
  /** The order's processed refunds by id (the order's facts list their amounts in this order). */
  processedIds: string[];
  /** The claimed rows as they are (absent: gone). */
  rows: Record<string, RowState>;
  /** Rows holding a provider refund id the gateway answered (read again after a lost race). */
  holders: Record<string, { id: string; status: RowState["status"] }>;
  /** The return refunded, as it is (returns.refund). */
  ret: { id: string; number: number; status: string } | null;
}

export interface RefundClaim {
  orderId: string;
  orderNumber: number;
  returnId: string | null;
  reason: string | null;
  pieces: ClaimedPiece[];
  reading: RefundReading;
}

export interface ClaimAsk<B> {
  /** The order: its id, or a subquery that finds it (a return's). */
  order: SQL;
  /** Minor units asked for (SQL: a value, or the return's worth); null: everything still refundable. */
  amount: SQL;
  reason: SQL;
  returnId: string | null;
  /** The claim writes nothing unless this holds (the return is received); `refused` words why from `before`'s answer. */
  gate?: { holds: SQL; refused(before: B): AppError };
}

type Verdict = "not_found" | "gate" | "in_progress" | "again" | "nothing_to_refund" | "exceeds_refundable" | "new";

type ClaimRow = {
  orderId: string | null;
  orderNumber: number | null;
  kind: Verdict;
  refundable: number;
  reason: string | null;
  pieces: (ClaimedPiece & RowState)[];
};

/** The statement that decides and claims (see the file's comment). */
function claimStatement<B>(q: Q, store: SQL, memberId: SQL, ask: ClaimAsk<B>) {
  return raw<ClaimRow>(
    q,
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
         when not (${ask.gate?.holds ?? sql`true`}) then 'gate'
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
  );
}

type Attempts = RefundReading["attempts"];

/** The order's facts, its attempts (what processed refunds gave back of each) and its processed refunds' ids. */
function basePlan(q: Q, store: SQL, order: SQL): Plan<{ order: OrderReading | null; attempts: Attempts; processedIds: string[] }> {
  const rest = plan(
    [
      raw<{ id: string; attempt: number; status: AttemptStatus; amount: number; refunded: number }>(
        q,
        sql`select a.id, a.attempt, a.status, a.amount::float8 as amount,
              coalesce((select sum(r.amount) from refund r where r.store_id = a.store_id and r.payment_attempt_id = a.id and r.status = 'processed'), 0)::float8 as refunded
            from payment_attempt a where a.store_id = ${store} and a.order_id = ${order}`,
      ),
      raw<{ id: string }>(q, sql`select r.id from refund r where r.store_id = ${store} and r.order_id = ${order} and r.status = 'processed' order by r.id`),
    ] as const,
    ([attempts, processed]) => ({
      attempts: Object.fromEntries(attempts.map(({ id, ...a }) => [id, a])) as Attempts,
      processedIds: processed.map((r) => r.id),
    }),
  );
  return mapPlan(together({ order: orderReadingPlan(q, store, order), rest }), ({ order, rest }) => ({ order, ...rest }));
}

/** The order's payment attempts (in id order), then the order, locked: the lock order every order writer keeps. */
export function lockSteps(q: Q, store: SQL, order: SQL) {
  return [
    raw(q, sql`select id from payment_attempt where store_id = ${store} and order_id = ${order} order by id for update`),
    raw(q, sql`select 1 from shop_order where store_id = ${store} and id = ${order} for update`),
  ] as const;
}

/**
 * The claim's unit: the order locked (then what `before` locks and reads, e.g. the return), the claim
 * decided and written, and what the second unit decides from. A refusal writes nothing and is thrown.
 */
export function refundClaimPlan<B>(q: Q, store: SQL, memberId: SQL, ask: ClaimAsk<B>, before: Plan<B>): Plan<{ claim: RefundClaim; before: B }> {
  const locks = plan(lockSteps(q, store, ask.order), () => undefined);
  const made = plan([claimStatement(q, store, memberId, ask)] as const, ([[row]]) => row!);
  return mapPlan(together({ locks, before, made, base: basePlan(q, store, ask.order) }), ({ before, made, base }) => {
    const number = made.orderNumber ?? 0;
    switch (made.kind) {
      case "not_found":
        throw orderNotFound();
      case "gate":
        throw ask.gate!.refused(before);
      case "in_progress":
        throw conflict("refund_in_progress", `A refund of order #${number} is on its way to the gateway; reload the order in a minute or two.`);
      case "nothing_to_refund":
        throw conflict("nothing_to_refund", `Order #${number} holds no captured money to refund.`);
      case "exceeds_refundable":
        throw new AppError("CONFLICT", `At most ${made.refundable} (minor units) of order #${number} can be refunded.`, {
          reason: "exceeds_refundable",
          issues: [{ path: "amount", message: `at most ${made.refundable}` }],
        });
    }
    const orderId = made.orderId!;
    const pieces = made.pieces.map(({ status: _status, providerRefundId: _ref, ...piece }) => piece);
    const rows = Object.fromEntries(made.pieces.map((p) => [p.id, { status: p.status, providerRefundId: p.providerRefundId } satisfies RowState]));
    const holders = Object.fromEntries(made.pieces.flatMap((p) => (p.providerRefundId ? [[p.providerRefundId, { id: p.id, status: p.status }]] : [])));
    const reading: RefundReading = { order: { ...base.order!, orderId }, attempts: base.attempts, processedIds: base.processedIds, rows, holders, ret: null };
    return { claim: { orderId, orderNumber: number, returnId: ask.returnId, reason: made.reason, pieces, reading }, before };
  });
}

/**
 * What the second unit decides from, read again after it lost a race: the same reading, the claimed rows
 * as they are now and the rows holding the refund ids the gateway answered (a report may have come first).
 */
export function refundRereadPlan(q: Q, store: SQL, claim: RefundClaim, refundIds: string[]): Plan<RefundReading> {
  const ids = claim.pieces.map((p) => p.id);
  const found = plan(
    [
      raw<{ id: string; status: RowState["status"]; providerRefundId: string | null }>(
        q,
        sql`select id, status, provider_refund_id as "providerRefundId" from refund
            where store_id = ${store} and (id = any(${sql.param(ids)}::uuid[]) or provider_refund_id = any(${sql.param(refundIds)}::text[]))`,
      ),
      raw<{ id: string; number: number; status: string }>(
        q,
        claim.returnId ? sql`select id, number, status from order_return where store_id = ${store} and id = ${claim.returnId}` : sql`select null::uuid as id where false`,
      ),
    ] as const,
    ([rows, [ret]]) => ({ rows, ret: ret ?? null }),
  );
  return mapPlan(together({ base: basePlan(q, store, sql`${claim.orderId}::uuid`), found }), ({ base, found }) => {
    if (!base.order) throw orderNotFound();
    const mine = new Set(ids);
    return {
      order: { ...base.order, orderId: claim.orderId },
      attempts: base.attempts,
      processedIds: base.processedIds,
      rows: Object.fromEntries(found.rows.filter((r) => mine.has(r.id)).map(({ id, status, providerRefundId }) => [id, { status, providerRefundId }])),
      holders: Object.fromEntries(found.rows.filter((r) => r.providerRefundId !== null && refundIds.includes(r.providerRefundId)).map((r) => [r.providerRefundId!, { id: r.id, status: r.status }])),
      ret: found.ret,
    };
  });
}
