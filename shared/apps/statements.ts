import type { SQL } from "drizzle-orm";
import { EXAMPLE, pg, statement } from "../db/statement";
import { CURRENT_STORE, sql } from "../db/steps";

/** Apps' statements in SQL (decision 0026): an event's fan-out to the apps subscribed to its kind (./fanout.ts). */

const { id: ID, at: AT } = EXAMPLE;

/** The store's active apps whose events take one of `entries` (`*`, the kind, its groups). */
const wanting = (entries: readonly string[]) =>
  sql`from store_app a where a.store_id = ${CURRENT_STORE} and a.active and a.events && ${`{${entries.map((e) => `"${e}"`).join(",")}}`}::text[]`;

export const countSubscribedApps = statement("apps.countSubscribedApps", {
  row: { n: pg.int4() },
  examples: [[["*", "order.paid", "order.*"]]],
  sql: (entries: readonly string[]) => sql`select count(*)::int as n ${wanting(entries)}`,
});

export interface FannedEvent {
  eventId: string;
  kind: string;
  createdAt: Date;
  payload: string;
}

/** A delivery per active app subscribed to the kind (none twice). */
export const addDeliveries = statement("apps.addDeliveries", {
  row: {},
  examples: [[["*"], { eventId: ID, kind: "order.paid", createdAt: AT, payload: "{}" }]],
  sql: (entries: readonly string[], e: FannedEvent): SQL =>
    sql`insert into app_delivery (store_id, app_id, event_id, event_kind, event_created_at, payload)
        select ${CURRENT_STORE}, a.id, ${e.eventId}, ${e.kind}, ${e.createdAt}, ${e.payload}::jsonb ${wanting(entries)}
        on conflict (app_id, event_id) do nothing`,
});
