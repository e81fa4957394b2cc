import type { Database } from "../db/database";
import type { Logger } from "../core/log";
import type { DnsResolver } from "../domains/dns";
import type { ProviderServices } from "../pipeline/providers";

/** Job names are the SPEC's queue names ("Scheduled jobs (worker)"). */
export const JOB_NAMES = [
  "{outbox}-relay",
  "{payments}-unpaid-expiry",
  "{payments}-preorder-balance",
  "{marketing}-tick",
  "{shipping}-track",
  "{domains}-verify",
  "{system}-heartbeat",
  "{api}-activity-prune",
  "{media}-sweep",
] as const;

export type JobName = (typeof JOB_NAMES)[number];

export interface JobContext {
  db: Database;
  log: Logger;
  /** The time the run was scheduled for (cron's scheduledTime, or the alarm's). */
  now: Date;
  /** The Worker's bindings and variables, for jobs that call outside services (e.g. the DNS resolver). */
  env: Readonly<Record<string, unknown>>;
  /** Each store's payment gateway and courier, from the Worker's provider services. */
  services: ProviderServices;
  /** The deployment's DNS resolver, from the Worker's provider services ({domains}-verify); a test may run a job without it. */
  dns?: () => DnsResolver;
  /** Which job this run is (failures are recorded under it); absent when a test calls a job directly. */
  job?: JobName;
}

export interface JobDefinition {
  name: JobName;
  /** How often SPEC wants it to run, in ms. */
  everyMs: number;
  /** The job's work; what it answers is logged with `job.finished`. */
  run: (ctx: JobContext) => Promise<Record<string, unknown> | void>;
}
