import { errorFields } from "../log";
import type { JobContext } from "./types";

export type Counts = Record<string, number>;

/**
 * The store loop of every store-scoped job (SPEC "Scheduled jobs"): each store's work runs in its own
 * failure boundary, so one store's failure never stops the others. Each store's counts are logged with
 * its id (info when anything happened), a failure as an error with the store id; the totals are returned.
 */
export async function forEachStore(ctx: JobContext, storeIds: readonly string[], work: (storeId: string) => Promise<Counts>): Promise<Counts> {
  const totals: Counts = { stores: storeIds.length, failedStores: 0 };
  for (const storeId of storeIds) {
    try {
      const counts = await work(storeId);
      for (const [key, n] of Object.entries(counts)) totals[key] = (totals[key] ?? 0) + n;
      const busy = Object.values(counts).some((n) => n > 0);
      ctx.log[busy ? "info" : "debug"]("job.store", { storeId, ...counts });
    } catch (e) {
      totals["failedStores"]!++;
      ctx.log.error("job.store_failed", { storeId, ...errorFields(e) });
    }
  }
  return totals;
}
