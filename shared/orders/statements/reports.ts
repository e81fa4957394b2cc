import type { SQL } from "drizzle-orm";
import { EXAMPLE, pg, statement } from "../../db/statement";
import { sql } from "../../db/steps";

/** The receipts of a provider's deliveries (../reports.ts): a second delivery of one event changes nothing. */

const { store: STORE } = EXAMPLE;

/** Whether a delivery with the provider's event id was applied already. */
export const receiptSeen = statement("orders.receiptSeen", {
  row: { seen: pg.bool() },
  examples: [[STORE, "local", "evt_1"]],
  sql: (store: SQL, provider: string, eventId: string) =>
    sql`select exists (select 1 from webhook_receipt where store_id = ${store} and provider = ${provider} and event_id = ${eventId}) as seen`,
});

/** The delivery recorded; a racing delivery that recorded it first makes this unit a lost race (CR409). */
export const keepReceipt = statement("orders.keepReceipt", {
  row: { ok: pg.bool() },
  examples: [[STORE, "local", "evt_1"]],
  sql: (store: SQL, provider: string, eventId: string) =>
    sql`with kept as (insert into webhook_receipt (store_id, provider, event_id) values (${store}, ${provider}, ${eventId})
                      on conflict (store_id, provider, event_id) do nothing returning id)
        select unit.unchanged(exists (select 1 from kept)) as ok`,
});
