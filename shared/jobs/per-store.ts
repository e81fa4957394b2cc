import type { Database } from "../db/database";
import { CURRENT_STORE } from "../db/openings";
import { plan } from "../db/plan";
import { raw, sql } from "../db/steps";
import { sendStoreUnit } from "../db/unit";
import { errorFields } from "../core/log";
import type { JobContext } from "./types";

export type Counts = Record<string, number>;

/**
 * The store loop of every store-scoped job (SPEC "Scheduled jobs", rule 3; issue 12 part 4): each store's
 * work runs in its own failure boundary, so one store's failure never stops the others. Each store's
 * counts are logged with its id (info when anything happened); a failure is logged as an error with the
 * store id and recorded for its merchant (`job_failure`, shown on the admin home). `atOnce` stores run
 * side by side (default one at a time: a job whose store work waits on an outside service, such as DNS,
 * takes more). Returns the totals, with `stores` and `failedStores`.
 */
export async function forEachStore(
  ctx: Pick<JobContext, "db" | "log" | "now" | "job">,
  storeIds: readonly string[],
  work: (storeId: string) => Promise<Counts>,
  options: { atOnce?: number } = {},
): Promise<Counts> {
  const totals: Counts = { stores: storeIds.length, failedStores: 0 };
  const atOnce = Math.max(1, options.atOnce ?? 1);
  const one = async (storeId: string) => {
    try {
      const counts = await work(storeId);
      for (const [key, n] of Object.entries(counts)) totals[key] = (totals[key] ?? 0) + n;
      const busy = Object.values(counts).some((n) => n > 0);
      ctx.log[busy ? "info" : "debug"]("job.store", { storeId, ...counts });
    } catch (e) {
      totals["failedStores"]!++;
      const fields = errorFields(e);
      ctx.log.error("job.store_failed", { storeId, ...fields });
      if (ctx.job) {
        await recordJobFailure(ctx.db, storeId, ctx.job, String(fields.error ?? e), ctx.now).catch((again: unknown) =>
          ctx.log.warn("job.failure_not_recorded", { storeId, ...errorFields(again) }),
        );
      }
    }
  };
  for (let i = 0; i < storeIds.length; i += atOnce) await Promise.all(storeIds.slice(i, i + atOnce).map(one));
  return totals;
}

/** Records a store's failure of `job` for its merchant: one statement, one round trip. */
export async function recordJobFailure(db: Database, storeId: string, job: string, error: string, at: Date): Promise<void> {
  await sendStoreUnit(
    db,
    storeId,
    (q) =>
      plan(
        [
          raw(
            q,
            sql`insert into job_failure (store_id, job, error, first_failed_at, last_failed_at) values (${CURRENT_STORE}, ${job}, ${error.slice(0, 1000)}, ${at}, ${at})
              on conflict (store_id, job) do update set error = excluded.error, last_failed_at = excluded.last_failed_at,
                failures = job_failure.failures + 1,
                first_failed_at = case when job_failure.last_failed_at < excluded.last_failed_at - interval '1 day' then excluded.last_failed_at else job_failure.first_failed_at end`,
          ),
        ] as const,
        () => undefined,
      ),
    { readOnly: false },
  );
}
