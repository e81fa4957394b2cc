import { isUuid } from "../db/ids";
import { CURRENT_STORE } from "../db/openings";
import { plan, together } from "../db/plan";
import { and, eq } from "drizzle-orm";
import { notification } from "../db/schema";
import { sendStoreUnit } from "../db/unit";
import type { RoutedEvent } from "../events/routes";
import { consentKey, storefrontBasePlan } from "../mail/links";
import { CONSENT_LINK_DAYS, consentPath, consentRequestPlan } from "../marketing/consent";
import { deliver, type NotificationDeps } from "./deliver";
import { renderMessage } from "./templates";

/**
 * The marketing consent confirmation (decision 0021): the `customer.consent_requested` event of a checkout
 * that ticked "Email me news and offers" becomes one email to that address with the signed link that
 * confirms it (shared/marketing/consent.ts). Like every shopper message it goes through the outbox, the
 * relay and `{notifications}-send`, and is logged in `notification` under the template `marketing_consent`.
 * It greets nobody by name and says what happens if the reader did not ask: the name was typed at a
 * checkout, perhaps by someone else. Two round trips with the provider call between them, as for orders.
 */
export const CONSENT_TEMPLATE = "marketing_consent";

function consentMessage(storeName: string, url: string) {
  return renderMessage(
    storeName,
    `Confirm you want news and offers from ${storeName}`,
    [
      `Someone asked, while placing an order at ${storeName}, for news and offers to be emailed to this address.`,
      `If it was you, confirm with the link below within ${CONSENT_LINK_DAYS} days. If not, ignore this email: we will not send this address any marketing.`,
    ],
    { url, text: "Confirm", label: "Yes, send me news and offers" },
  );
}

export async function sendConsentRequest(message: RoutedEvent, deps: NotificationDeps): Promise<"sent" | "duplicate" | "skipped" | "failed"> {
  const customerId = message.payload["customerId"];
  const requestedAt = message.payload["requestedAt"];
  const skipped = (reason: string) => {
    deps.log.warn("notification.skipped", { eventId: message.eventId, template: CONSENT_TEMPLATE, reason });
    return "skipped" as const;
  };
  if (!isUuid(customerId) || !isUuid(message.eventId) || typeof requestedAt !== "string" || Number.isNaN(Date.parse(requestedAt))) return skipped("no consent request in the event");
  if (!deps.linkSecret) return skipped("no EMAIL_LINK_SECRET to sign the link with");
  const link = await consentKey(deps.linkSecret, message.eventId);
  const read = await sendStoreUnit(
    deps.db,
    message.storeId,
    (q) =>
      together({
        done: plan(
          [
            q
              .select({ status: notification.status })
              .from(notification)
              .where(and(eq(notification.storeId, CURRENT_STORE), eq(notification.eventId, message.eventId), eq(notification.template, CONSENT_TEMPLATE))),
          ] as const,
          ([[row]]) => row !== undefined && row.status !== "sending",
        ),
        request: consentRequestPlan(q, customerId, requestedAt, link.hash),
        base: storefrontBasePlan(q),
      }),
    { readOnly: false },
  );
  if (read.done) return "duplicate";
  if (!read.request) return skipped("the request was answered, replaced or expired");
  if (!read.base) return skipped("the store has no verified domain for the link");
  const rendered = consentMessage(read.request.storeName, `${read.base}${consentPath(customerId, link.key)}`);
  return deliver(message, deps, CONSENT_TEMPLATE, { email: read.request.email, storeName: read.request.storeName, sender: "news" }, rendered);
}
