import { DurableObject } from "cloudflare:workers";
import { SUB_MINUTE_JOBS } from "#shared/jobs/cron";
import { JOBS } from "#shared/jobs/registry";
import { jobDeps, runJobs, type JobReport } from "#shared/jobs/run";
import type { JobName } from "#shared/jobs/types";
import type { WorkerBindings } from "./env";

type NextRuns = Partial<Record<JobName, number>>;

/**
 * Runs the sub-minute jobs (outbox relay every 5 s, marketing tick every 30 s) from an alarm loop,
 * because Cron Triggers fire at most once a minute. The every-minute cron calls ensureRunning(), so a
 * loop that ever stops (deploy, eviction, an exception) is re-armed within a minute.
 */
export class Scheduler extends DurableObject<WorkerBindings> {
  async ensureRunning(): Promise<void> {
    const alarm = await this.ctx.storage.getAlarm();
    if (alarm === null) await this.ctx.storage.setAlarm(Date.now());
  }

  override async alarm(): Promise<void> {
    await this.tick(Date.now());
  }

  /** One pass of the loop: run what is due, then arm the alarm for the next due job. */
  async tick(now: number): Promise<JobReport[]> {
    const next = (await this.ctx.storage.get<NextRuns>("next")) ?? {};
    const due = SUB_MINUTE_JOBS.filter((name) => (next[name] ?? 0) <= now);
    for (const name of due) next[name] = now + JOBS[name].everyMs;
    await this.ctx.storage.put("next", next);
    // Arm before running, so a job that throws or hangs cannot stop the loop.
    const upcoming = Math.min(...SUB_MINUTE_JOBS.map((name) => next[name] ?? now));
    await this.ctx.storage.setAlarm(Math.max(upcoming, now + 1_000));
    if (due.length === 0) return [];
    return runJobs(due, new Date(now), jobDeps(this.env, "scheduler"));
  }
}
