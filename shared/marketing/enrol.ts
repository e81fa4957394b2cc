import type { Database } from "../db/database";
import { isUuid } from "../db/ids";
import { CURRENT_STORE } from "../db/openings";
import { plan } from "../db/plan";
import type { AutomationKind } from "../db/schema-marketing";
import { raw, sql } from "../db/steps";
import { sendStoreUnit } from "../db/unit";
import type { RoutedEvent } from "../events/routes";
import type { Logger } from "../core/log";
import { MONEY_RECEIVED } from "./work";

/**
 * The `{marketing}-send` consumer for relayed events (route `marketing`): enrols an order in the store's
 * enabled automation for the event's kind. The enrolment is unique per automation and order, so a relay
 * that sends an event twice (or a queue that delivers it twice) enrols once. Consent is not decided here
 * but when the enrolment is due and again when its message is sent (./work.ts, ./send.ts). One round trip:
 * the unit reads whether the order qualifies and enrols it in SQL on the same conditions.
 */
export const ENROLLING_KINDS: Readonly<Record<string, AutomationKind>> = {
  "order.placed": "abandoned_checkout",
  "order.paid": "first_order_thanks",
};

export type EnrolOutcome = "enrolled" | "duplicate" | "ignored";

export async function enrolFromEvent(message: RoutedEvent, deps: { db: Database; log: Logger }): Promise<EnrolOutcome> {
  const kind = ENROLLING_KINDS[message.kind];
  const orderId = message.payload["orderId"];
  if (!kind || !isUuid(orderId) || !isUuid(message.eventId)) return "ignored";
  const at = new Date(message.createdAt);
  const from = Number.isNaN(at.getTime()) ? new Date() : at;
  // The enabled automation of the kind and the order, if it qualifies: a bank transfer is not an abandoned
  // checkout (its reminders are the order's own), and a repeat buyer's paid order is not a first order.
  const qualifying = sql`from marketing_automation a, shop_order o
    where a.store_id = ${CURRENT_STORE} and a.kind = ${kind} and a.enabled and o.store_id = ${CURRENT_STORE} and o.id = ${orderId}
      and (a.kind <> 'abandoned_checkout' or o.payment_method = 'gateway')
      and (a.kind <> 'first_order_thanks' or not exists (
        select 1 from shop_order earlier where earlier.store_id = o.store_id and earlier.email = o.email and earlier.id <> o.id
          and earlier.placed_at < o.placed_at and earlier.payment_status in ${sql.raw(MONEY_RECEIVED)}))`;
  return sendStoreUnit(
    deps.db,
    message.storeId,
    (q) =>
      plan(
        [
          raw<{ n: number }>(q, sql`select count(*)::int as n ${qualifying}`),
          raw<{ id: string }>(
            q,
            sql`insert into marketing_enrolment (store_id, automation_id, order_id, email, event_id, due_at)
                select ${CURRENT_STORE}, a.id, o.id, o.email, ${message.eventId},
                  (case when a.kind = 'abandoned_checkout' then o.placed_at else ${from}::timestamptz end) + make_interval(mins => a.delay_minutes)
                ${qualifying}
                on conflict do nothing returning id`,
          ),
        ] as const,
        ([[found], inserted]): EnrolOutcome => (!found?.n ? "ignored" : inserted.length > 0 ? "enrolled" : "duplicate"),
      ),
    { readOnly: false },
  );
}
