import { and, eq, type SQL } from "drizzle-orm";
import { mapPlan, plan, together, type Plan } from "../db/plan";
import { refund } from "../db/schema";
import { sql, type Q } from "../db/steps";
import { AppError } from "../core/errors";
import { conflict, lockAttemptsStep, lockOrderStep } from "./actions";
import { orderNotFound } from "./order-detail";
import { orderReadingPlan, type OrderReading } from "./routines";
import type { AttemptStatus } from "../rules/status";
import { attemptsWithRefunded, claimRefund, refundRowsNow, returnNow, type ClaimedPiece, type RowState } from "./statements/refunds";

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
export type { ClaimedPiece, RowState } from "./statements/refunds";
export { CLAIM_LEASE } from "./statements/refunds";

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

/** The statement that decides and claims (see the file's comment). */
function claimStatement<B>(q: Q, store: SQL, memberId: SQL, ask: ClaimAsk<B>) {
  return claimRefund(q, store, memberId, { order: ask.order, amount: ask.amount, reason: ask.reason, returnId: ask.returnId, gate: ask.gate?.holds });
}

type Attempts = RefundReading["attempts"];

/** The order's facts, its attempts (what processed refunds gave back of each) and its processed refunds' ids. */
function basePlan(q: Q, store: SQL, order: SQL): Plan<{ order: OrderReading | null; attempts: Attempts; processedIds: string[] }> {
  const rest = plan(
    [
      attemptsWithRefunded(q, store, order),
      q
        .select({ id: refund.id })
        .from(refund)
        .where(and(eq(refund.storeId, store), eq(refund.orderId, order), eq(refund.status, "processed")))
        .orderBy(refund.id),
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
    lockAttemptsStep(q, store, order),
    lockOrderStep(q, store, order),
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
      refundRowsNow(q, store, ids, refundIds),
      // No return: `id = null` finds no row.
      returnNow(q, store, claim.returnId),
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
