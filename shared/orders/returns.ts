import { emit } from "../db/outbox";
import type { StoreTx } from "../db/with-store";
import { AppError } from "../http/errors";
import type { PaymentGateway } from "../payments/gateway";
import { conflict, lockOrder } from "./actions";
import { refundOrder, type RefundView } from "./refunds";

/**
 * Returns (docs/order-status.md, "Returns"): units of shipped lines coming back, requested → approved or
 * rejected → received (optionally back into stock) → refunded. An order may have several; each step
 * writes `return.<step>` with the returnId, so each gets its own message (SPEC "Events"). Every step locks
 * the order first (the lock order every order writer keeps), then the return.
 */
export const RETURN_STATUSES = ["requested", "approved", "rejected", "received", "refunded"] as const;
export type ReturnStatus = (typeof RETURN_STATUSES)[number];

/** The steps and the states each may start from. */
const FROM: Readonly<Record<"approve" | "reject" | "receive" | "refund", readonly ReturnStatus[]>> = {
  approve: ["requested"],
  reject: ["requested", "approved"],
  receive: ["approved"],
  refund: ["received"],
};

const SHIPPED_STATUSES = ["in_transit", "delivered", "pending"];

export interface ReturnRequest {
  orderId: string;
  lines: { orderLineId: string; quantity: number }[];
  reason: string;
  note?: string | undefined;
}

export async function requestReturn(tx: StoreTx, input: ReturnRequest): Promise<{ returnId: string; number: number }> {
  const order = await lockOrder(tx, input.orderId);
  if (order.status === "cancelled" || order.status === "expired") throw conflict(`order_${order.status}`, `Order #${order.number} is ${order.status}: nothing was sent, so nothing can come back.`);
  // What each line may still return: its units in shipments that left (not cancelled, not back to origin),
  // less the units already in returns that were not rejected.
  const { rows } = await tx.$client.query<{ id: string; title: string; shipped: number; returning: number }>(
    `select ol.id, ol.product_title as title,
       coalesce((select sum(fl.quantity) from fulfillment_order_line fl
                 where fl.store_id = ol.store_id and fl.order_line_id = ol.id
                   and exists (select 1 from shipment s where s.store_id = fl.store_id and s.fulfillment_order_id = fl.fulfillment_order_id
                               and s.status = any($3))), 0)::int as shipped,
       coalesce((select sum(rl.quantity) from order_return_line rl join order_return r on r.store_id = rl.store_id and r.id = rl.return_id
                 where rl.store_id = ol.store_id and rl.order_line_id = ol.id and r.status <> 'rejected'), 0)::int as returning
     from order_line ol where ol.store_id = $1 and ol.order_id = $2`,
    [tx.storeId, order.id, SHIPPED_STATUSES],
  );
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
  const { rows: made } = await tx.$client.query<{ id: string; number: number }>(
    `insert into order_return (store_id, order_id, number, reason, note)
     select $1, $2, coalesce(max(number), 0) + 1, $3, $4 from order_return where store_id = $1 and order_id = $2
     returning id, number`,
    [tx.storeId, order.id, input.reason, input.note ?? null],
  );
  const ret = made[0]!;
  await tx.$client.query(
    `insert into order_return_line (store_id, return_id, order_line_id, quantity)
     select $1, $2, x.line, x.quantity from jsonb_to_recordset($3::jsonb) as x(line uuid, quantity int)`,
    [tx.storeId, ret.id, JSON.stringify(input.lines.map((l) => ({ line: l.orderLineId, quantity: l.quantity })))],
  );
  await emit(tx, "return.requested", { orderId: order.id, returnId: ret.id, number: ret.number });
  return { returnId: ret.id, number: ret.number };
}

interface LockedReturn {
  id: string;
  orderId: string;
  number: number;
  orderNumber: number;
  status: ReturnStatus;
}

async function lockReturn(tx: StoreTx, returnId: string, step: keyof typeof FROM): Promise<LockedReturn> {
  const { rows: found } = await tx.$client.query<{ order_id: string }>("select order_id from order_return where store_id = $1 and id = $2", [tx.storeId, returnId]);
  if (!found[0]) throw new AppError("NOT_FOUND", "No such return in this store.", { issues: [{ path: "returnId", message: "not found" }] });
  const order = await lockOrder(tx, found[0].order_id);
  const { rows } = await tx.$client.query<{ status: ReturnStatus; number: number }>(
    "select status, number from order_return where store_id = $1 and id = $2 for update",
    [tx.storeId, returnId],
  );
  const ret = { id: returnId, orderId: order.id, number: rows[0]!.number, orderNumber: order.number, status: rows[0]!.status };
  if (!FROM[step].includes(ret.status)) {
    throw new AppError("CONFLICT", `Return ${ret.number} of order #${order.number} is ${ret.status}: it cannot be ${step === "refund" ? "refunded" : `${step}d`} (only from ${FROM[step].join(" or ")}).`, {
      reason: `return_${ret.status}`,
      issues: [{ path: "returnId", message: `is ${ret.status}` }],
    });
  }
  return ret;
}

async function move(tx: StoreTx, ret: LockedReturn, to: ReturnStatus, extra: Record<string, unknown> = {}, note?: string): Promise<void> {
  await tx.$client.query(
    "update order_return set status = $3, note = coalesce($4, note), updated_at = now() where store_id = $1 and id = $2",
    [tx.storeId, ret.id, to, note ?? null],
  );
  await emit(tx, `return.${to}`, { orderId: ret.orderId, returnId: ret.id, number: ret.number, ...extra });
}

export async function approveReturn(tx: StoreTx, returnId: string): Promise<void> {
  await move(tx, await lockReturn(tx, returnId, "approve"), "approved");
}

export async function rejectReturn(tx: StoreTx, returnId: string, reason: string): Promise<void> {
  await move(tx, await lockReturn(tx, returnId, "reject"), "rejected", { reason }, `Rejected: ${reason}`);
}

/**
 * The units arrived back. With `restock`, they go back on hand at the location each came from (the
 * parcel's), each with an adjustment row `returned`; damaged goods are received without restocking.
 */
export async function receiveReturn(tx: StoreTx, returnId: string, restock: boolean, memberId: string | null): Promise<void> {
  const ret = await lockReturn(tx, returnId, "receive");
  if (restock) {
    await tx.$client.query(
      `with back as (
         select il.id, rl.quantity from order_return_line rl
         join order_line ol on ol.store_id = rl.store_id and ol.id = rl.order_line_id
         join lateral (select f.location_id from fulfillment_order_line fl
                       join fulfillment_order f on f.store_id = fl.store_id and f.id = fl.fulfillment_order_id
                       where fl.store_id = rl.store_id and fl.order_line_id = ol.id and f.location_id is not null
                       order by f.position limit 1) src on true
         join inventory_level il on il.store_id = rl.store_id and il.variant_id = ol.variant_id and il.location_id = src.location_id
         where rl.store_id = $1 and rl.return_id = $2
         order by il.id for update of il),
       levels as (
         update inventory_level il set on_hand = il.on_hand + back.quantity, updated_at = now()
         from back where il.store_id = $1 and il.id = back.id returning il.variant_id, il.location_id, il.on_hand, back.quantity)
       insert into inventory_adjustment (store_id, variant_id, location_id, delta, on_hand_after, reason, note, member_id)
       select $1, variant_id, location_id, quantity, on_hand, 'returned', $3, $4 from levels`,
      [tx.storeId, returnId, `Return ${ret.number} of order #${ret.orderNumber}`, memberId],
    );
    await tx.$client.query("update order_return set restocked = true where store_id = $1 and id = $2", [tx.storeId, returnId]);
  }
  await move(tx, ret, "received", { restocked: restock });
}

/**
 * Refunds a received return: by default the returned units' value (their unit price less their share of
 * the line's discount), through the order's refund routine, so the money goes back the way it came.
 */
export async function refundReturn(
  tx: StoreTx,
  returnId: string,
  amount: number | undefined,
  gateway: PaymentGateway | undefined,
  memberId: string | null,
): Promise<{ refunds: RefundView[] }> {
  const ret = await lockReturn(tx, returnId, "refund");
  const { rows } = await tx.$client.query<{ value: number }>(
    `select coalesce(sum(rl.quantity * ol.unit_price - (ol.discount * rl.quantity / ol.quantity)), 0)::float8 as value
     from order_return_line rl join order_line ol on ol.store_id = rl.store_id and ol.id = rl.order_line_id
     where rl.store_id = $1 and rl.return_id = $2`,
    [tx.storeId, returnId],
  );
  const { refunds } = await refundOrder(tx, { orderId: ret.orderId, amount: amount ?? Math.floor(rows[0]!.value), reason: `Return ${ret.number}`, returnId }, gateway, memberId);
  await move(tx, ret, "refunded", { amount: refunds.reduce((n, r) => n + r.amount, 0) });
  return { refunds };
}
