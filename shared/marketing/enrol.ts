import type { Database } from "../db/database";
import { isUuid } from "../db/ids";
import type { AutomationKind } from "../db/schema-marketing";
import { withStore } from "../db/with-store";
import type { RoutedEvent } from "../events/routes";
import type { Logger } from "../log";
import { MONEY_RECEIVED } from "./work";

/**
 * The `{marketing}-send` consumer for relayed events (route `marketing`): enrols an order in the store's
 * enabled automation for the event's kind. The enrolment is unique per automation and order, so a relay
 * that sends an event twice (or a queue that delivers it twice) enrols once. Consent is not decided here
 * but when the enrolment is due and again when its message is sent (./work.ts, ./send.ts).
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
  return withStore(deps.db, message.storeId, async (tx) => {
    const { rows } = await tx.$client.query<{ automation_id: string; delay_minutes: number; email: string; payment_method: string; placed_at: Date; first: boolean }>(
      `select a.id as automation_id, a.delay_minutes, o.email, o.payment_method, o.placed_at,
         not exists (select 1 from shop_order earlier where earlier.store_id = o.store_id and earlier.email = o.email and earlier.id <> o.id
                       and earlier.placed_at < o.placed_at and earlier.payment_status in ${MONEY_RECEIVED}) as first
       from marketing_automation a, shop_order o
       where a.store_id = $1 and a.kind = $2 and a.enabled and o.store_id = $1 and o.id = $3`,
      [tx.storeId, kind, orderId],
    );
    const row = rows[0];
    // No enabled automation for the kind; a bank transfer is not an abandoned checkout (its reminders are the order's own); a repeat buyer's paid order.
    if (!row || (kind === "abandoned_checkout" && row.payment_method !== "gateway") || (kind === "first_order_thanks" && !row.first)) return "ignored";
    const from = kind === "abandoned_checkout" ? row.placed_at : Number.isNaN(at.getTime()) ? new Date() : at;
    const inserted = await tx.$client.query(
      `insert into marketing_enrolment (store_id, automation_id, order_id, email, event_id, due_at)
       values ($1, $2, $3, $4, $5, $6::timestamptz + make_interval(mins => $7)) on conflict do nothing`,
      [tx.storeId, row.automation_id, orderId, row.email, message.eventId, from, row.delay_minutes],
    );
    return inserted.rowCount ? "enrolled" : "duplicate";
  });
}
