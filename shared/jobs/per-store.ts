import type { Database } from "../db/database";
import { plan } from "../db/plan";
import { sendStoreUnit } from "../db/unit";
import { errorFields } from "../core/log";
import { keepJobFailure } from "./statements";
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
          keepJobFailure(q, job, error.slice(0, 1000), at),
        ] as const,
        () => undefined,
      ),
    { readOnly: false },
  );
}
