import type { JobName } from "./types";

/**
 * Cron expression -> the jobs it starts. Must match `[env.worker.triggers] crons` in wrangler.toml
 * exactly (workers/worker/jobs.test.ts compares them).
 *
 * Cron Triggers fire at most once a minute, so the sub-minute cadences (outbox relay 5 s, marketing
 * tick 30 s) run from the Scheduler Durable Object's alarm loop; the every-minute cron only makes sure
 * that loop is alive (`keepSchedulerAlive`).
 */
export const CRON_TABLE: Record<string, { jobs: JobName[]; keepSchedulerAlive?: boolean }> = {
  "* * * * *": {
    jobs: ["{system}-heartbeat", "{payments}-unpaid-expiry", "{payments}-preorder-balance"],
    keepSchedulerAlive: true,
  },
  "*/2 * * * *": { jobs: ["{domains}-verify"] },
  "*/30 * * * *": { jobs: ["{shipping}-track"] },
  "15 3 * * *": { jobs: ["{api}-activity-prune", "{media}-sweep"] },
};

/** Jobs whose cadence is under a minute, run by the Scheduler's alarm loop. */
export const SUB_MINUTE_JOBS: JobName[] = ["{outbox}-relay", "{marketing}-tick"];
