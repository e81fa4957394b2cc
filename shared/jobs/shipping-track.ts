import { storeIdsWithOpenShipments } from "../db/privileged";
import { withStore } from "../db/with-store";
import { applyShipmentStatus } from "../orders/shipments";
import { isCourierError, type TrackingReport } from "../shipping/courier";
import { forEachStore, type Counts } from "./per-store";
import type { JobContext } from "./types";

/** Shipments one store's run asks about at most, the longest-unasked first; the rest wait for the next run. */
export const TRACK_BATCH = 100;

/**
 * {shipping}-track (every 30 minutes): for each store with shipments still on their way, asks the store's
 * courier about each (outside any transaction) and applies its report through the one shipment routine
 * (`applyShipmentStatus`, source `tracking`): forward only, so a stale report changes nothing. A courier
 * error for one shipment leaves it for the next run; the merchant's own tracking numbers are not asked
 * about. Every shipment listed is marked `tracked_at`, so a store with more than a batch takes turns.
 */
export async function trackShipments(ctx: JobContext, only?: readonly string[]): Promise<Record<string, unknown>> {
  const { db, now } = ctx;
  // `only`: these stores (a test's own, in a database other tests share); otherwise the privileged list.
  const ids = only ?? (await storeIdsWithOpenShipments(db));
  return forEachStore(ctx, ids, async (storeId) => {
    const open = await withStore(
      db,
      storeId,
      async (tx) =>
        (
          await tx.$client.query<{ id: string; awb: string; provider: string }>(
            `select id, awb, provider from shipment
             where store_id = $1 and status in ('pending', 'in_transit', 'rto_initiated') and provider <> 'manual'
             order by tracked_at nulls first, created_at, id limit $2`,
            [tx.storeId, TRACK_BATCH],
          )
        ).rows,
      { readOnly: true },
    );
    const counts: Counts = { asked: 0, moved: 0, unchanged: 0, errors: 0, otherCourier: 0 };
    if (open.length === 0) return counts;
    const courier = await ctx.services.courier(storeId);
    const reports: { id: string; report: TrackingReport }[] = [];
    for (const s of open) {
      if (s.provider !== courier.provider) {
        counts["otherCourier"]!++;
        continue;
      }
      counts["asked"]!++;
      try {
        reports.push({ id: s.id, report: await courier.track(s.awb) });
      } catch (e) {
        if (!isCourierError(e)) throw e;
        counts["errors"]!++;
        ctx.log.warn("tracking.courier_error", { storeId, shipmentId: s.id, awb: s.awb, kind: e.kind, retryable: e.retryable });
      }
    }
    for (const { id, report } of reports) {
      const applied = await withStore(db, storeId, (tx) =>
        applyShipmentStatus(tx, id, report.status, "tracking", { providerStatus: report.providerStatus, occurredAt: report.occurredAt }),
      );
      counts[applied.applied ? "moved" : "unchanged"]!++;
    }
    const listed = open.map((s) => s.id);
    await withStore(db, storeId, (tx) => tx.$client.query("update shipment set tracked_at = $2 where store_id = $1 and id = any($3::uuid[])", [tx.storeId, now, listed]));
    return counts;
  });
}
