import { consumeAppJob } from "#shared/apps/attempt";
import { consumeAppEvent } from "#shared/apps/fanout";
import type { AppConsumerDeps } from "#shared/apps/jobs";
import { Database } from "#shared/db/database";
import { WORK_QUEUES } from "#shared/events/routes";
import type { JobRunnerDeps } from "#shared/jobs/run";
import { errorFields } from "#shared/core/log";
import { consumeUcpOrderEvent, consumeUcpOrderJob, isForAgents } from "#shared/ucp/order-webhooks";
import type { WorkerBindings } from "./env";

/** Longer than a try's claim (shared/apps/attempt.ts CLAIM_TIMEOUT_MS), so a retried message can take it over. */
const RETRY_DELAY_SECONDS = 90;

export const APP_QUEUES: readonly string[] = [WORK_QUEUES.appEvents.queue, WORK_QUEUES.appJobs.queue];

/**
 * The {apps}-events and {apps}-jobs consumers (shared/apps/): each message on its own, at once, acked when
 * handled and retried (then dead-lettered) when it throws, so one app's failure never holds the batch.
 */
export async function consumeAppQueue(batch: MessageBatch<unknown>, env: WorkerBindings, deps: JobRunnerDeps): Promise<void> {
  const consume = batch.queue === WORK_QUEUES.appEvents.queue ? consumeAppEvent : consumeAppJob;
  let config: AppConsumerDeps["config"];
  try {
    config = deps.providers.appWebhooks();
  } catch (e) {
    deps.log.error("apps.not_configured", { queue: batch.queue, messages: batch.messages.length, ...errorFields(e) });
    batch.retryAll({ delaySeconds: RETRY_DELAY_SECONDS });
    return;
  }
  const db = new Database(deps.db);
  const send = async (job: object, options: { delaySeconds: number }) => void (await env.APPS_JOBS.send(job, options));
  const base = {
    db,
    log: deps.log,
    config,
    fetch: (url: string, init: RequestInit) => fetch(url, init),
    jobs: { send },
  } satisfies Omit<AppConsumerDeps, "now">;
  // An agent's order updates (shared/ucp/order-webhooks.ts) ride the same queues, signed with the store's UCP key.
  const forAgents = batch.queue === WORK_QUEUES.appEvents.queue ? consumeUcpOrderEvent : consumeUcpOrderJob;
  try {
    await Promise.all(
      batch.messages.map(async (message) => {
        try {
          if (isForAgents(message.body)) {
            const signing = deps.providers.ucpSigning();
            await forAgents(message.body, { db, log: deps.log, now: new Date(), fetch: base.fetch, jobs: { send }, signing, allowLocalUrls: config.allowLocalUrls });
          } else await consume(message.body, { ...base, now: new Date() });
          message.ack();
        } catch (e) {
          deps.log.error("apps.message_failed", { queue: batch.queue, messageId: message.id, attempts: message.attempts, ...errorFields(e) });
          message.retry({ delaySeconds: RETRY_DELAY_SECONDS });
        }
      }),
    );
  } finally {
    await db.close();
  }
}
