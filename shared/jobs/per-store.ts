import type { Database } from "../db/database";
import { withStore } from "../db/with-store";
import { errorFields, type Logger } from "../log";

/**
 * A job's work, one store at a time (SPEC rule 3; issue 12 part 4): one store's failure is logged with
 * the store and recorded for its merchant (`job_failure`, shown on the admin home), and never stops the
 * others. Returns how many stores succeeded and failed.
 */
export async function forEachStore(
  ctx: { db: Database; log: Logger; now: Date },
  job: string,
  storeIds: readonly string[],
  work: (storeId: string) => Promise<void>,
): Promise<{ stores: number; failed: number }> {
  let failed = 0;
  for (const storeId of storeIds) {
    try {
      await work(storeId);
    } catch (e) {
      failed++;
      const fields = errorFields(e);
      ctx.log.error("job.store_failed", { job, storeId, ...fields });
      await recordJobFailure(ctx.db, storeId, job, String(fields.error ?? e), ctx.now).catch((again: unknown) =>
        ctx.log.warn("job.failure_not_recorded", { job, storeId, ...errorFields(again) }),
      );
    }
  }
  return { stores: storeIds.length, failed };
}

export async function recordJobFailure(db: Database, storeId: string, job: string, error: string, at: Date): Promise<void> {
  await withStore(db, storeId, (tx) =>
    tx.$client.query(
      `insert into job_failure (store_id, job, error, first_failed_at, last_failed_at) values ($1, $2, $3, $4, $4)
       on conflict (store_id, job) do update set error = excluded.error, last_failed_at = excluded.last_failed_at,
         failures = job_failure.failures + 1,
         first_failed_at = case when job_failure.last_failed_at < excluded.last_failed_at - interval '1 day' then excluded.last_failed_at else job_failure.first_failed_at end`,
      [tx.storeId, job, error.slice(0, 1000), at],
    ),
  );
}
