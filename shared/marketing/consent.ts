import { markEmits } from "../db/changes";
import { CURRENT_STORE } from "../db/openings";
import { plan, type Plan } from "../db/plan";
import type { CONSENT_STATES } from "../db/schema-core";
import { raw, sql, type Q } from "../db/steps";

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
/** A confirmation link works this long after its request. */
export const CONSENT_LINK_DAYS = 7;

/** The confirmation page of a customer's request on the storefront, with the link's key. */
export const consentPath = (customerId: string, key: string) => `/consent/${customerId}?k=${encodeURIComponent(key)}`;

/** The request is open: pending, and asked within the link's lifetime (`c` is the customer). */
const OPEN = sql.raw(`c.marketing_consent = 'pending' and c.marketing_consent_requested_at > now() - make_interval(days => ${CONSENT_LINK_DAYS})`);

export interface ConsentLinkRow extends Record<string, unknown> {
  email: string | null;
  state: ConsentState;
  /** The SHA-256 of the latest request's key, compared by the page in constant time. */
  keyHash: string | null;
  /** Pending and not expired: the link can confirm it. */
  open: boolean;
}

/** What a confirmation link's page shows: the customer's consent and the hash its key must match. One statement. */
export function consentLinkPlan(q: Q, customerId: string): Plan<ConsentLinkRow | undefined> {
  return plan(
    [
      raw<ConsentLinkRow>(
        q,
        sql`select c.email, c.marketing_consent as state, c.marketing_consent_key_hash as "keyHash", (${OPEN}) as open
            from customer c where c.store_id = ${CURRENT_STORE} and c.id = ${customerId}`,
      ),
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
      markEmits(raw<{ n: number }>(
        q,
        sql`with confirmed as (
              update customer c set accepts_marketing = true, marketing_consent_updated_at = now(), marketing_consent_source = 'confirmation_link', updated_at = now()
              where c.store_id = ${CURRENT_STORE} and c.id = ${customerId} and c.marketing_consent_key_hash = ${keyHash} and ${OPEN}
              returning c.id),
            event as (
              insert into outbox_event (store_id, kind, payload)
              select ${CURRENT_STORE}, 'customer.updated', jsonb_build_object('customerId', id, 'fields', jsonb_build_array('acceptsMarketing'), 'source', 'confirmation_link')
              from confirmed)
            select count(*)::int as n from confirmed`,
      )),
    ] as const,
    ([[row]]) => (row?.n ?? 0) > 0,
  );
}

export interface ConsentRequestRow extends Record<string, unknown> {
  email: string;
  storeName: string;
}

/**
 * The confirmation email's unit (shared/notifications/consent.ts): the customer's request announced by the
 * event (`requestedAt`, to the microsecond) still open, its link's key hash stored on the row so the link
 * works by the time the email arrives. No row when the request was confirmed, withdrawn, replaced by a
 * later one or expired: that email is not sent.
 */
export function consentRequestPlan(q: Q, customerId: string, requestedAt: string, keyHash: string): Plan<ConsentRequestRow | undefined> {
  return plan(
    [
      raw<ConsentRequestRow>(
        q,
        sql`with asked as (
              update customer c set marketing_consent_key_hash = ${keyHash}
              where c.store_id = ${CURRENT_STORE} and c.id = ${customerId} and c.email is not null
                and c.marketing_consent_requested_at = ${requestedAt}::timestamptz and ${OPEN}
              returning c.email)
            select lower(a.email) as email, s.name as "storeName" from asked a join store s on s.id = ${CURRENT_STORE}`,
      ),
    ] as const,
    ([[row]]) => row,
  );
}
