import { env } from "cloudflare:workers";
import type { Database } from "#shared/db/database";
import type { JobContext } from "#shared/jobs/types";
import type { Logger, LogFields } from "#shared/core/log";
import { providerServices, type ProviderServices } from "#shared/pipeline/providers";
import type { LocalBehaviour } from "#shared/payments/local";
import { storeGateway } from "#shared/payments/select";
import type { LocalCourierBehaviour } from "#shared/shipping/local";
import { DEFAULT_LOCAL_COURIER_ORIGIN, storeCourier } from "#shared/shipping/select";
import { TEST_GATEWAY } from "./orders";
import { WORK_QUEUES, type RoutedEvent } from "#shared/events/routes";
import type { QueueLike, RelayQueues } from "#shared/jobs/outbox";

/** Every work queue as one that records what the relay gave it (or refuses what `fail` names). */
export function recordingQueues(fail: (m: RoutedEvent) => boolean = () => false): { sent: RoutedEvent[]; queues: RelayQueues } {
  const sent: RoutedEvent[] = [];
  const queue: QueueLike = {
    async sendBatch(messages) {
      for (const m of messages) if (fail(m.body)) throw new Error(`queue refused ${m.body.kind}`);
      sent.push(...messages.map((m) => m.body));
    },
  };
  return { sent, queues: Object.fromEntries(Object.keys(WORK_QUEUES).map((name) => [name, queue])) as RelayQueues };
}

/** A logger that keeps its lines (message and fields) in memory, for asserting what a job logged. */
export function memoryLog(lines: (LogFields & { level: string; msg: string })[] = [], base: LogFields = {}): Logger & { lines: typeof lines } {
  const at = (level: string) => (msg: string, fields: LogFields = {}) => void lines.push({ ...base, ...fields, level, msg });
  return { lines, debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error"), child: (fields) => memoryLog(lines, { ...base, ...fields }) };
}

/** The courier the test projects are configured with (vitest.config.ts bindings). */
export const TEST_COURIER = { provider: "local", rootSecret: "local-courier-test-secret", pageOrigin: DEFAULT_LOCAL_COURIER_ORIGIN } as const;

/** What one store's providers do in a test: the local adapters' behaviours, or "broken" (its configuration fails). */
export interface StoreProviders {
  gateway?: LocalBehaviour | "broken";
  courier?: LocalCourierBehaviour | "broken";
}

/**
 * The project's providers (the local gateway and courier), with the given stores' behaving as told. Other
 * stores (other test files share the database) get the project's defaults, so a job run here changes
 * nothing of theirs beyond what the real configuration would.
 */
export function servicesFor(stores: Record<string, StoreProviders>): ProviderServices {
  const defaults = providerServices(env);
  const broken = (what: string) => Promise.reject(new Error(`${what} configuration: this store's is broken (test)`));
  return {
    gateway: async (storeId) => {
      const b = stores[storeId]?.gateway;
      if (b === "broken") return broken("Payment gateway");
      return b ? (await storeGateway({ ...TEST_GATEWAY, behaviour: b }, storeId)).gateway : defaults.gateway(storeId);
    },
    courier: async (storeId) => {
      const b = stores[storeId]?.courier;
      if (b === "broken") return broken("Courier");
      return b ? (await storeCourier({ ...TEST_COURIER, behaviour: b }, storeId)).courier : defaults.courier(storeId);
    },
    appWebhooks: defaults.appWebhooks,
    ucpSigning: defaults.ucpSigning,
  };
}

/** A job's context: this database, a controlled clock, the given providers, a logger that keeps its lines. */
export function jobContext(db: Database, now: Date, services: ProviderServices = servicesFor({})): JobContext & { log: ReturnType<typeof memoryLog> } {
  return { db, now, services, env: env as unknown as Readonly<Record<string, unknown>>, log: memoryLog() };
}
