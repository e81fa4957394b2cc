import type { SQL } from "drizzle-orm";
import { emitStep, markEmits, unchanged } from "../db/changes";
import { mapPlan, plan, together, type Plan } from "../db/plan";
import { raw, sql, type Q, type Step } from "../db/steps";
import { readingAfter, withShipmentStatus } from "./readings";
import { orderReadingPlan, recomputeSteps, type OrderReading } from "./routines";
import { decideShipmentStatus, type OrderStatuses, type ShipmentStatus } from "../rules/status";

/**
 * The only writer of a shipment's status, whatever reports it (the merchant, a courier webhook, the
 * tracking job), as a reading and a change decided from it (as ./routines.ts does for payments): forward
 * only (decideShipmentStatus), each move kept as a shipment_event, then the order recomputed. A parcel
 * turning back (RTO) writes `order.rto` and an open RTO task for the merchant, once per shipment; a
 * shipment cancelled before pickup puts its units back, held for the order.
 *
 * Lock order, shared with every order writer: payment attempts, then the order, then its parcels and
 * shipments. The change therefore checks (and locks) the order before the shipment, so a merchant's RTO
 * mark and a courier's report for the same parcel queue instead of deadlocking.
 */
export type ShipmentSource = "merchant" | "webhook" | "tracking";

export interface ShipmentReport {
  providerStatus?: string | undefined;
  occurredAt?: string | undefined;
}

export interface ShipmentApplied {
  orderId: string;
  shipmentId: string;
  applied: boolean;
  status: ShipmentStatus;
  order: OrderStatuses;
}

/** A shipment and its order's facts, as read. */
export interface ShipmentReading {
  shipment: {
    id: string;
    orderId: string;
    orderNumber: number;
    status: ShipmentStatus;
    awb: string;
    /** Its place among the order's shipments in the order's facts (they are listed by id). */
    index: number;
  };
  order: OrderReading;
}

/** Which shipment: by id (of this order, when given), or by the courier's tracking number. */
export type ShipmentKey = { id: string; orderId?: string } | { provider: string; awb: string };

function whereOf(store: SQL, key: ShipmentKey): SQL {
  if ("awb" in key) return sql`s.store_id = ${store} and s.provider = ${key.provider} and s.awb = ${key.awb}`;
  return sql`s.store_id = ${store} and s.id = ${key.id}${key.orderId ? sql` and s.order_id = ${key.orderId}` : sql``}`;
}

/** Reads a shipment and its order's facts (with `lock`: the order, then the shipment, locked). */
export function shipmentReadingPlan(q: Q, store: SQL, key: ShipmentKey, lock = false): Plan<ShipmentReading | null> {
  const where = whereOf(store, key);
  const orderId = sql`(select s.order_id from shipment s where ${where})`;
  const read = together({
    // With `lock`, the order is locked by a statement of its own: one that waited for a lock reads other rows as they were when it began.
    lock: lock ? plan([raw(q, sql`select 1 from shop_order where store_id = ${store} and id = ${orderId} for update`)] as const, () => undefined) : plan([], () => undefined),
    order: orderReadingPlan(q, store, orderId, lock),
    shipment: plan(
      [
        raw<{ id: string; order_id: string; number: number; status: ShipmentStatus; awb: string; index: number }>(
          q,
          sql`select s.id, s.order_id, o.number, s.status, s.awb,
                (select count(*) from shipment x where x.store_id = s.store_id and x.order_id = s.order_id and x.id < s.id)::int as index
              from shipment s join shop_order o on o.store_id = s.store_id and o.id = s.order_id
              where ${where}${lock ? sql` for update of s` : sql``}`,
        ),
      ] as const,
      ([[row]]) => row,
    ),
  });
  return mapPlan(read, ({ order, shipment: s }) =>
    s && order
      ? {
          shipment: { id: s.id, orderId: s.order_id, orderNumber: s.number, status: s.status, awb: s.awb, index: s.index },
          order: { orderId: s.order_id, facts: order.facts },
        }
      : null,
  );
}

/**
 * The shipment routine as a change, decided from `reading`: the order checked as read (and locked), then
 * the shipment; the move, its event row and events; the order's recompute with the shipment's new status.
 */
export function shipmentChange(
  q: Q,
  store: SQL,
  reading: ShipmentReading,
  requested: ShipmentStatus,
  source: ShipmentSource,
  report: ShipmentReport = {},
): { steps: Step[]; applied: ShipmentApplied } {
  const { shipment } = reading;
  const ids = { orderId: shipment.orderId, shipmentId: shipment.id };
  const decision = decideShipmentStatus(shipment.status, requested);
  // Locked first, compared by the next statement (which starts once the lock is held).
  const asRead = [
    raw(q, sql`select 1 from shipment where store_id = ${store} and id = ${shipment.id} for update`),
    unchanged(q, sql`(select status from shipment where store_id = ${store} and id = ${shipment.id}) = ${shipment.status}`),
  ];
  if (!decision.apply) {
    const { guard, steps, next } = recomputeSteps(q, store, reading.order);
    return { steps: [...guard, ...asRead, ...steps], applied: { ...ids, applied: false, status: shipment.status, order: next } };
  }
  const to = decision.to;
  const { guard, steps, next } = recomputeSteps(q, store, reading.order, withShipmentStatus(shipment.index, to));
  const occurredAt = report.occurredAt && !Number.isNaN(Date.parse(report.occurredAt)) ? new Date(report.occurredAt) : new Date();
  const providerStatus = report.providerStatus?.slice(0, 200) ?? null;
  const turnsBack = to === "rto_initiated" || to === "rto_delivered";
  return {
    steps: [
      ...guard,
      ...asRead,
      raw(
        q,
        sql`update shipment set status = ${to}, provider_status = coalesce(${providerStatus}, provider_status), status_at = ${occurredAt}, updated_at = now()
            where store_id = ${store} and id = ${shipment.id}`,
      ),
      raw(
        q,
        sql`insert into shipment_event (store_id, shipment_id, status, provider_status, source, occurred_at)
            values (${store}, ${shipment.id}, ${to}, ${providerStatus}, ${source}, ${occurredAt})`,
      ),
      ...(turnsBack ? [rtoStep(q, store, reading, to, source)] : []),
      ...(to === "cancelled" ? [putBackStep(q, store, shipment.id)] : []),
      emitStep(q, `shipment.${to}`, { ...ids, awb: shipment.awb, source }),
      ...steps,
    ],
    applied: { ...ids, applied: true, status: to, order: next },
  };
}

/** The order as a change of `reading` that answered `applied` leaves it (for a later change of the same unit). */
export function orderAfter(reading: ShipmentReading, applied: ShipmentApplied): OrderReading {
  return readingAfter(reading.order, applied.order, applied.applied ? withShipmentStatus(reading.shipment.index, applied.status) : undefined);
}

/** The merchant's RTO task, and `order.rto` only when the task is new (once per shipment). */
function rtoStep(q: Q, store: SQL, { shipment }: ShipmentReading, to: ShipmentStatus, source: ShipmentSource): Step {
  const title = `Order #${shipment.orderNumber}: parcel ${shipment.awb} is coming back to you (RTO). Check it in when it arrives, then refund or reship.`;
  const payload = { orderId: shipment.orderId, shipmentId: shipment.id, awb: shipment.awb, status: to, source };
  return markEmits(
    raw(
      q,
      sql`with task as (
            insert into merchant_task (store_id, kind, order_id, subject_id, title) values (${store}, 'rto', ${shipment.orderId}, ${shipment.id}, ${title.slice(0, 300)})
            on conflict (store_id, kind, subject_id) do nothing returning id)
          insert into outbox_event (store_id, kind, payload) select ${store}, 'order.rto', ${JSON.stringify(payload)}::jsonb from task`,
    ),
  );
}

/**
 * The parcel's units go back on the shelf, held for the order again (a shipment cancelled before pickup):
 * the stock rows locked in id order, each with a `shipment_cancelled` adjustment row.
 */
function putBackStep(q: Q, store: SQL, shipmentId: string): Step {
  return raw(
    q,
    sql`with items as (
          select fl.id as fl, il.id as level, fl.quantity, f.location_id, o.number
          from shipment s
          join fulfillment_order f on f.store_id = s.store_id and f.id = s.fulfillment_order_id
          join shop_order o on o.store_id = s.store_id and o.id = s.order_id
          join fulfillment_order_line fl on fl.store_id = f.store_id and fl.fulfillment_order_id = f.id
          join order_line ol on ol.store_id = fl.store_id and ol.id = fl.order_line_id
          join inventory_level il on il.store_id = fl.store_id and il.variant_id = ol.variant_id and il.location_id = f.location_id
          where s.store_id = ${store} and s.id = ${shipmentId}
          order by il.id for update of il),
        levels as (
          update inventory_level il set on_hand = il.on_hand + items.quantity, reserved = il.reserved + items.quantity, updated_at = now()
          from items where il.store_id = ${store} and il.id = items.level
          returning il.variant_id, il.on_hand, items.quantity, items.location_id, items.number),
        adjusted as (
          insert into inventory_adjustment (store_id, variant_id, location_id, delta, on_hand_after, reason, note)
          select ${store}, variant_id, location_id, quantity, on_hand, 'shipment_cancelled', 'Order #' || number::text from levels)
        update fulfillment_order_line fl set reserved = items.quantity from items where fl.store_id = ${store} and fl.id = items.fl`,
  );
}
