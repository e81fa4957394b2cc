import { CRON_TABLE } from "#shared/jobs/cron";
import { jobDeps, runJobs, type JobReport } from "#shared/jobs/run";
import type { WorkerBindings } from "./env";

/** Cron Trigger -> its jobs (shared/jobs/cron.ts). Returns what ran, for logs and tests. */
export async function dispatchCron(cron: string, scheduledTime: number, env: WorkerBindings): Promise<JobReport[]> {
  const deps = jobDeps(env, `cron:${cron}`);
  const entry = CRON_TABLE[cron];
  if (!entry) {
    deps.log.error("cron.unknown", { cron, hint: "wrangler.toml crons and shared/jobs/cron.ts disagree" });
    return [];
  }
  if (entry.keepSchedulerAlive) {
    // The alarm loop runs the sub-minute jobs; this makes sure it is armed (idempotent).
    await env.SCHEDULER.get(env.SCHEDULER.idFromName("main")).ensureRunning();
  }
  return runJobs(entry.jobs, new Date(scheduledTime), deps);
}
