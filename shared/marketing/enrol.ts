import type { Database } from "../db/database";
import { isUuid } from "../db/ids";
import { plan } from "../db/plan";
import type { AutomationKind } from "../db/schema-marketing";
import { sendStoreUnit } from "../db/unit";
import type { RoutedEvent } from "../events/routes";
import type { Logger } from "../core/log";
import { enrol, qualifies } from "./statements";

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
  const enrolment = { kind, orderId, eventId: message.eventId, from };
  return sendStoreUnit(
    deps.db,
    message.storeId,
    (q) =>
      plan(
        [
          qualifies(q, enrolment),
          enrol(q, enrolment),
        ] as const,
        ([[found], inserted]): EnrolOutcome => (!found?.n ? "ignored" : inserted.length > 0 ? "enrolled" : "duplicate"),
      ),
    { readOnly: false },
  );
}
