import { env } from "cloudflare:workers";
import type { Database } from "#shared/db/database";
import { emit } from "#shared/db/outbox";
import { withStore } from "#shared/db/with-store";
import { providerServices } from "#shared/pipeline/providers";
import { makeStore, type TestStore } from "./harness";
import { callerFor, type Caller } from "./procedures";

export interface CreatedApp {
  app: { id: string; name: string; url: string; events: string[]; active: boolean; secretHint: string };
  secret: string;
}

export interface DeliveryRow {
  id: string;
  eventId: string;
  eventKind: string;
  status: string;
  round: number;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  nextAttemptAt: string | Date | null;
}

/** A fresh store, its Owner's caller (with the Worker's real services) and shortcuts for apps and events. */
export async function appsStore(db: Database) {
  const store: TestStore = await makeStore(db);
  const call: Caller = callerFor(db, store.ownerUserId, store.id, providerServices(env));
  return {
    store,
    call,
    createApp: (url: string, events: string[], name = `App ${crypto.randomUUID().slice(0, 6)}`) =>
      call("apps.create", { name, url, events }) as Promise<CreatedApp>,
    /** An event as the application writes it, in its own transaction; answers its outbox id. */
    emit: (kind: string, payload: Record<string, unknown> = {}) => withStore(db, store.id, (tx) => emit(tx, kind, payload)),
    deliveries: async (appId: string) =>
      ((await call("apps.get", { id: appId, pageSize: 100 })) as { deliveries: { items: DeliveryRow[] } }).deliveries.items,
  };
}
