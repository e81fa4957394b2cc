import { consumeDomainMessages } from "#shared/domains/consumer";
import { WORK_QUEUES } from "#shared/events/routes";
import { jobDeps, runJobs } from "#shared/jobs/run";
import type { WorkerBindings } from "./env";

export const OUTBOX_NUDGE_QUEUE = "commerce-outbox-nudge";

/**
 * Queue consumers. A nudge carries no work: it only makes the outbox relay run now instead of at its
 * next 5 s tick. The domains queue routes custom hostnames (shared/domains/consumer.ts, per message).
 * Queues whose consumers are not built yet retry their messages (ending in the dead
 * letter queue), so nothing is acknowledged without being handled.
 */
export async function dispatchQueue(batch: MessageBatch<unknown>, env: WorkerBindings): Promise<void> {
  const deps = jobDeps(env, `queue:${batch.queue}`);
  if (batch.queue === OUTBOX_NUDGE_QUEUE) {
    await runJobs(["{outbox}-relay"], new Date(), deps);
    batch.ackAll();
    return;
  }
  if (batch.queue === WORK_QUEUES.domains.queue) return consumeDomainMessages(batch.messages, env, deps);
  deps.log.error("queue.no_consumer", { queue: batch.queue, messages: batch.messages.length });
  batch.retryAll({ delaySeconds: 60 });
}
