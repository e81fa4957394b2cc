import { storeIdsWithOldActivity } from "../db/privileged";
import { CURRENT_STORE } from "../db/openings";
import { plan } from "../db/plan";
import { raw, sql } from "../db/steps";
import { sendStoreUnit } from "../db/unit";
import type { JobContext } from "./types";

/** SPEC "Limits": API activity is kept 90 days. */
export const ACTIVITY_RETENTION_DAYS = 90;

/**
 * {api}-activity-prune (daily): finds the stores with rows older than the retention through a
 * privileged id list, then deletes each store's old rows in its own store-scoped unit (one round trip).
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
      deleted += await pruneStore(db, storeId, cutoff);
      stores++;
    }
  }
  log.info("API activity pruned", { cutoff: cutoff.toISOString(), stores, deleted });
  return { cutoff: cutoff.toISOString(), stores, deleted };
}

/** One store's rows last touched before `cutoff`, deleted; answers how many. */
export function pruneStore(db: JobContext["db"], storeId: string, cutoff: Date): Promise<number> {
  return sendStoreUnit(
    db,
    storeId,
    (q) =>
      plan(
        [
          raw<{ n: number }>(
            q,
            sql`with gone as (delete from api_activity where store_id = ${CURRENT_STORE} and last_at < ${cutoff} returning 1) select count(*)::int as n from gone`,
          ),
        ] as const,
        ([[row]]) => row?.n ?? 0,
      ),
    { readOnly: false },
  );
}
