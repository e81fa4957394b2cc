/**
 * The domains queue as the worker's queue() hands it over: each message on its own, acknowledged once
 * handled, retried when it throws (the queue dead-letters it after max_retries, wrangler.toml). A body
 * that is not a RoutedEvent can never succeed, so it goes to the dead letter queue's way too.
 */
import { Database } from "../db/database";
import type { JobRunnerDeps } from "./run";
import { errorFields } from "../core/log";
import type { HostsKv } from "../storefront/hosts";
import { routeDomainEvent, routedEventSchema } from "../domains/route";
import { RouterError } from "../domains/router";

export interface QueueMessageLike {
  readonly id: string;
  readonly body: unknown;
  readonly attempts: number;
  ack(): void;
  retry(options?: { delaySeconds?: number }): void;
}

/** Seconds before a failed message is tried again: the router's Retry-After, else a minute per attempt up to 10. */
export function retryDelay(e: unknown, attempts: number): number {
  if (e instanceof RouterError && e.retryAfterSeconds !== undefined) return Math.min(Math.max(e.retryAfterSeconds, 1), 3_600);
  return Math.min(60 * Math.max(attempts, 1), 600);
}

export async function consumeDomainMessages(messages: readonly QueueMessageLike[], env: object, deps: JobRunnerDeps): Promise<void> {
  const db = new Database(deps.db);
  const log = deps.log;
  try {
    const router = deps.providers.router();
    const hosts = (env as { HOSTS?: HostsKv }).HOSTS;
    if (!hosts) throw new Error("the domains queue needs the HOSTS KV namespace, and this Worker binds none");
    for (const message of messages) {
      try {
        const event = routedEventSchema.parse(message.body);
        await routeDomainEvent(event, { db, router, hosts, log });
        message.ack();
      } catch (e) {
        log.error("domains.route_failed", { messageId: message.id, attempts: message.attempts, ...errorFields(e) });
        message.retry({ delaySeconds: retryDelay(e, message.attempts) });
      }
    }
  } catch (e) {
    // The router's configuration (or the HOSTS binding) is wrong: nothing can be handled until it is fixed.
    log.error("domains.route_unconfigured", { messages: messages.length, ...errorFields(e) });
    for (const message of messages) message.retry({ delaySeconds: 600 });
  } finally {
    await db.close();
  }
}
