import { Database, type DatabaseConfig } from "../db/database";
import { createLogger, errorFields, movedNothing, type Logger } from "../core/log";
import { baseEnvSchema, parseEnv } from "../core/env";
import { nudgeRelayFrom } from "../events/nudge";
import { providersOf, type Providers } from "../pipeline/providers";
import { pushStoreFactsTo } from "../storefront/store-facts";
import { JOBS } from "./registry";
import type { JobName } from "./types";

export type JobOutcome = "ok" | "failed";

export interface JobReport {
  job: JobName;
  outcome: JobOutcome;
  durationMs: number;
}

export interface JobRunnerDeps {
  db: DatabaseConfig;
  log: Logger;
  /** The Worker's env, handed to each job. */
  env: Readonly<Record<string, unknown>>;
  /** The Worker's provider services, built once per env (shared/pipeline/providers.ts). */
  providers: Providers;
}

/**
 * Runs jobs for one trigger, each with its own database (Workers cannot share I/O across
 * invocations) and its own failure boundary: one failing job never stops the others.
 */
export async function runJobs(names: readonly JobName[], now: Date, deps: JobRunnerDeps): Promise<JobReport[]> {
  return Promise.all(names.map((name) => runJob(name, now, deps)));
}

async function runJob(name: JobName, now: Date, deps: JobRunnerDeps): Promise<JobReport> {
  const job = JOBS[name];
  const log = deps.log.child({ job: name });
  const started = Date.now();
  const db = new Database(deps.db);
  try {
    const result = await job.run({ db, log, now, env: deps.env, services: deps.providers, dns: deps.providers.dns, job: name });
    const durationMs = Date.now() - started;
    // A pass that found nothing to do is a debug line: the relay runs every 5 s, and the console stays quiet unless something happened.
    log[movedNothing(result) ? "debug" : "info"]("job.finished", { outcome: "ok", durationMs, ...(result ? { result } : {}) });
    return { job: name, outcome: "ok", durationMs };
  } catch (e) {
    const durationMs = Date.now() - started;
    log.error("job.finished", { outcome: "failed", durationMs, ...errorFields(e) });
    return { job: name, outcome: "failed", durationMs };
  } finally {
    await db.close();
  }
}

/** What a job run needs, from the Worker's env (validated once) and the trigger that started it. */
export function jobDeps(env: object, trigger: string): JobRunnerDeps {
  const config = parseEnv(baseEnvSchema, env);
  const log = createLogger({ service: "worker", trigger }, config.LOG_LEVEL);
  return {
    db: {
      url: config.DATABASE_URL,
      wsProxy: config.DB_WS_PROXY,
      connectTimeoutMs: config.DB_CONNECT_TIMEOUT_MS,
      onStorefrontChange: pushStoreFactsTo(env, log),
      onOutboxWritten: nudgeRelayFrom(env, log),
    },
    log,
    env: env as Readonly<Record<string, unknown>>,
    providers: providersOf(env),
  };
}
