import { markEmits } from "../db/changes";
import { plan, type Plan } from "../db/plan";
import type { CONSENT_STATES } from "../db/schema-core";
import type { RowOfStatement } from "../db/statement";
import type { Q } from "../db/steps";
import { confirmConsent, consentLink, consentRequest } from "./statements";

/**
 * Double opt-in (issue 20 item 4; docs/decisions/0021-double-opt-in.md; migration 0033). Ticking "Email me
 * news and offers" at checkout opens a consent request; the `customer.consent_requested` event it writes in
 * the order's transaction becomes a confirmation email (shared/notifications/consent.ts) whose signed link
 * opens `/consent/<customerId>?k=<key>` on the storefront: its GET asks, its POST confirms. Only a confirmed
 * consent (`accepts_marketing`) lets marketing reach the customer.
 */
export type ConsentState = (typeof CONSENT_STATES)[number];

/** A checkout asks again for a customer whose request went unanswered this long (one confirmation email a day at most). */
export const CONSENT_REQUEST_EVERY_HOURS = 24;
export { CONSENT_LINK_DAYS } from "./statements";

/** The confirmation page of a customer's request on the storefront, with the link's key. */
export const consentPath = (customerId: string, key: string) => `/consent/${customerId}?k=${encodeURIComponent(key)}`;

export type ConsentLinkRow = RowOfStatement<typeof consentLink>;

/** What a confirmation link's page shows: the customer's consent and the hash its key must match. One statement. */
export function consentLinkPlan(q: Q, customerId: string): Plan<ConsentLinkRow | undefined> {
  return plan(
    [
      consentLink(q, customerId),
    ] as const,
    ([[row]]) => row,
  );
}

/**
 * Confirms the open request whose key hash is `keyHash` (the one the page read and matched), with its
 * `customer.updated` event, in one statement; answers whether it confirmed. A request confirmed, withdrawn
 * or replaced since the page read it confirms nothing.
 */
export function confirmConsentPlan(q: Q, customerId: string, keyHash: string): Plan<boolean> {
  return plan(
    [
      markEmits(confirmConsent(q, customerId, keyHash)),
    ] as const,
    ([[row]]) => (row?.n ?? 0) > 0,
  );
}

export type ConsentRequestRow = RowOfStatement<typeof consentRequest>;

/**
 * The confirmation email's unit (shared/notifications/consent.ts): the customer's request announced by the
 * event (`requestedAt`, to the microsecond) still open, its link's key hash stored on the row so the link
 * works by the time the email arrives. No row when the request was confirmed, withdrawn, replaced by a
 * later one or expired: that email is not sent.
 */
export function consentRequestPlan(q: Q, customerId: string, requestedAt: string, keyHash: string): Plan<ConsentRequestRow | undefined> {
  return plan(
    [
      consentRequest(q, customerId, requestedAt, keyHash),
    ] as const,
    ([[row]]) => row,
  );
}
