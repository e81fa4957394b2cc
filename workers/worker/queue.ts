import { Database } from "#shared/db/database";
import { issueDocumentsFromEvent } from "#shared/jobs/documents-consumer";
import { consumeDomainMessages } from "#shared/jobs/domains-consumer";
import { WORK_QUEUES, type RoutedEvent } from "#shared/events/routes";
import { jobDeps, runJobs } from "#shared/jobs/run";
import { errorFields, type Logger } from "#shared/core/log";
import { enrolFromEvent } from "#shared/marketing/enrol";
import type { Providers } from "#shared/pipeline/providers";
import { isSendOrder, sendMarketingBatch } from "#shared/marketing/send";
import { RetryLater, sendNotification } from "#shared/notifications/send";
import { sendRestockAlerts } from "#shared/restock/alerts";
import { APP_QUEUES, consumeAppQueue } from "./app-queues";
import type { WorkerBindings } from "./env";

export const OUTBOX_NUDGE_QUEUE = "commerce-outbox-nudge";

/** Growing waits for a message's retries (queue attempts 1, 2, …): 10 s, 30 s, 2 min, 10 min, 30 min. */
const RETRY_DELAYS = [10, 30, 120, 600, 1800];

type Handler = (message: unknown, deps: { db: Database; log: Logger }) => Promise<unknown>;

/** The work queues' consumers (shared/events/routes.ts), each idempotent by the event id. */
const CONSUMERS: Partial<Record<string, (providers: Providers) => Handler>> = {
  [WORK_QUEUES.notifications.queue]: (p) => (message, deps) => sendNotification(message as RoutedEvent, { ...deps, mail: p.mail(deps.db), linkSecret: p.emailLinkSecret() }),
  [WORK_QUEUES.restock.queue]: (p) => (message, deps) => sendRestockAlerts(message as RoutedEvent, { ...deps, mail: p.mail(deps.db) }),
  [WORK_QUEUES.documents.queue]: () => (message, deps) => issueDocumentsFromEvent(message as RoutedEvent, deps),
  // Relayed events enrol orders in automations; the marketing tick's hand-overs send messages.
  [WORK_QUEUES.marketing.queue]: (p) => (message, deps) =>
    isSendOrder(message) ? sendMarketingBatch(message, { ...deps, mail: p.mail(deps.db), linkSecret: p.emailLinkSecret() }) : enrolFromEvent(message as RoutedEvent, deps),
};

/**
 * Queue consumers. A nudge carries no work: it only makes the outbox relay run now instead of at its
 * next 5 s tick. A work message is handled on its own (one message's failure never holds the batch):
 * acknowledged when handled, retried with a growing delay when it throws (after max_retries, the dead
 * letter queue). A queue bound in wrangler.toml that no code here consumes (a configuration mistake) is
 * logged as an error and its messages retried, never acknowledged, so none is lost before it is fixed.
 */
export async function dispatchQueue(batch: MessageBatch<unknown>, env: WorkerBindings): Promise<void> {
  const deps = jobDeps(env, `queue:${batch.queue}`);
  if (batch.queue === OUTBOX_NUDGE_QUEUE) {
    await runJobs(["{outbox}-relay"], new Date(), deps);
    batch.ackAll();
    return;
  }
  if (batch.queue === WORK_QUEUES.domains.queue) return consumeDomainMessages(batch.messages, env, deps);
  if (APP_QUEUES.includes(batch.queue)) return consumeAppQueue(batch, env, deps);
  const consumer = CONSUMERS[batch.queue];
  if (!consumer) {
    deps.log.error("queue.no_consumer", { queue: batch.queue, messages: batch.messages.length });
    batch.retryAll({ delaySeconds: 60 });
    return;
  }
  const db = new Database(deps.db);
  try {
    const handle = consumer(deps.providers);
    for (const message of batch.messages) {
      try {
        await handle(message.body, { db, log: deps.log });
        message.ack();
      } catch (e) {
        const delaySeconds = e instanceof RetryLater && e.delaySeconds ? e.delaySeconds : RETRY_DELAYS[Math.min(message.attempts - 1, RETRY_DELAYS.length - 1)];
        deps.log.warn("queue.retry", { queue: batch.queue, messageId: message.id, attempts: message.attempts, delaySeconds, ...errorFields(e) });
        message.retry({ delaySeconds });
      }
    }
  } finally {
    await db.close();
  }
}
