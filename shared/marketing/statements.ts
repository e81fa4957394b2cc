import type { SQL } from "drizzle-orm";
import { customer, marketingEnrolment, marketingMessage, shopOrder, store } from "../db/schema";
import { EXAMPLE, orNull, pg, statement } from "../db/statement";
import { CURRENT_STORE, sql } from "../db/steps";

/**
 * Marketing's statements in SQL (decision 0026): double opt-in (./consent.ts), enrolment (./enrol.ts), the
 * tick's steps (./work.ts) and the send (./send.ts). Each decides in SQL, so a store's tick is one round trip.
 */

const { id: ID, at: AT, hash: HASH } = EXAMPLE;

/** Payment states in which money was received: the order counts as bought. */
export const MONEY_RECEIVED = "('partially_paid', 'paid', 'partially_refunded', 'refunded')";

/** A confirmation link works this long after its request. */
export const CONSENT_LINK_DAYS = 7;

/** The request is open: pending, and asked within the link's lifetime (`c` is the customer). */
const OPEN = sql.raw(`c.marketing_consent = 'pending' and c.marketing_consent_requested_at > now() - make_interval(days => ${CONSENT_LINK_DAYS})`);

/** What a confirmation link's page shows: the customer's consent and the hash its key must match. */
export const consentLink = statement("marketing.consentLink", {
  row: {
    email: customer.email,
    state: customer.marketingConsent,
    /** The SHA-256 of the latest request's key, compared by the page in constant time. */
    keyHash: customer.marketingConsentKeyHash,
    /** Pending and not expired: the link can confirm it. */
    open: pg.bool(),
  },
  examples: [[ID]],
  sql: (customerId: string) =>
    sql`select c.email, c.marketing_consent as state, c.marketing_consent_key_hash as "keyHash", (${OPEN}) as open
        from customer c where c.store_id = ${CURRENT_STORE} and c.id = ${customerId}`,
});

/** Confirms the open request whose key hash is `keyHash`, with its `customer.updated` event; answers how many (0 or 1). */
export const confirmConsent = statement("marketing.confirmConsent", {
  row: { n: pg.int4() },
  examples: [[ID, HASH]],
  sql: (customerId: string, keyHash: string) =>
    sql`with confirmed as (
          update customer c set accepts_marketing = true, marketing_consent_updated_at = now(), marketing_consent_source = 'confirmation_link', updated_at = now()
          where c.store_id = ${CURRENT_STORE} and c.id = ${customerId} and c.marketing_consent_key_hash = ${keyHash} and ${OPEN}
          returning c.id),
        event as (
          insert into outbox_event (store_id, kind, payload)
          select ${CURRENT_STORE}, 'customer.updated', jsonb_build_object('customerId', id, 'fields', jsonb_build_array('acceptsMarketing'), 'source', 'confirmation_link')
          from confirmed)
        select count(*)::int as n from confirmed`,
});

/** The request announced at `requestedAt`, still open, its link's key hash stored; no row when it is not open. */
export const consentRequest = statement("marketing.consentRequest", {
  row: { email: pg.text(), storeName: store.name },
  examples: [[ID, "2026-01-01T00:00:00.000000Z", HASH]],
  sql: (customerId: string, requestedAt: string, keyHash: string) =>
    sql`with asked as (
          update customer c set marketing_consent_key_hash = ${keyHash}
          where c.store_id = ${CURRENT_STORE} and c.id = ${customerId} and c.email is not null
            and c.marketing_consent_requested_at = ${requestedAt}::timestamptz and ${OPEN}
          returning c.email)
        select lower(a.email) as email, s.name as "storeName" from asked a join store s on s.id = ${CURRENT_STORE}`,
});

/** An event's order enrolled in the store's enabled automation of a kind, when it qualifies. */
export interface Enrolment {
  kind: string;
  orderId: string;
  eventId: string;
  from: Date;
}

// The enabled automation of the kind and the order, if it qualifies: a bank transfer is not an abandoned
// checkout (its reminders are the order's own), and a repeat buyer's paid order is not a first order.
const qualifying = (e: Enrolment) => sql`from marketing_automation a, shop_order o
    where a.store_id = ${CURRENT_STORE} and a.kind = ${e.kind} and a.enabled and o.store_id = ${CURRENT_STORE} and o.id = ${e.orderId}
      and (a.kind <> 'abandoned_checkout' or o.payment_method = 'gateway')
      and (a.kind <> 'first_order_thanks' or not exists (
        select 1 from shop_order earlier where earlier.store_id = o.store_id and earlier.email = o.email and earlier.id <> o.id
          and earlier.placed_at < o.placed_at and earlier.payment_status in ${sql.raw(MONEY_RECEIVED)}))`;

const AN_ENROLMENT: Enrolment = { kind: "first_order_thanks", orderId: ID, eventId: ID, from: AT };

export const qualifies = statement("marketing.qualifies", {
  row: { n: pg.int4() },
  examples: [[AN_ENROLMENT]],
  sql: (e: Enrolment) => sql`select count(*)::int as n ${qualifying(e)}`,
});

export const enrol = statement("marketing.enrol", {
  row: { id: marketingEnrolment.id },
  examples: [[AN_ENROLMENT]],
  sql: (e: Enrolment) =>
    sql`insert into marketing_enrolment (store_id, automation_id, order_id, email, event_id, due_at)
        select ${CURRENT_STORE}, a.id, o.id, o.email, ${e.eventId},
          (case when a.kind = 'abandoned_checkout' then o.placed_at else ${e.from}::timestamptz end) + make_interval(mins => a.delay_minutes)
        ${qualifying(e)}
        on conflict do nothing returning id`,
});

/**
 * Who a campaign's audience is, on top of consent (always required) and an email address (`k` is the campaign,
 * `c` the customer). Buyers are matched by the stored lower-cased emails (migration 0026): `=` on plain
 * columns is an index condition under RLS (shop_order_email_lower_idx), `lower()` is not.
 */
const AUDIENCE_SQL = `case k.audience
  when 'subscribers' then true
  when 'buyers' then exists (select 1 from shop_order o where o.store_id = c.store_id and o.email_lower = c.email_lower and o.payment_status in ${MONEY_RECEIVED})
  when 'non_buyers' then not exists (select 1 from shop_order o where o.store_id = c.store_id and o.email_lower = c.email_lower and o.payment_status in ${MONEY_RECEIVED})
end`;

/** Starts every campaign due at `now`: one queued message per consenting customer of its audience; answers the counts. */
export const startDueCampaigns = statement("marketing.startDueCampaigns", {
  row: { campaigns: pg.int4(), messages: pg.int4() },
  examples: [[AT]],
  sql: (now: Date) =>
    sql`with started as (
          update campaign set status = 'sending', started_at = ${now}, updated_at = now()
          where store_id = ${CURRENT_STORE} and status = 'scheduled' and starts_at <= ${now} returning id, audience),
        added as (
          insert into marketing_message (store_id, customer_id, campaign_id, recipient)
          select c.store_id, c.id, k.id, c.email_lower from started k join customer c on c.store_id = ${CURRENT_STORE}
          where c.accepts_marketing and c.email is not null and ${sql.raw(AUDIENCE_SQL)}
          on conflict do nothing returning 1)
        select (select count(*)::int from started) as campaigns, (select count(*)::int from added) as messages`,
});

/** The recipients of the campaigns started at `now` (stamped with the tick's time), counted. */
export const countRecipients = statement("marketing.countRecipients", {
  row: {},
  examples: [[AT]],
  sql: (now: Date) =>
    sql`update campaign k set recipients = (select count(*) from marketing_message m where m.store_id = k.store_id and m.campaign_id = k.id)
        where k.store_id = ${CURRENT_STORE} and k.status = 'sending' and k.started_at = ${now}`,
});

/** Decides each enrolment due at `now` (oldest first, at most `limit`): skipped with the reason, or its message queued. */
export const queueDueEnrolments = statement("marketing.queueDueEnrolments", {
  row: { queued: pg.int4(), skipped: pg.int4() },
  examples: [[AT, 100]],
  sql: (now: Date, limit: number) =>
    sql`with due as (
          select e.id, a.kind, a.enabled,
            (o.payment_status in ${sql.raw(MONEY_RECEIVED)} or exists (
               select 1 from shop_order later where later.store_id = o.store_id and later.email_lower = o.email_lower and later.id <> o.id
                 and later.placed_at >= o.placed_at and later.payment_status in ${sql.raw(MONEY_RECEIVED)})) as converted,
            (select c.id from customer c where c.store_id = e.store_id and c.email_lower = e.email and c.accepts_marketing) as customer_id
          from marketing_enrolment e
          join marketing_automation a on a.store_id = e.store_id and a.id = e.automation_id
          join shop_order o on o.store_id = e.store_id and o.id = e.order_id
          where e.store_id = ${CURRENT_STORE} and e.status = 'waiting' and e.due_at <= ${now}
          order by e.due_at, e.id limit ${limit}
          for update of e skip locked),
        judged as (
          select id, customer_id,
            case when not enabled then 'disabled' when kind = 'abandoned_checkout' and converted then 'converted' when customer_id is null then 'no_consent' end as reason
          from due),
        added as (
          insert into marketing_message (store_id, customer_id, enrolment_id, recipient)
          select c.store_id, c.id, d.id, c.email_lower from judged d join customer c on c.store_id = ${CURRENT_STORE} and c.id = d.customer_id
          where d.reason is null
          on conflict do nothing),
        decided as (
          update marketing_enrolment e set status = case when d.reason is null then 'queued' else 'skipped' end, reason = d.reason, decided_at = ${now}
          from judged d where e.store_id = ${CURRENT_STORE} and e.id = d.id returning d.reason)
        select (count(*) filter (where reason is null))::int as queued, (count(*) filter (where reason is not null))::int as skipped from decided`,
});

/** Claims up to `limit` queued messages whose claim is free or lapsed for `claimSeconds`. */
export const claimQueuedMessages = statement("marketing.claimQueuedMessages", {
  row: { id: marketingMessage.id, created_at: marketingMessage.createdAt },
  examples: [[AT, 100, 300]],
  sql: (now: Date, limit: number, claimSeconds: number) =>
    sql`with next as (
          select id from marketing_message
          where store_id = ${CURRENT_STORE} and status = 'queued' and (claimed_until is null or claimed_until <= ${now})
          order by created_at, id limit ${limit} for update skip locked)
        update marketing_message m set claimed_until = ${now}::timestamptz + make_interval(secs => ${claimSeconds})
        from next where m.store_id = ${CURRENT_STORE} and m.id = next.id returning m.id, m.created_at`,
});

/** Campaigns with nothing left queued are sent; answers how many. */
export const finishCampaigns = statement("marketing.finishCampaigns", {
  row: { n: pg.int4() },
  examples: [[AT]],
  sql: (now: Date) =>
    sql`with finished as (
          update campaign c set status = 'sent', finished_at = ${now}, updated_at = now()
          where c.store_id = ${CURRENT_STORE} and c.status = 'sending'
            and not exists (select 1 from marketing_message m where m.store_id = c.store_id and m.campaign_id = c.id and m.status = 'queued')
          returning 1)
        select count(*)::int as n from finished`,
});

// The send (./send.ts): the hand-over's messages still queued, taken in one unit.

const mine = (ids: readonly string[]) => sql`m2.store_id = ${CURRENT_STORE} and m2.id = any(${`{${ids.join(",")}}`}::uuid[]) and m2.status = 'queued'`;

/** Those whose customer withdrew consent (or lost the email), or whose campaign was cancelled, become `skipped` with the reason. */
export const skipUnsendable = statement("marketing.skipUnsendable", {
  row: { id: marketingMessage.id },
  examples: [[[ID]]],
  sql: (ids: readonly string[]) =>
    sql`update marketing_message m set status = 'skipped', reason = f.reason
        from (select m2.id, case when k.status = 'cancelled' then 'campaign cancelled' when not c.accepts_marketing then 'no marketing consent'
                                 when c.email is null then 'no email address' end as reason
              from marketing_message m2 join customer c on c.store_id = m2.store_id and c.id = m2.customer_id
              left join campaign k on k.store_id = m2.store_id and k.id = m2.campaign_id
              where ${mine(ids)}) f
        where m.store_id = ${CURRENT_STORE} and m.id = f.id and f.reason is not null and m.status = 'queued'
        returning m.id`,
});

/** The others get their recipient and unsubscribe key, and answer what their email needs. */
export const claimSendable = statement("marketing.claimSendable", {
  row: {
    id: marketingMessage.id,
    recipient: pg.text(),
    first_name: customer.firstName,
    subject: pg.text(),
    body: pg.text(),
    tag: pg.text(),
    order_number: orNull(shopOrder.number),
    store_name: store.name,
  },
  examples: [[[ID], [HASH]]],
  sql: (ids: readonly string[], hashes: readonly string[]) =>
    sql`update marketing_message m set recipient = f.recipient, unsubscribe_key_hash = h.hash
        from (select m2.id, lower(c.email) as recipient, c.first_name, coalesce(k.subject, a.subject) as subject, coalesce(k.body, a.body) as body,
                case when k.id is not null then 'campaign' else a.kind end as tag, o.number as order_number, s.name as store_name
              from marketing_message m2
              join customer c on c.store_id = m2.store_id and c.id = m2.customer_id
              join store s on s.id = m2.store_id
              left join campaign k on k.store_id = m2.store_id and k.id = m2.campaign_id
              left join marketing_enrolment e on e.store_id = m2.store_id and e.id = m2.enrolment_id
              left join marketing_automation a on a.store_id = e.store_id and a.id = e.automation_id
              left join shop_order o on o.store_id = e.store_id and o.id = e.order_id
              where ${mine(ids)} and c.accepts_marketing and c.email is not null and k.status is distinct from 'cancelled') f,
             unnest(${`{${ids.join(",")}}`}::uuid[], ${`{${hashes.join(",")}}`}::text[]) as h(id, hash)
        where m.store_id = ${CURRENT_STORE} and m.id = f.id and h.id = f.id and m.status = 'queued'
        returning f.id, f.recipient, f.first_name, f.subject, f.body, f.tag, f.order_number, f.store_name`,
});

/** One message's try, as the record reads it. */
export type Tried = { id: string; sent: true; provider_id: string } | { id: string; sent: false; failed: boolean; error: string; retry_in_ms: number | null };

/** Records the tries: each message still queued counts the try and becomes `sent`, or `failed` when refused or out of tries. */
export const recordTries = statement("marketing.recordTries", {
  row: {},
  examples: [["local", 5, [{ id: ID, sent: true, provider_id: "m1" }]]],
  sql: (provider: string, maxAttempts: number, tried: readonly Tried[]) =>
    sql`update marketing_message m set attempts = m.attempts + 1, provider = ${provider},
          status = case when r.sent then 'sent' when r.failed or m.attempts + 1 >= ${maxAttempts} then 'failed' else m.status end,
          sent_at = case when r.sent then now() else m.sent_at end,
          provider_id = case when r.sent then r.provider_id else m.provider_id end,
          last_error = case when r.sent then null else r.error end,
          claimed_until = case when r.retry_in_ms is null then m.claimed_until else now() + make_interval(secs => r.retry_in_ms / 1000.0) end
        from jsonb_to_recordset(${JSON.stringify(tried)}::jsonb) as r(id uuid, sent boolean, failed boolean, provider_id text, error text, retry_in_ms int)
        where m.store_id = ${CURRENT_STORE} and m.id = r.id and m.status = 'queued'`,
});

// A marketing email's unsubscribe link (workers/storefront/unsubscribe.tsx).

/** The message a link's key opens, with its customer's consent now. */
const messageOfLink = (store: SQL, messageId: string, keyHash: string) =>
  sql`select m.customer_id, m.recipient, c.accepts_marketing as consent from marketing_message m
    join customer c on c.store_id = m.store_id and c.id = m.customer_id
    where m.store_id = ${store} and m.id = ${messageId} and m.unsubscribe_key_hash = ${keyHash}`;

const linkRow = { customer_id: marketingMessage.customerId, recipient: marketingMessage.recipient, consent: customer.acceptsMarketing };

export const unsubscribeLink = statement("marketing.unsubscribeLink", {
  row: linkRow,
  examples: [[EXAMPLE.store, ID, HASH]],
  sql: (store: SQL, messageId: string, keyHash: string) => messageOfLink(store, messageId, keyHash),
});

/**
 * Unsubscribing in one statement: the consent turned off only while it is on, the message marked and the
 * customer.updated event written only for that change (the customer row locked). Answers the message as found.
 */
export const unsubscribe = statement("marketing.unsubscribe", {
  row: linkRow,
  examples: [[EXAMPLE.store, ID, HASH]],
  sql: (store: SQL, messageId: string, keyHash: string) =>
    sql`with m as (${messageOfLink(store, messageId, keyHash)} for update of c),
               turned as (update customer set accepts_marketing = false, marketing_consent_updated_at = now(), marketing_consent_source = 'unsubscribe_link', updated_at = now()
                          where store_id = ${store} and id = (select customer_id from m) and (select consent from m) returning id),
               marked as (update marketing_message set unsubscribed_at = now() where store_id = ${store} and id = ${messageId} and exists (select 1 from turned)),
               event as (insert into outbox_event (store_id, kind, payload)
                         select ${store}, 'customer.updated', jsonb_build_object('customerId', id, 'fields', jsonb_build_array('acceptsMarketing'), 'source', 'unsubscribe_link') from turned)
             select customer_id, recipient, consent from m`,
});
