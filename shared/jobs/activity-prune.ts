import { and, eq, lt } from "drizzle-orm";
import { storeIdsWithOldActivity } from "../db/privileged";
import { apiActivity } from "../db/schema";
import { withStore } from "../db/with-store";
import type { JobContext } from "./types";

/** SPEC "Limits": API activity is kept 90 days. */
export const ACTIVITY_RETENTION_DAYS = 90;

/**
 * {api}-activity-prune (daily): finds the stores with rows older than the retention through a
 * privileged id list, then deletes each store's old rows in its own store-scoped unit of work.
 */
export async function pruneActivity({ db, log, now }: Pick<JobContext, "db" | "log" | "now">): Promise<Record<string, unknown>> {
  const cutoff = new Date(now.getTime() - ACTIVITY_RETENTION_DAYS * 86_400_000);
  let stores = 0;
  let deleted = 0;
  // Batches of stores until none is left (a store's rows all go in one unit).
  for (let round = 0; round < 100; round++) {
    const ids = await storeIdsWithOldActivity(db, cutoff);
    if (ids.length === 0) break;
    for (const storeId of ids) {
      const rows = await withStore(db, storeId, (tx) =>
        tx.delete(apiActivity).where(and(eq(apiActivity.storeId, tx.storeId), lt(apiActivity.lastAt, cutoff))).returning({ id: apiActivity.id }),
      );
      stores++;
      deleted += rows.length;
    }
  }
  log.info("API activity pruned", { cutoff: cutoff.toISOString(), stores, deleted });
  return { cutoff: cutoff.toISOString(), stores, deleted };
}
