import type { SQL } from "drizzle-orm";
import { storeIdsWithOpenShipments } from "../db/privileged";
import { plan, type Plan } from "../db/plan";
import type { RowOfStatement } from "../db/statement";
import { sql, type Q, type Step } from "../db/steps";
import { sendStoreUnit } from "../db/unit";
import { all, changeFrom } from "../orders/readings";
import type { OrderReading } from "../orders/routines";
import { orderAfter, shipmentChange, shipmentReadingPlan, type ShipmentReading } from "../orders/shipment-status";
import { decideShipmentStatus } from "../rules/status";
import { isCourierError, type TrackingReport } from "../shipping/courier";
import { forEachStore, type Counts } from "./per-store";
import { markTracked, openShipments } from "./statements";
import type { JobContext } from "./types";

/** Shipments one store's run asks about at most, the longest-unasked first; the rest wait for the next run. */
export const TRACK_BATCH = 100;

type Open = RowOfStatement<typeof openShipments>;

/**
 * {shipping}-track (every 30 minutes): for each store with shipments still on their way, asks the store's
 * courier about each (outside any transaction) and applies its report through the one shipment routine
 * (source `tracking`): forward only, so a stale report changes nothing. A courier error for one shipment
 * leaves it for the next run; the merchant's own tracking numbers are not asked about. Every shipment
 * listed is marked `tracked_at`, so a store with more than a batch takes turns.
 */
export async function trackShipments(ctx: JobContext, only?: readonly string[]): Promise<Record<string, unknown>> {
  // `only`: these stores (a test's own, in a database other tests share); otherwise the privileged list.
  const ids = only ?? (await storeIdsWithOpenShipments(ctx.db));
  return forEachStore(ctx, ids, (storeId) => trackStore(ctx, storeId));
}

/**
 * One store's run: the list read (one round trip), the courier asked, then the marks written (the
 * second). Reports that move a shipment cost a third: the moving shipments are read, then changed with
 * the marks.
 */
export async function trackStore(ctx: Pick<JobContext, "db" | "log" | "now" | "services">, storeId: string): Promise<Counts> {
  const { db, now } = ctx;
  const store = sql`${storeId}::uuid`;
  const open = await sendStoreUnit(db, storeId, (q) => openPlan(q, store));
  const counts: Counts = { asked: 0, moved: 0, unchanged: 0, errors: 0, otherCourier: 0 };
  if (open.length === 0) return counts;
  const courier = await ctx.services.courier(storeId);
  const reports: { shipment: Open; report: TrackingReport }[] = [];
  for (const s of open) {
    if (s.provider !== courier.provider) {
      counts["otherCourier"]!++;
      continue;
    }
    counts["asked"]!++;
    try {
      reports.push({ shipment: s, report: await courier.track(s.awb) });
    } catch (e) {
      if (!isCourierError(e)) throw e;
      counts["errors"]!++;
      ctx.log.warn("tracking.courier_error", { storeId, shipmentId: s.id, awb: s.awb, kind: e.kind, retryable: e.retryable });
    }
  }
  // Statuses only move forward, so a report that would not move the shipment as listed moves it no more now.
  const moving = reports.filter(({ shipment, report }) => decideShipmentStatus(shipment.status, report.status).apply);
  const marked = markStep(open.map((s) => s.id), now);
  const readings = (q: Q) => all(moving.map(({ shipment }) => shipmentReadingPlan(q, store, { id: shipment.id })));
  const moved = await changeFrom(
    moving.length > 0 ? await sendStoreUnit(db, storeId, readings) : [],
    () => sendStoreUnit(db, storeId, readings),
    (read) => sendStoreUnit(db, storeId, (q) => movesPlan(q, store, moving, read, marked), { readOnly: false }),
  );
  counts["moved"] = moved;
  counts["unchanged"] = reports.length - moved;
  return counts;
}

/** The store's shipments still on their way whose courier can be asked, the longest-unasked first. */
function openPlan(q: Q, store: SQL): Plan<Open[]> {
  return plan(
    [
      openShipments(q, store, TRACK_BATCH),
    ] as const,
    ([rows]) => rows,
  );
}

const markStep = (ids: string[], now: Date) => (q: Q, store: SQL) =>
  markTracked(q, store, ids, now);

/**
 * The reports applied through the shipment routine, each decided from its reading (a later shipment of
 * the same order from the order as the earlier one's change left it), then the marks. Answers how many moved.
 */
function movesPlan(
  q: Q,
  store: SQL,
  moving: readonly { report: TrackingReport }[],
  readings: readonly (ShipmentReading | null)[],
  marked: (q: Q, store: SQL) => Step,
): Plan<number> {
  const orders = new Map<string, OrderReading>();
  const steps: Step[] = [];
  let moved = 0;
  moving.forEach(({ report }, i) => {
    const read = readings[i];
    if (!read) return;
    const reading = { ...read, order: orders.get(read.shipment.orderId) ?? read.order };
    const made = shipmentChange(q, store, reading, report.status, "tracking", { providerStatus: report.providerStatus, occurredAt: report.occurredAt });
    steps.push(...made.steps);
    orders.set(read.shipment.orderId, orderAfter(reading, made.applied));
    if (made.applied.applied) moved++;
  });
  return plan([...steps, marked(q, store)], () => moved);
}
