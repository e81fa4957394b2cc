import { and, eq, type SQL } from "drizzle-orm";
import { emitStep, markEmits, unchanged } from "../db/changes";
import { mapPlan, plan, together, type Plan } from "../db/plan";
import { shipment as shipmentTable, shipmentEvent } from "../db/schema";
import { sql, type Q, type Step } from "../db/steps";
import { lockOrderStep } from "./actions";
import { readingAfter, withShipmentStatus } from "./readings";
import { orderReadingPlan, recomputeSteps, type OrderReading } from "./routines";
import { decideShipmentStatus, type OrderStatuses, type ShipmentStatus } from "../rules/status";
import { moveShipment, putShipmentBack, rtoTask, shipmentToMove, shipmentWhere, type ShipmentKey } from "./statements/shipment-status";

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

export type { ShipmentKey } from "./statements/shipment-status";

/** Reads a shipment and its order's facts (with `lock`: the order, then the shipment, locked). */
export function shipmentReadingPlan(q: Q, store: SQL, key: ShipmentKey, lock = false): Plan<ShipmentReading | null> {
  const orderId = sql`(select s.order_id from shipment s where ${shipmentWhere(store, key)})`;
  const read = together({
    // With `lock`, the order is locked by a statement of its own: one that waited for a lock reads other rows as they were when it began.
    lock: lock ? plan([lockOrderStep(q, store, orderId)] as const, () => undefined) : plan([], () => undefined),
    order: orderReadingPlan(q, store, orderId, lock),
    shipment: plan([shipmentToMove(q, store, key, lock)] as const, ([[row]]) => row),
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
    q
      .select({ id: shipmentTable.id })
      .from(shipmentTable)
      .where(and(eq(shipmentTable.storeId, store), eq(shipmentTable.id, shipment.id)))
      .for("update"),
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
      moveShipment(q, store, shipment.id, to, providerStatus, occurredAt),
      q.insert(shipmentEvent).values({ storeId: store, shipmentId: shipment.id, status: to, providerStatus, source, occurredAt }),
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
  return markEmits(rtoTask(q, store, { orderId: shipment.orderId, shipmentId: shipment.id }, title.slice(0, 300), JSON.stringify(payload)));
}

/**
 * The parcel's units go back on the shelf, held for the order again (a shipment cancelled before pickup):
 * the stock rows locked in id order, each with a `shipment_cancelled` adjustment row.
 */
function putBackStep(q: Q, store: SQL, shipmentId: string): Step {
  return putShipmentBack(q, store, shipmentId);
}
