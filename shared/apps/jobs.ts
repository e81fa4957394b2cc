/**
 * What the two app queues' consumers share: the {apps}-jobs message (one try of one delivery) and the
 * dependencies a consumer runs with, all given by the caller (workers/worker/queue.ts, or a test with a
 * controlled clock, a captured fetch and a recording queue).
 */
import { z } from "zod";
import type { Database } from "../db/database";
import type { Logger } from "../core/log";
import { MAX_ATTEMPTS } from "./backoff";
import type { AppWebhookConfig } from "./secrets";
import type { FetchLike } from "./send";

/** One message of the {apps}-jobs queue: try `attempt` of round `round` of one delivery. */
export const appDeliveryJobSchema = z.strictObject({
  storeId: z.uuid(),
  deliveryId: z.uuid(),
  round: z.number().int().min(1),
  attempt: z.number().int().min(1).max(MAX_ATTEMPTS),
});
export type AppDeliveryJob = z.infer<typeof appDeliveryJobSchema>;

/** The {apps}-jobs producer (the APPS_JOBS binding): a delay per message, so one app's retry waits alone. */
export interface AppJobsQueue {
  send(job: AppDeliveryJob, options: { delaySeconds: number }): Promise<void>;
}

export interface AppConsumerDeps {
  db: Database;
  log: Logger;
  now: Date;
  fetch: FetchLike;
  jobs: AppJobsQueue;
  config: AppWebhookConfig;
  /** The retry jitter's randomness (Math.random unless a test fixes it). */
  random?: () => number;
  /** The POST's deadline (10 s unless a test shortens it). */
  timeoutMs?: number;
}

/** Sends the first try of each delivery now. */
export async function queueFirstTries(jobs: AppJobsQueue, storeId: string, deliveries: readonly { id: string; round: number }[]): Promise<void> {
  await Promise.all(deliveries.map((d) => jobs.send({ storeId, deliveryId: d.id, round: d.round, attempt: 1 }, { delaySeconds: 0 })));
}
