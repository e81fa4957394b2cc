import { CURRENT_STORE } from "../db/openings";
import { plan, type Plan } from "../db/plan";
import { raw, sql, type Q } from "../db/steps";

/**
 * The store-scoped steps of `{marketing}-tick` (../jobs/marketing-tick.ts), statements of the store's one
 * unit of work: each decides in SQL, so the whole tick of a store is one round trip. The
 * `marketing_message` rows are the durable work list: a campaign's start writes one per consenting
 * recipient, a due enrolment one for its customer; the tick claims queued rows for five minutes and hands
 * their ids to `{marketing}-send`. A claim that lapses (a lost queue message, a crashed consumer) is taken
 * again by a later tick, so nothing is lost; the send itself is idempotent by the message id.
 */

/** Payment states in which money was received: the order counts as bought. */
export const MONEY_RECEIVED = "('partially_paid', 'paid', 'partially_refunded', 'refunded')";

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

/** A claim lasts this long; a row still queued after it is claimed again. */
export const CLAIM_MS = 5 * 60_000;

/**
 * Starts every campaign due at `now`: one queued message per consenting customer of its audience (the
 * audiences are the ones migration 0021 allows), then each started campaign's recipients counted.
 */
export function startDueCampaignsPlan(q: Q, now: Date): Plan<{ campaigns: number; messages: number }> {
  return plan(
    [
      raw<{ campaigns: number; messages: number }>(
        q,
        sql`with started as (
              update campaign set status = 'sending', started_at = ${now}, updated_at = now()
              where store_id = ${CURRENT_STORE} and status = 'scheduled' and starts_at <= ${now} returning id, audience),
            added as (
              insert into marketing_message (store_id, customer_id, campaign_id, recipient)
              select c.store_id, c.id, k.id, c.email_lower from started k join customer c on c.store_id = ${CURRENT_STORE}
              where c.accepts_marketing and c.email is not null and ${sql.raw(AUDIENCE_SQL)}
              on conflict do nothing returning 1)
            select (select count(*)::int from started) as campaigns, (select count(*)::int from added) as messages`,
      ),
      // The campaigns the statement above started are those it stamped with this tick's time.
      raw(
        q,
        sql`update campaign k set recipients = (select count(*) from marketing_message m where m.store_id = k.store_id and m.campaign_id = k.id)
            where k.store_id = ${CURRENT_STORE} and k.status = 'sending' and k.started_at = ${now}`,
      ),
    ] as const,
    ([[row]]) => row ?? { campaigns: 0, messages: 0 },
  );
}

/**
 * Decides each enrolment due at `now` (oldest first, at most `limit`): a disabled automation, an abandoned
 * checkout that was paid (or followed by a paid order), or a customer without consent is skipped with the
 * reason; the rest get their message queued.
 */
export function queueDueEnrolmentsPlan(q: Q, now: Date, limit: number): Plan<{ queued: number; skipped: number }> {
  return plan(
    [
      raw<{ queued: number; skipped: number }>(
        q,
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
      ),
    ] as const,
    ([[row]]) => row ?? { queued: 0, skipped: 0 },
  );
}

/** Claims up to `limit` queued messages whose claim is free or lapsed; answers their ids. */
export function claimQueuedMessagesPlan(q: Q, now: Date, limit: number): Plan<string[]> {
  return plan(
    [
      raw<{ id: string }>(
        q,
        sql`with next as (
              select id from marketing_message
              where store_id = ${CURRENT_STORE} and status = 'queued' and (claimed_until is null or claimed_until <= ${now})
              order by created_at, id limit ${limit} for update skip locked)
            update marketing_message m set claimed_until = ${now}::timestamptz + make_interval(secs => ${CLAIM_MS / 1000})
            from next where m.store_id = ${CURRENT_STORE} and m.id = next.id returning m.id, m.created_at`,
      ),
    ] as const,
    ([rows]) => rows.map((r) => r.id),
  );
}

/** Campaigns with nothing left queued are sent; answers how many. */
export function finishCampaignsPlan(q: Q, now: Date): Plan<number> {
  return plan(
    [
      raw<{ n: number }>(
        q,
        sql`with finished as (
              update campaign c set status = 'sent', finished_at = ${now}, updated_at = now()
              where c.store_id = ${CURRENT_STORE} and c.status = 'sending'
                and not exists (select 1 from marketing_message m where m.store_id = c.store_id and m.campaign_id = c.id and m.status = 'queued')
              returning 1)
            select count(*)::int as n from finished`,
      ),
    ] as const,
    ([[row]]) => row?.n ?? 0,
  );
}
