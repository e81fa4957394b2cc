import { emit } from "../db/outbox";
import type { StoreTx } from "../db/with-store";
import { lockOrder } from "./actions";
import { addTask } from "./tasks";

/**
 * Pre-orders paid by deposit (docs/order-status.md, "Pre-orders"). With the store's
 * `preorder_deposit_percent` under 100, an order's backordered pre-order units are paid in part at
 * checkout; the balance is asked for when their stock arrives at the parcel's location, reminded after
 * 3 days, and after 7 days unpaid the units the job reserved go back and the merchant decides.
 */

const DAY_MS = 86_400_000;
/** A requested balance is reminded this long after it was requested… */
export const BALANCE_REMINDER_AFTER_MS = 3 * DAY_MS;
/** …and given up this long after it was requested. */
export const BALANCE_EXPIRES_AFTER_MS = 7 * DAY_MS;

export interface BalancePart {
  /** What the parcel line pays: its units' price less its share of the discount, minor units. */
  value: number;
  quantity: number;
  /** How many of its units were backordered. */
  backordered: number;
}

/**
 * The part of the total left for later: the backordered units' share of their lines' value, less the
 * deposit (percent of that share, rounded half up, at least one minor unit). The rest of the order,
 * shipping included, is paid in full at checkout. 100 percent, or nothing backordered: 0.
 */
export function preorderBalance(parts: readonly BalancePart[], depositPercent: number): number {
  if (depositPercent >= 100) return 0;
  const share = parts.reduce((sum, p) => sum + (p.backordered > 0 ? Math.round((p.value * p.backordered) / p.quantity) : 0), 0);
  if (share === 0) return 0;
  return share - Math.max(1, Math.round((share * depositPercent) / 100));
}

interface BalanceOrder {
  number: number;
  paymentMethod: string;
  total: number;
  captured: number;
  provider: string | null;
  due: boolean;
}

/**
 * The order's balance facts, read after `lockOrder`. `due` holds when the order is open, its deposit is in
 * (partially paid), a balance is set and it was neither expired nor, unless `requested`, asked for yet.
 */
async function balanceOrder(tx: StoreTx, orderId: string, requested: boolean): Promise<BalanceOrder | null> {
  const { rows } = await tx.$client.query<BalanceOrder>(
    `select o.number, o.payment_method as "paymentMethod", o.total::float8 as total,
       (select coalesce(sum(a.amount), 0)::float8 from payment_attempt a where a.store_id = o.store_id and a.order_id = o.id
          and a.status in ('captured', 'refunded')) as captured,
       (select a.provider from payment_attempt a where a.store_id = o.store_id and a.order_id = o.id order by a.attempt limit 1) as provider,
       (o.status = 'open' and o.payment_status = 'partially_paid' and o.balance_amount > 0 and o.balance_expired_at is null
          and (o.balance_requested_at is not null) = $3) as due
     from shop_order o where o.store_id = $1 and o.id = $2`,
    [tx.storeId, orderId, requested],
  );
  return rows[0] ?? null;
}

/**
 * The store's deposit-paid orders with work, oldest first: `waiting` ones whose backordered units have
 * stock at their parcel's location now, and `ripe` ones whose balance was requested before `expireBefore`.
 */
export async function balanceWork(tx: StoreTx, expireBefore: Date, limit: number): Promise<{ waiting: string[]; ripe: string[] }> {
  const { rows } = await tx.$client.query<{ id: string; ripe: boolean }>(
    `select o.id, o.balance_requested_at is not null as ripe from shop_order o
     where o.store_id = $1 and o.status = 'open' and o.payment_status = 'partially_paid' and o.balance_amount > 0
       and o.balance_expired_at is null and (o.balance_requested_at <= $2 or (o.balance_requested_at is null and exists (
         select 1 from fulfillment_order f
         join fulfillment_order_line fl on fl.store_id = f.store_id and fl.fulfillment_order_id = f.id and fl.reserved < fl.quantity
         join order_line ol on ol.store_id = fl.store_id and ol.id = fl.order_line_id
         join inventory_level il on il.store_id = f.store_id and il.variant_id = ol.variant_id and il.location_id = f.location_id
           and il.on_hand > il.reserved
         where f.store_id = o.store_id and f.order_id = o.id)))
     order by o.placed_at, o.id limit $3`,
    [tx.storeId, expireBefore, limit],
  );
  return { waiting: rows.filter((r) => !r.ripe).map((r) => r.id), ripe: rows.filter((r) => r.ripe).map((r) => r.id) };
}

interface HeldLine {
  flId: string;
  levelId: string | null;
  variantId: string | null;
  locationId: string | null;
  /** Units this run may take or must give back. */
  wanted: number;
}

/**
 * The order's parcel lines matching `where` (a fixed condition of this file, never input) with their
 * stock row at the parcel's location; the lines, then the stock rows, locked in id order.
 */
async function lockLines(tx: StoreTx, orderId: string, wanted: string, where: string): Promise<(HeldLine & { available: number })[]> {
  const { rows } = await tx.$client.query<HeldLine>(
    `select fl.id as "flId", il.id as "levelId", ol.variant_id as "variantId", f.location_id as "locationId", (${wanted})::int as wanted
     from fulfillment_order_line fl
     join fulfillment_order f on f.store_id = fl.store_id and f.id = fl.fulfillment_order_id
     join order_line ol on ol.store_id = fl.store_id and ol.id = fl.order_line_id
     left join inventory_level il on il.store_id = fl.store_id and il.variant_id = ol.variant_id and il.location_id = f.location_id
     where fl.store_id = $1 and f.order_id = $2 and ${where}
     order by fl.id for update of fl`,
    [tx.storeId, orderId],
  );
  const levelIds = [...new Set(rows.flatMap((r) => (r.levelId ? [r.levelId] : [])))];
  const { rows: levels } = await tx.$client.query<{ id: string; on_hand: number; reserved: number }>(
    "select id, on_hand, reserved from inventory_level where store_id = $1 and id = any($2::uuid[]) order by id for update",
    [tx.storeId, levelIds],
  );
  const level = new Map(levels.map((l) => [l.id, l]));
  return rows.map((r) => {
    const l = level.get(r.levelId ?? "");
    return { ...r, available: l ? Math.max(l.on_hand - l.reserved, 0) : 0 };
  });
}

/** Moves `delta` units per parcel line into (positive) or out of (negative) its reservation and its stock row's. */
async function shiftReservations(tx: StoreTx, moves: { flId: string; levelId: string | null; delta: number }[]): Promise<void> {
  if (moves.length === 0) return;
  await tx.$client.query(
    `with x as (select * from jsonb_to_recordset($2::jsonb) as x(fl uuid, level uuid, delta int)),
     levels as (update inventory_level il set reserved = greatest(il.reserved + y.delta, 0), updated_at = now()
                from (select level, sum(delta)::int as delta from x group by level) y where il.store_id = $1 and il.id = y.level)
     update fulfillment_order_line fl set reserved = fl.reserved + x.delta from x where fl.store_id = $1 and fl.id = x.fl`,
    [tx.storeId, JSON.stringify(moves.map((m) => ({ fl: m.flId, level: m.levelId, delta: m.delta })))],
  );
}

export type BalanceStep = { reserved: number; requested: boolean; attemptId?: string };

/**
 * Reserves what has arrived of a deposit-paid order's backordered units at their parcel's location (the
 * oldest order first, as the job calls it), and once every one of them is held, asks for the balance:
 * a new payment attempt for what is left to pay, and `order.balance_requested`. Re-checked under the
 * order's lock, so a second run (or a race) finds nothing to do.
 */
export async function requestBalance(tx: StoreTx, orderId: string, now: Date): Promise<BalanceStep> {
  await lockOrder(tx, orderId);
  const order = await balanceOrder(tx, orderId, false);
  if (!order?.due) return { reserved: 0, requested: false };
  const lines = await lockLines(tx, orderId, "fl.quantity - fl.reserved", "fl.reserved < fl.quantity");
  const free = new Map(lines.flatMap((l) => (l.levelId ? [[l.levelId, l.available] as const] : [])));
  const moves: { flId: string; levelId: string; delta: number; variantId: string | null; locationId: string | null }[] = [];
  for (const l of lines) {
    const take = l.levelId ? Math.min(l.wanted, free.get(l.levelId)!) : 0;
    if (take === 0) continue;
    free.set(l.levelId!, free.get(l.levelId!)! - take);
    moves.push({ flId: l.flId, levelId: l.levelId!, delta: take, variantId: l.variantId, locationId: l.locationId });
  }
  await shiftReservations(tx, moves);
  const reserved = moves.reduce((n, m) => n + m.delta, 0);
  if (reserved > 0) {
    await emit(tx, "inventory.reserved", { orderId, items: moves.map((m) => ({ variantId: m.variantId, locationId: m.locationId, quantity: m.delta })) });
  }
  if (reserved < lines.reduce((n, l) => n + l.wanted, 0)) return { reserved, requested: false };

  const amount = Math.max(order.total - order.captured, 0);
  const provider = order.paymentMethod === "gateway" && order.provider ? order.provider : "manual_transfer";
  const { rows } = await tx.$client.query<{ id: string }>(
    `with attempt as (
       insert into payment_attempt (store_id, order_id, attempt, idempotency_key, provider, amount)
       select $1, $2, n, $2::text || ':' || n, $3, $4
       from (select coalesce(max(attempt), 0) + 1 as n from payment_attempt where store_id = $1 and order_id = $2) a
       returning id)
     update shop_order o set balance_requested_at = $5, updated_at = now() from attempt where o.store_id = $1 and o.id = $2
     returning attempt.id`,
    [tx.storeId, orderId, provider, amount, now],
  );
  const attemptId = rows[0]!.id;
  const dueBy = new Date(now.getTime() + BALANCE_EXPIRES_AFTER_MS).toISOString();
  await emit(tx, "order.balance_requested", { orderId, number: order.number, amount, attemptId, paymentMethod: order.paymentMethod, dueBy });
  return { reserved, requested: true, attemptId };
}

/**
 * Writes `order.balance_reminder` once for each of the store's balances requested at least 3 days and
 * less than 7 days before `now` and still unpaid. The reminder mark is set by the same guarded statement,
 * so a re-run (or a racing run) reminds nobody twice. Returns how many were reminded.
 */
export async function remindBalances(tx: StoreTx, now: Date, limit: number): Promise<number> {
  const { rows } = await tx.$client.query<{ id: string; number: number; amount: number; requested_at: Date }>(
    `update shop_order o set balance_reminded_at = $2
     where o.store_id = $1 and o.id in (
         select id from shop_order where store_id = $1 and status = 'open' and payment_status = 'partially_paid' and balance_amount > 0
           and balance_expired_at is null and balance_reminded_at is null and balance_requested_at <= $3 and balance_requested_at > $4
         order by balance_requested_at limit $5)
       and o.status = 'open' and o.payment_status = 'partially_paid' and o.balance_reminded_at is null and o.balance_expired_at is null
     returning o.id, o.number, o.balance_requested_at as requested_at,
       (o.total - (select coalesce(sum(a.amount), 0) from payment_attempt a where a.store_id = o.store_id and a.order_id = o.id
                    and a.status in ('captured', 'refunded')))::float8 as amount`,
    [tx.storeId, now, new Date(now.getTime() - BALANCE_REMINDER_AFTER_MS), new Date(now.getTime() - BALANCE_EXPIRES_AFTER_MS), limit],
  );
  for (const r of rows) {
    const dueBy = new Date(new Date(r.requested_at).getTime() + BALANCE_EXPIRES_AFTER_MS).toISOString();
    await emit(tx, "order.balance_reminder", { orderId: r.id, number: r.number, amount: r.amount, dueBy });
  }
  return rows.length;
}

/**
 * A balance still unpaid 7 days after it was requested: the units the job reserved for it go back to
 * stock (what was reserved at checkout stays held), the order keeps its deposit and stays open, and the
 * merchant gets a `balance_expired` task (refund the deposit and cancel, or take the balance by hand).
 * Writes `order.balance_expired` and `inventory.released` once: re-checked under the order's lock.
 */
export async function expireBalance(tx: StoreTx, orderId: string, now: Date): Promise<boolean> {
  await lockOrder(tx, orderId);
  const order = await balanceOrder(tx, orderId, true);
  if (!order?.due) return false;
  const { rows: ripe } = await tx.$client.query<{ ok: boolean }>(
    "select balance_requested_at <= $3 as ok from shop_order where store_id = $1 and id = $2",
    [tx.storeId, orderId, new Date(now.getTime() - BALANCE_EXPIRES_AFTER_MS)],
  );
  if (!ripe[0]?.ok) return false;
  // What the job reserved: a line's reservation beyond the units that were in stock at checkout.
  const lines = await lockLines(tx, orderId, "fl.reserved - (fl.quantity - fl.backordered)", "fl.reserved > fl.quantity - fl.backordered");
  await shiftReservations(tx, lines.map((l) => ({ flId: l.flId, levelId: l.levelId, delta: -l.wanted })));
  await tx.$client.query("update shop_order set balance_expired_at = $3, updated_at = now() where store_id = $1 and id = $2", [tx.storeId, orderId, now]);
  const amount = Math.max(order.total - order.captured, 0);
  await emit(tx, "order.balance_expired", { orderId, number: order.number, amount });
  await emit(tx, "inventory.released", {
    orderId,
    items: lines.map((l) => ({ variantId: l.variantId, locationId: l.locationId, quantity: l.wanted })),
  });
  await addTask(tx, {
    kind: "balance_expired",
    orderId,
    subjectId: orderId,
    title: `Order #${order.number}: the pre-order balance was not paid within 7 days and its units went back to stock. Refund the deposit and cancel, or take the balance by hand.`,
  });
  return true;
}
