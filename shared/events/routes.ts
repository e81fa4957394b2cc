/**
 * The outbox relay's contract with the queue consumers (issue 12; SPEC "Events"). The relay claims outbox
 * rows per store, maps each kind to its routes, and sends one RoutedEvent per route to that route's queue.
 * Every consumer is idempotent by the event id (plus its own sub-key where one event makes several
 * effects, e.g. one restock alert per subscriber), stored with the effect in the same transaction: a
 * relay that dies between sending and marking, or a queue that delivers twice, changes nothing twice.
 */

/** The work queues and their bindings (wrangler.toml [[env.worker.queues.producers]]). */
export const WORK_QUEUES = {
  notifications: { binding: "NOTIFICATIONS_SEND", queue: "commerce-notifications-send" },
  appEvents: { binding: "APPS_EVENTS", queue: "commerce-apps-events" },
  appJobs: { binding: "APPS_JOBS", queue: "commerce-apps-jobs" },
  marketing: { binding: "MARKETING_SEND", queue: "commerce-marketing-send" },
  restock: { binding: "BACK_IN_STOCK_RESTOCK", queue: "commerce-back-in-stock-restock" },
  domains: { binding: "DOMAINS_ROUTE", queue: "commerce-domains-route" },
  documents: { binding: "DOCUMENTS_ISSUE", queue: "commerce-documents-issue" },
} as const;
export type WorkQueue = keyof typeof WORK_QUEUES;

/** One event on its way to one route. */
export interface RoutedEvent {
  /** outbox_event.id: the dedupe key. */
  eventId: string;
  storeId: string;
  kind: string;
  payload: Record<string, unknown>;
  /** ISO 8601: when the change committed. */
  createdAt: string;
  /** Which route of the kind this is, e.g. `notification:payment_received`, `app`, `restock`, `domain`. */
  route: string;
}

/** A consumer: handles one message; throws to have it retried (then dead-lettered). */
export type Consumer<Deps> = (message: RoutedEvent, deps: Deps) => Promise<void>;
