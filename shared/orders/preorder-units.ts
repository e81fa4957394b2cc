import type { SQL } from "drizzle-orm";
import { emitStep, markEmits, unchanged } from "../db/changes";
import { plan, type Plan } from "../db/plan";
import { raw, sql, type Q, type Step } from "../db/steps";
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

export interface BalanceLine {
  flId: string;
  levelId: string | null;
  variantId: string | null;
  locationId: string | null;
  /** The line's reservation as read. */
  reserved: number;
  /** Units this run may take (a waiting order) or must give back (a ripe one). */
  wanted: number;
  onHand: number;
  levelReserved: number;
}

export type BalanceOrder = {
  id: string;
  /** Its balance was requested long enough ago to give up (else it waits for stock). */
  ripe: boolean;
  number: number;
  paymentMethod: string;
  total: number;
  captured: number;
  provider: string | null;
  /** When its balance was requested (epoch seconds, as text), as the change checks it again. */
  requestedAt: string | null;
  lines: BalanceLine[];
};

/** Which orders: the store's work list (the job's), or one order in one role (a direct call). */
export type BalanceWhich = { expireBefore: Date; limit: number } | { orderId: string; ripe: boolean; expireBefore: Date };

/** An order whose balance is still to be asked for or paid (deposit in, balance set, not given up). */
const open = sql`o.status = 'open' and o.payment_status = 'partially_paid' and o.balance_amount > 0 and o.balance_expired_at is null`;

function workSql(store: SQL, which: BalanceWhich): SQL {
  if ("orderId" in which) {
    const role = which.ripe ? sql`o.balance_requested_at <= ${which.expireBefore}` : sql`o.balance_requested_at is null`;
    return sql`select o.id, ${which.ripe}::boolean as ripe, o.placed_at from shop_order o where o.store_id = ${store} and o.id = ${which.orderId} and ${open} and ${role}`;
  }
  // Waiting orders whose backordered units have stock at their parcel's location now, and ripe ones.
  return sql`select o.id, o.balance_requested_at is not null as ripe, o.placed_at from shop_order o
     where o.store_id = ${store} and ${open} and (o.balance_requested_at <= ${which.expireBefore} or (o.balance_requested_at is null and exists (
       select 1 from fulfillment_order f
       join fulfillment_order_line fl on fl.store_id = f.store_id and fl.fulfillment_order_id = f.id and fl.reserved < fl.quantity
       join order_line ol on ol.store_id = fl.store_id and ol.id = fl.order_line_id
       join inventory_level il on il.store_id = f.store_id and il.variant_id = ol.variant_id and il.location_id = f.location_id
         and il.on_hand > il.reserved
       where f.store_id = o.store_id and f.order_id = o.id)))
     order by o.placed_at, o.id limit ${which.limit}`;
}

/** The orders with balance work, oldest first, each with the parcel lines it would reserve or give back. */
export function balanceReadingPlan(q: Q, store: SQL, which: BalanceWhich): Plan<BalanceOrder[]> {
  return plan(
    [
      raw<BalanceOrder>(
        q,
        sql`with work as (${workSql(store, which)})
            select w.id, w.ripe, o.number, o.payment_method as "paymentMethod", o.total::float8 as total,
              (select coalesce(sum(a.amount), 0)::float8 from payment_attempt a where a.store_id = o.store_id and a.order_id = o.id
                 and a.status in ('captured', 'refunded')) as captured,
              (select a.provider from payment_attempt a where a.store_id = o.store_id and a.order_id = o.id order by a.attempt limit 1) as provider,
              extract(epoch from o.balance_requested_at)::text as "requestedAt",
              coalesce((select json_agg(json_build_object('flId', fl.id, 'levelId', il.id, 'variantId', ol.variant_id, 'locationId', f.location_id,
                          'reserved', fl.reserved, 'wanted', case when w.ripe then fl.reserved - (fl.quantity - fl.backordered) else fl.quantity - fl.reserved end,
                          'onHand', coalesce(il.on_hand, 0), 'levelReserved', coalesce(il.reserved, 0)) order by fl.id)
                        from fulfillment_order_line fl
                        join fulfillment_order f on f.store_id = fl.store_id and f.id = fl.fulfillment_order_id
                        join order_line ol on ol.store_id = fl.store_id and ol.id = fl.order_line_id
                        left join inventory_level il on il.store_id = fl.store_id and il.variant_id = ol.variant_id and il.location_id = f.location_id
                        where fl.store_id = o.store_id and f.order_id = o.id
                          and case when w.ripe then fl.reserved > fl.quantity - fl.backordered else fl.reserved < fl.quantity end), '[]'::json) as lines
            from work w join shop_order o on o.store_id = ${store} and o.id = w.id
            order by w.placed_at, w.id`,
      ),
    ] as const,
    ([rows]) => rows,
  );
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
  const ids = (list: string[]) => sql`${sql.param(list)}::uuid[]`;
  const guards: Step[] = orders.length === 0 ? [] : [
    raw(q, sql`select id from shop_order where store_id = ${store} and id = any(${ids(orders.map((o) => o.id))}) order by id for update`),
    raw(q, sql`select id from fulfillment_order_line where store_id = ${store} and id = any(${ids(lines.map((l) => l.flId))}) order by id for update`),
    raw(q, sql`select id from inventory_level where store_id = ${store} and id = any(${ids(levels)}) order by id for update`),
    unchanged(
      q,
      sql`(select count(*) from shop_order o join jsonb_to_recordset(${json(orders.map((o) => ({ id: o.id, requested: o.requestedAt, captured: o.captured })))})
             as x(id uuid, requested text, captured float8) on x.id = o.id
           where o.store_id = ${store} and ${open} and extract(epoch from o.balance_requested_at)::text is not distinct from x.requested
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
  return raw(
    q,
    sql`with x as (select * from jsonb_to_recordset(${json(moves.map((m) => ({ fl: m.flId, level: m.levelId, delta: m.delta })))}) as x(fl uuid, level uuid, delta int)),
        levels as (update inventory_level il set reserved = greatest(il.reserved + y.delta, 0), updated_at = now()
                   from (select level, sum(delta)::int as delta from x group by level) y where il.store_id = ${store} and il.id = y.level)
        update fulfillment_order_line fl set reserved = fl.reserved + x.delta from x where fl.store_id = ${store} and fl.id = x.fl`,
  );
}

const itemsOf = (moves: readonly Move[], sign = 1) => moves.map((m) => ({ variantId: m.variantId, locationId: m.locationId, quantity: sign * m.delta }));

function reserveSteps(q: Q, store: SQL, step: Extract<BalanceStep, { kind: "reserve" }>, now: Date): Step[] {
  const { order, request } = step;
  const out: Step[] = step.reserved > 0 ? [emitStep(q, "inventory.reserved", { orderId: order.id, items: itemsOf(step.moves) })] : [];
  if (!request) return out;
  const dueBy = new Date(now.getTime() + BALANCE_EXPIRES_AFTER_MS).toISOString();
  return [
    ...out,
    raw(
      q,
      sql`with attempt as (
            insert into payment_attempt (id, store_id, order_id, attempt, idempotency_key, provider, amount)
            select ${request.attemptId}::uuid, ${store}, ${order.id}::uuid, n, ${order.id}::text || ':' || n, ${request.provider}, ${request.amount}::bigint
            from (select coalesce(max(attempt), 0) + 1 as n from payment_attempt where store_id = ${store} and order_id = ${order.id}) a)
          update shop_order set balance_requested_at = ${now}, updated_at = now() where store_id = ${store} and id = ${order.id}`,
    ),
    emitStep(q, "order.balance_requested", { orderId: order.id, number: order.number, amount: request.amount, attemptId: request.attemptId, paymentMethod: order.paymentMethod, dueBy }),
  ];
}

function expireSteps(q: Q, store: SQL, step: Extract<BalanceStep, { kind: "expire" }>, now: Date): Step[] {
  const { order } = step;
  return [
    raw(q, sql`update shop_order set balance_expired_at = ${now}, updated_at = now() where store_id = ${store} and id = ${order.id}`),
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
    raw<{ n: number }>(
      q,
      sql`with reminded as (
            update shop_order o set balance_reminded_at = ${now}
            where o.store_id = ${store} and o.id in (
                select id from shop_order where store_id = ${store} and status = 'open' and payment_status = 'partially_paid' and balance_amount > 0
                  and balance_expired_at is null and balance_reminded_at is null
                  and balance_requested_at <= ${new Date(now.getTime() - BALANCE_REMINDER_AFTER_MS)} and balance_requested_at > ${new Date(now.getTime() - BALANCE_EXPIRES_AFTER_MS)}
                order by balance_requested_at limit ${limit})
              and o.status = 'open' and o.payment_status = 'partially_paid' and o.balance_reminded_at is null and o.balance_expired_at is null
            returning o.id, o.number, o.balance_requested_at,
              o.total - (select coalesce(sum(a.amount), 0) from payment_attempt a where a.store_id = o.store_id and a.order_id = o.id
                          and a.status in ('captured', 'refunded')) as amount),
          events as (
            insert into outbox_event (store_id, kind, payload)
            select ${store}, 'order.balance_reminder', jsonb_build_object('orderId', id, 'number', number, 'amount', amount,
              'dueBy', to_char((balance_requested_at + ${BALANCE_EXPIRES_AFTER_MS} * interval '1 millisecond') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
            from reminded)
        select count(*)::int as n from reminded`,
    ),
  );
}
