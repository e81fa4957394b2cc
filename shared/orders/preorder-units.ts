import { and, eq, type SQL } from "drizzle-orm";
import { emitStep, markEmits, unchanged } from "../db/changes";
import { plan, type Plan } from "../db/plan";
import { shopOrder } from "../db/schema";
import type { RowOfStatement } from "../db/statement";
import { sql, type Q, type Step } from "../db/steps";
import { lockOrders, lockParcelLines, lockStockRows } from "./statements/locks";
import { balanceWork, openBalance, remindBalances, requestBalance, shiftReservations, type BalanceWhich } from "./statements/preorders";
import { addTaskStep } from "./tasks";

/**
 * The pre-order balance work of a store (./preorders.ts) as a reading and a change decided from it: the
 * deposit-paid orders with work and their parcel lines read in one statement; what to reserve, request
 * and give back decided in TypeScript, oldest order first; then one guarded unit writes it all. The
 * change locks the orders, their lines and the stock rows (each in id order) and stops as a lost race
 * when an order, a line or a stock row is no longer as read (the work is then read and decided again).
 */
const DAY_MS = 86_400_000;
/** A requested balance is reminded this long after it was requested… */
export const BALANCE_REMINDER_AFTER_MS = 3 * DAY_MS;
/** …and given up this long after it was requested. */
export const BALANCE_EXPIRES_AFTER_MS = 7 * DAY_MS;

export type { BalanceLine, BalanceWhich } from "./statements/preorders";

export type BalanceOrder = RowOfStatement<typeof balanceWork>;

/** The orders with balance work, oldest first, each with the parcel lines it would reserve or give back. */
export function balanceReadingPlan(q: Q, store: SQL, which: BalanceWhich): Plan<BalanceOrder[]> {
  return plan([balanceWork(q, store, which)] as const, ([rows]) => rows);
}

type Move = { flId: string; levelId: string | null; variantId: string | null; locationId: string | null; delta: number };

/** What one run does to an order: units reserved (and the balance asked for once all are held), or given back. */
export type BalanceStep =
  | { order: BalanceOrder; kind: "reserve"; moves: Move[]; reserved: number; request: { attemptId: string; amount: number; provider: string } | null }
  | { order: BalanceOrder; kind: "expire"; moves: Move[]; amount: number };

/**
 * Decides, oldest order first: a waiting order takes what is free of its stock rows (what an older order
 * took is not free for it), and asks for its balance once every backordered unit is held; a ripe order
 * gives back what the job reserved for it (what was reserved at checkout stays held).
 */
export function decideBalances(orders: readonly BalanceOrder[]): BalanceStep[] {
  const free = new Map<string, number>();
  for (const l of orders.flatMap((o) => o.lines)) if (l.levelId && !free.has(l.levelId)) free.set(l.levelId, Math.max(l.onHand - l.levelReserved, 0));
  const amountOf = (o: BalanceOrder) => Math.max(o.total - o.captured, 0);
  const waiting = orders.filter((o) => !o.ripe).map((order): BalanceStep => {
    const moves: Move[] = [];
    for (const l of order.lines) {
      const take = l.levelId ? Math.min(l.wanted, free.get(l.levelId)!) : 0;
      if (take === 0) continue;
      free.set(l.levelId!, free.get(l.levelId!)! - take);
      moves.push({ flId: l.flId, levelId: l.levelId, variantId: l.variantId, locationId: l.locationId, delta: take });
    }
    const reserved = moves.reduce((n, m) => n + m.delta, 0);
    const all = reserved >= order.lines.reduce((n, l) => n + l.wanted, 0);
    const provider = order.paymentMethod === "gateway" && order.provider ? order.provider : "manual_transfer";
    return { order, kind: "reserve", moves, reserved, request: all ? { attemptId: crypto.randomUUID(), amount: amountOf(order), provider } : null };
  });
  const ripe = orders.filter((o) => o.ripe).map((order): BalanceStep => ({
    order,
    kind: "expire",
    moves: order.lines.map((l) => ({ flId: l.flId, levelId: l.levelId, variantId: l.variantId, locationId: l.locationId, delta: -l.wanted })),
    amount: amountOf(order),
  }));
  return [...waiting, ...ripe];
}

const json = (value: unknown) => sql`${JSON.stringify(value)}::jsonb`;

/** The decided steps as one unit's statements (with the store's reminders, when `remind` is given). */
export function balanceChange(q: Q, store: SQL, steps: readonly BalanceStep[], now: Date, remind?: { limit: number }): Plan<{ reminded: number }> {
  const orders = steps.map((s) => s.order);
  const lines = orders.flatMap((o) => o.lines);
  const moves = steps.flatMap((s) => s.moves);
  const taken = new Map<string, number>();
  for (const m of moves) if (m.delta > 0 && m.levelId) taken.set(m.levelId, (taken.get(m.levelId) ?? 0) + m.delta);
  const takes = [...taken].map(([id, take]) => ({ id, take }));
  const levels = [...new Set(lines.flatMap((l) => (l.levelId ? [l.levelId] : [])))];
  const guards: Step[] = orders.length === 0 ? [] : [
    lockOrders(q, store, orders.map((o) => o.id)),
    lockParcelLines(q, store, lines.map((l) => l.flId)),
    lockStockRows(q, store, levels),
    unchanged(
      q,
      sql`(select count(*) from shop_order o join jsonb_to_recordset(${json(orders.map((o) => ({ id: o.id, requested: o.requestedAt, captured: o.captured })))})
             as x(id uuid, requested text, captured float8) on x.id = o.id
           where o.store_id = ${store} and ${openBalance} and extract(epoch from o.balance_requested_at)::text is not distinct from x.requested
             and (select coalesce(sum(a.amount), 0)::float8 from payment_attempt a where a.store_id = o.store_id and a.order_id = o.id
                    and a.status in ('captured', 'refunded')) = x.captured) = ${orders.length}
          and (select count(*) from fulfillment_order_line fl join jsonb_to_recordset(${json(lines.map((l) => ({ id: l.flId, reserved: l.reserved })))})
                 as x(id uuid, reserved int) on x.id = fl.id where fl.store_id = ${store} and fl.reserved = x.reserved) = ${lines.length}
          and not exists (select 1 from jsonb_to_recordset(${json(takes)}) as x(id uuid, take int)
                          join inventory_level il on il.store_id = ${store} and il.id = x.id where il.on_hand - il.reserved < x.take)`,
    ),
  ];
  const writes = steps.flatMap((s) => (s.kind === "reserve" ? reserveSteps(q, store, s, now) : expireSteps(q, store, s, now)));
  const reminder = remind ? remindStep(q, store, now, remind.limit) : undefined;
  return plan([...guards, ...(moves.length > 0 ? [shiftStep(q, store, moves)] : []), ...writes, ...(reminder ? [reminder] : [])], (results) =>
    ({ reminded: reminder ? (results.at(-1) as { n: number }[])[0]!.n : 0 }),
  );
}

/** Moves `delta` units per parcel line into (positive) or out of (negative) its reservation and its stock row's. */
function shiftStep(q: Q, store: SQL, moves: readonly Move[]): Step {
  return shiftReservations(q, store, moves.map((m) => ({ fl: m.flId, level: m.levelId, delta: m.delta })));
}

const itemsOf = (moves: readonly Move[], sign = 1) => moves.map((m) => ({ variantId: m.variantId, locationId: m.locationId, quantity: sign * m.delta }));

function reserveSteps(q: Q, store: SQL, step: Extract<BalanceStep, { kind: "reserve" }>, now: Date): Step[] {
  const { order, request } = step;
  const out: Step[] = step.reserved > 0 ? [emitStep(q, "inventory.reserved", { orderId: order.id, items: itemsOf(step.moves) })] : [];
  if (!request) return out;
  const dueBy = new Date(now.getTime() + BALANCE_EXPIRES_AFTER_MS).toISOString();
  return [
    ...out,
    requestBalance(q, store, order.id, request, now),
    emitStep(q, "order.balance_requested", { orderId: order.id, number: order.number, amount: request.amount, attemptId: request.attemptId, paymentMethod: order.paymentMethod, dueBy }),
  ];
}

function expireSteps(q: Q, store: SQL, step: Extract<BalanceStep, { kind: "expire" }>, now: Date): Step[] {
  const { order } = step;
  return [
    q
      .update(shopOrder)
      .set({ balanceExpiredAt: now, updatedAt: sql`now()` })
      .where(and(eq(shopOrder.storeId, store), eq(shopOrder.id, order.id))),
    emitStep(q, "order.balance_expired", { orderId: order.id, number: order.number, amount: step.amount }),
    emitStep(q, "inventory.released", { orderId: order.id, items: itemsOf(step.moves, -1) }),
    addTaskStep(q, store, {
      kind: "balance_expired",
      orderId: order.id,
      subjectId: order.id,
      title: `Order #${order.number}: the pre-order balance was not paid within 7 days and its units went back to stock. Refund the deposit and cancel, or take the balance by hand.`,
    }),
  ];
}

/**
 * Writes `order.balance_reminder` once for each of the store's balances requested at least 3 days and
 * less than 7 days before `now` and still unpaid. The reminder mark is set by the same statement that
 * writes the events, so a re-run (or a racing run) reminds nobody twice. Answers how many.
 */
export function remindStep(q: Q, store: SQL, now: Date, limit: number): Step<{ n: number }[]> {
  return markEmits(
    remindBalances(q, store, {
      now,
      remindBefore: new Date(now.getTime() - BALANCE_REMINDER_AFTER_MS),
      expireAfter: new Date(now.getTime() - BALANCE_EXPIRES_AFTER_MS),
      limit,
      expiresAfterMs: BALANCE_EXPIRES_AFTER_MS,
    }),
  );
}
