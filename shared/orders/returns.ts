import { and, eq, type SQL } from "drizzle-orm";
import { emitStep, unchanged } from "../db/changes";
import { mapPlan, plan, type Plan } from "../db/plan";
import { orderReturn, shopOrder } from "../db/schema";
import type { RowOfStatement } from "../db/statement";
import { sql, type Q, type Step } from "../db/steps";
import { AppError } from "../core/errors";
import { conflict, lockOrderStep } from "./actions";
import { orderNotFound } from "./order-detail";
import { refundClaimPlan, type ClaimAsk, type RefundClaim } from "./refund-claims";
import { answered, recordRefunds, type RefundCalls, type RefundView } from "./refund-record";
import { addReturnLines, moveReturn, openReturn, restockReturn, returnableLines, returnableSql, returnWithOrder } from "./statements/returns";

/**
 * Returns (docs/order-status.md, "Returns"): units of shipped lines coming back, requested → approved or
 * rejected → received (optionally back into stock) → refunded. An order may have several; each step
 * writes `return.<step>` with the returnId, so each gets its own message (SPEC "Events"). Each is a reading
 * and a change checked against it (two round trips); every change locks the order first (the lock order
 * every order writer keeps), then the return. A refund claims its rows, calls the gateway, then records
 * (./refund-claims.ts, ./refund-record.ts): two round trips too, the gateway's calls between them.
 */
export const RETURN_STATUSES = ["requested", "approved", "rejected", "received", "refunded"] as const;
export type ReturnStatus = (typeof RETURN_STATUSES)[number];

/** The steps and the states each may start from. */
export type ReturnStep = "approve" | "reject" | "receive" | "refund";
const FROM: Readonly<Record<ReturnStep, readonly ReturnStatus[]>> = {
  approve: ["requested"],
  reject: ["requested", "approved"],
  receive: ["approved"],
  refund: ["received"],
};

export interface ReturnRequest {
  orderId: string;
  lines: { orderLineId: string; quantity: number }[];
  reason: string;
  note?: string | undefined;
}

const json = (value: unknown) => sql`${JSON.stringify(value)}::jsonb`;

/** A return's request checked against the order as read: the order open or completed, each line returnable. */
export function requestReturnPlan(q: Q, store: SQL, input: ReturnRequest): Plan<{ orderId: string }> {
  return plan(
    [
      q
        .select({ id: shopOrder.id, number: shopOrder.number, status: shopOrder.status })
        .from(shopOrder)
        .where(and(eq(shopOrder.storeId, store), eq(shopOrder.id, input.orderId))),
      returnableLines(q, store, input.orderId),
    ] as const,
    ([[order], rows]) => {
      if (!order) throw orderNotFound();
      if (order.status === "cancelled" || order.status === "expired") {
        throw conflict(`order_${order.status}`, `Order #${order.number} is ${order.status}: nothing was sent, so nothing can come back.`);
      }
      const byId = new Map(rows.map((r) => [r.id, r]));
      const issues: { path: string; message: string }[] = [];
      const seen = new Set<string>();
      input.lines.forEach((line, i) => {
        const found = byId.get(line.orderLineId);
        if (!found) return issues.push({ path: `lines.${i}.orderLineId`, message: "not a line of this order" });
        if (seen.has(line.orderLineId)) return issues.push({ path: `lines.${i}.orderLineId`, message: "listed twice" });
        seen.add(line.orderLineId);
        const left = found.shipped - found.returning;
        if (line.quantity > left) issues.push({ path: `lines.${i}.quantity`, message: `${found.title}: at most ${Math.max(0, left)} can be returned (shipped ${found.shipped}, already returning ${found.returning})` });
      });
      if (issues.length > 0) throw new AppError("CONFLICT", "These units cannot be returned.", { reason: "not_returnable", issues });
      return { orderId: order.id };
    },
  );
}

/**
 * Opens the return checked by `requestReturnPlan`: under the order's lock each line must still be
 * returnable (else the request is read and checked again), numbered after the order's other returns.
 */
export function requestReturnChange(q: Q, store: SQL, input: ReturnRequest): Plan<{ returnId: string; number: number }> {
  const returnId = crypto.randomUUID();
  const lineItems = input.lines.map((l) => ({ line: l.orderLineId, quantity: l.quantity }));
  const lines = json(lineItems);
  return plan(
    [
      // The order locked first; the next statement, which starts once the lock is held, sees every return before this one.
      lockOrderStep(q, store, input.orderId),
      unchanged(
        q,
        sql`(select status from shop_order where store_id = ${store} and id = ${input.orderId}) not in ('cancelled', 'expired')
            and not exists (select 1 from jsonb_to_recordset(${lines}) as x(line uuid, quantity int) left join (${returnableSql(store, input.orderId)}) r on r.id = x.line
                            where r.id is null or r.shipped - r.returning < x.quantity)`,
      ),
      openReturn(q, store, { returnId, orderId: input.orderId, reason: input.reason, note: input.note ?? null }),
      addReturnLines(q, store, returnId, lineItems),
      emitStep(q, "return.requested", sql`(select jsonb_build_object('orderId', order_id, 'returnId', id, 'number', number) from order_return where store_id = ${store} and id = ${returnId})`),
    ] as const,
    ([, , [made]]) => ({ returnId: made!.id, number: made!.number }),
  );
}

export type ReturnRow = RowOfStatement<typeof returnWithOrder>;

/** A return of the store with its order's number (with `lock`, the return row locked); null when none. */
export function returnPlan(q: Q, store: SQL, returnId: string, lock = false): Plan<ReturnRow | null> {
  return plan(
    [
      returnWithOrder(q, store, returnId, lock),
    ] as const,
    ([[row]]) => row ?? null,
  );
}

const noSuchReturn = () => new AppError("NOT_FOUND", "No such return in this store.", { issues: [{ path: "returnId", message: "not found" }] });

/** Why `step` may not start from the return's status (NOT_FOUND or CONFLICT), or null when it may. */
function refusalOf(ret: ReturnRow | null, step: ReturnStep): AppError | null {
  if (!ret) return noSuchReturn();
  if (FROM[step].includes(ret.status)) return null;
  return new AppError("CONFLICT", `Return ${ret.number} of order #${ret.orderNumber} is ${ret.status}: it cannot be ${step === "refund" ? "refunded" : `${step}d`} (only from ${FROM[step].join(" or ")}).`, {
    reason: `return_${ret.status}`,
    issues: [{ path: "returnId", message: `is ${ret.status}` }],
  });
}

/** The return, when `step` may start from its status; else NOT_FOUND or CONFLICT. */
export function returnFor(ret: ReturnRow | null, step: ReturnStep): ReturnRow {
  const refused = refusalOf(ret, step);
  if (refused) throw refused;
  return ret!;
}

/** The order, then the return, locked; the return still as read (else it is read and checked again). */
export function returnAsRead(q: Q, store: SQL, ret: ReturnRow): Step[] {
  return [
    lockOrderStep(q, store, ret.orderId),
    q
      .select({ id: orderReturn.id })
      .from(orderReturn)
      .where(and(eq(orderReturn.storeId, store), eq(orderReturn.id, ret.id)))
      .for("update"),
    unchanged(q, sql`(select status from order_return where store_id = ${store} and id = ${ret.id}) = ${ret.status}`),
  ];
}

/** The return moves to `to`, with its `return.<to>` event (the returnId and number in it). */
export function moveSteps(q: Q, store: SQL, ret: ReturnRow, to: ReturnStatus, extra: Record<string, unknown> = {}, note?: string): Step[] {
  return [
    moveReturn(q, store, ret.id, to, note ?? null),
    emitStep(q, `return.${to}`, { orderId: ret.orderId, returnId: ret.id, number: ret.number, ...extra }),
  ];
}

/**
 * The units arrived back: they go back on hand at the location each came from (the parcel's), each with
 * an adjustment row `returned`. (Damaged goods are received without these steps.)
 */
export function restockSteps(q: Q, store: SQL, ret: ReturnRow, memberId: SQL): Step[] {
  return [
    restockReturn(q, store, ret.id, `Return ${ret.number} of order #${ret.orderNumber}`, memberId),
    q.update(orderReturn).set({ restocked: true }).where(and(eq(orderReturn.storeId, store), eq(orderReturn.id, ret.id))),
  ];
}

/**
 * The claim of a received return's refund (./refund-claims.ts): by default the returned units' value
 * (their unit price less their share of the line's discount), through the order's refund, so the money
 * goes back the way it came. The order is locked first, then the return, which must be received.
 */
export function returnRefundClaimPlan(q: Q, store: SQL, memberId: SQL, input: { returnId: string; amount?: number | undefined }): Plan<RefundClaim> {
  const worth = sql`(select floor(coalesce(sum(rl.quantity * ol.unit_price - (ol.discount * rl.quantity / ol.quantity)), 0)::float8)
     from order_return_line rl join order_line ol on ol.store_id = rl.store_id and ol.id = rl.order_line_id
     where rl.store_id = ${store} and rl.return_id = ${input.returnId})`;
  const ask: ClaimAsk<ReturnRow | null> = {
    order: sql`(select order_id from order_return where store_id = ${store} and id = ${input.returnId})`,
    amount: input.amount === undefined ? worth : sql`${input.amount}`,
    reason: sql`(select 'Return ' || number from order_return where store_id = ${store} and id = ${input.returnId})`,
    returnId: input.returnId,
    gate: {
      holds: sql`exists (select 1 from order_return where store_id = ${store} and id = ${input.returnId} and status = 'received')`,
      // The gate and the return as locked read the same row: they agree.
      refused: (ret) => refusalOf(ret, "refund") ?? orderNotFound(),
    },
  };
  return mapPlan(refundClaimPlan(q, store, memberId, ask, returnPlan(q, store, input.returnId, true)), ({ claim, before }) => ({
    ...claim,
    reading: { ...claim.reading, ret: before && { id: before.id, number: before.number, status: before.status } },
  }));
}

/**
 * The record of a return's refund (./refund-record.ts), then the return moved to `refunded` with its
 * event (the amount refunded in it): answers the return's new status and the refunds.
 */
export function returnRefundChange(q: Q, store: SQL, memberId: SQL, calls: RefundCalls): Plan<{ returnId: string; status: "refunded"; refunds: RefundView[] }> {
  const made = recordRefunds(q, store, memberId, calls);
  const { claim } = calls;
  const ret = claim.reading.ret;
  const row: ReturnRow | null = ret && { id: ret.id, orderId: claim.orderId, number: ret.number, orderNumber: claim.orderNumber, status: ret.status as ReturnStatus };
  // Moved once, by the call whose refund went through (a repeated call finds it moved already).
  const moves = row && !made.failure && row.status === "received";
  const move = moves ? [...returnAsRead(q, store, row), ...moveSteps(q, store, row, "refunded", { amount: made.refunds.reduce((n, r) => n + r.amount, 0) })] : [];
  return plan([...made.steps, ...move], () => ({ returnId: claim.returnId!, status: "refunded" as const, refunds: answered(made) }));
}
