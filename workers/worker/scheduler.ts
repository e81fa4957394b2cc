import { DurableObject } from "cloudflare:workers";
import { SUB_MINUTE_JOBS } from "#shared/jobs/cron";
import { JOBS } from "#shared/jobs/registry";
import { jobDeps, runJobs, type JobReport } from "#shared/jobs/run";
import type { JobName } from "#shared/jobs/types";

export type NextRuns = Partial<Record<JobName, number>>;

/**
 * One pass's plan at `now`: the sub-minute jobs due, when each runs next, and when to wake again (at least
 * a second away). Pure, so the cadence is tested without a clock or a database.
 */
export function planTick(previous: NextRuns, now: number): { due: JobName[]; next: NextRuns; alarmAt: number } {
  const next = { ...previous };
  const due = SUB_MINUTE_JOBS.filter((name) => (next[name] ?? 0) <= now);
  for (const name of due) next[name] = now + JOBS[name].everyMs;
  const upcoming = Math.min(...SUB_MINUTE_JOBS.map((name) => next[name] ?? now));
  return { due, next, alarmAt: Math.max(upcoming, now + 1_000) };
}

/**
 * Runs the sub-minute jobs (outbox relay every 5 s, marketing tick every 30 s) from an alarm loop,
 * because Cron Triggers fire at most once a minute. The every-minute cron calls ensureRunning(), so a
 * loop that ever stops (deploy, eviction, an exception) is re-armed within a minute.
 */
// Its bindings are the worker's; the jobs read what they need through jobDeps, which checks them, so the
// object names no Worker type (workers/worker/env.ts types its namespace with this class).
export class Scheduler extends DurableObject<Record<string, unknown>> {
  async ensureRunning(): Promise<void> {
    const alarm = await this.ctx.storage.getAlarm();
    if (alarm === null) await this.ctx.storage.setAlarm(Date.now());
  }

  override async alarm(): Promise<void> {
    await this.tick(Date.now());
  }

  /** One pass of the loop: run what is due, then arm the alarm for the next due job. */
  async tick(now: number): Promise<JobReport[]> {
    const { due, next, alarmAt } = planTick((await this.ctx.storage.get<NextRuns>("next")) ?? {}, now);
    await this.ctx.storage.put("next", next);
    // Arm before running, so a job that throws or hangs cannot stop the loop.
    await this.ctx.storage.setAlarm(alarmAt);
    if (due.length === 0) return [];
    return runJobs(due, new Date(now), jobDeps(this.env, "scheduler"));
  }
}
