import type { SQL } from "drizzle-orm";
import { shopOrder, store } from "../db/schema";
import { EXAMPLE, orNull, pg, statement } from "../db/statement";
import { CURRENT_STORE, sql } from "../db/steps";

/** The shopper notifications' statements in SQL (decision 0026): what a message reads (./send.ts) and its record (./deliver.ts). */

const { id: ID } = EXAMPLE;

/** The order an event names, with its store's name and, for a return's event, the return's number. */
export const orderToNotify = statement("notifications.orderToNotify", {
  row: {
    number: shopOrder.number,
    email: shopOrder.email,
    total: pg.float8(),
    currency: shopOrder.currency,
    store_name: store.name,
    return_number: orNull(pg.int4()),
  },
  examples: [[ID, ""]],
  sql: (orderId: string, returnId: string) =>
    sql`select o.number, o.email, o.total::float8 as total, o.currency, s.name as store_name,
          (select r.number from order_return r where r.store_id = o.store_id and r.id::text = ${returnId}) as return_number
        from shop_order o join store s on s.id = o.store_id where o.store_id = ${CURRENT_STORE} and o.id = ${orderId}`,
});

/** The order's email link stored, unless the event's message was sent already (`mine`: the notification row). */
export const storeOrderLink = statement("notifications.storeOrderLink", {
  row: {},
  examples: [[ID, "0".repeat(64), sql`event_id = ${ID}`]],
  sql: (orderId: string, linkHash: string, mine: SQL) =>
    sql`update shop_order set email_key_hash = ${linkHash} where store_id = ${CURRENT_STORE} and id = ${orderId} and email_key_hash is distinct from ${linkHash}
          and not exists (select 1 from notification where ${mine} and status <> 'sending')`,
});

export interface Try {
  eventId: string;
  template: string;
  recipient: string;
  subject: string;
  status: "sent" | "sending" | "failed";
  provider: string;
  providerId: string | null;
  error: string | null;
}

/** One try on the notification row: made by the first try, counted by every later one, left alone once finished. */
export const recordTry = statement("notifications.recordTry", {
  row: {},
  examples: [[{ eventId: ID, template: "order_confirmation", recipient: "a@example.test", subject: "Thanks", status: "sent", provider: "local", providerId: null, error: null }]],
  sql: (t: Try) =>
    sql`insert into notification (store_id, event_id, template, recipient, subject, attempts, status, provider, provider_id, last_error, sent_at)
        values (${CURRENT_STORE}, ${t.eventId}, ${t.template}, ${t.recipient}, ${t.subject}, 1, ${t.status}, ${t.provider},
          ${t.providerId}, ${t.error}, case when ${t.status} = 'sent' then now() end)
        on conflict (store_id, event_id, template) do update set attempts = notification.attempts + 1, status = excluded.status, provider = excluded.provider,
          provider_id = coalesce(excluded.provider_id, notification.provider_id), last_error = excluded.last_error,
          sent_at = case when excluded.status = 'sent' then now() else notification.sent_at end
        where notification.status = 'sending'`,
});
