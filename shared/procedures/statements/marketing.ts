import type { SQL } from "drizzle-orm";
import { campaign, marketingAutomation } from "../../db/schema";
import { EXAMPLE, pg, statement } from "../../db/statement";
import { sql } from "../../db/steps";

/** The statements of campaigns and automations (../marketing.ts). */

const { id: ID, store: STORE } = EXAMPLE;

const CAMPAIGN_SELECT = sql.raw(`select k.id, k.name, k.subject, k.body, k.audience, k.status, k.starts_at as "startsAt", k.started_at as "startedAt",
    k.finished_at as "finishedAt", k.recipients, k.created_at as "createdAt",
    coalesce(m.sent, 0)::int as sent, coalesce(m.skipped, 0)::int as skipped, coalesce(m.failed, 0)::int as failed, coalesce(m.queued, 0)::int as queued
  from campaign k
  left join lateral (
    select count(*) filter (where status = 'sent') as sent, count(*) filter (where status = 'skipped') as skipped,
      count(*) filter (where status = 'failed') as failed, count(*) filter (where status = 'queued') as queued
    from marketing_message where store_id = k.store_id and campaign_id = k.id) m on true`);

const campaignRow = {
  id: campaign.id,
  name: campaign.name,
  subject: campaign.subject,
  body: campaign.body,
  audience: campaign.audience,
  status: campaign.status,
  startsAt: campaign.startsAt,
  startedAt: campaign.startedAt,
  finishedAt: campaign.finishedAt,
  recipients: campaign.recipients,
  createdAt: campaign.createdAt,
  sent: pg.int4(),
  skipped: pg.int4(),
  failed: pg.int4(),
  queued: pg.int4(),
};

/** One campaign with its messages' counts. */
export const campaignById = statement("procedures.campaignById", {
  row: campaignRow,
  examples: [[STORE, ID]],
  sql: (store: SQL, id: string) => sql`${CAMPAIGN_SELECT} where k.store_id = ${store} and k.id = ${id}`,
});

/** A page of the store's campaigns (of a status), newest first. */
export const campaignsPage = statement("procedures.campaignsPage", {
  row: campaignRow,
  examples: [
    [STORE, null, { limit: 20, offset: 0 }],
    [STORE, "sent", { limit: 20, offset: 20 }],
  ],
  sql: (store: SQL, status: string | null, page: { limit: number; offset: number }) =>
    sql`${CAMPAIGN_SELECT} where k.store_id = ${store}${status ? sql` and k.status = ${status}` : sql``} order by k.created_at desc, k.id desc limit ${page.limit} offset ${page.offset}`,
});

export const countCampaigns = statement("procedures.countCampaigns", {
  row: { n: pg.int4() },
  examples: [
    [STORE, null],
    [STORE, "sent"],
  ],
  sql: (store: SQL, status: string | null) => sql`select count(*)::int as n from campaign k where k.store_id = ${store}${status ? sql` and k.status = ${status}` : sql``}`,
});

export interface CampaignFields {
  name: string;
  subject: string;
  body: string;
  audience: string;
  /** ISO 8601; null: now. */
  startsAt: string | null;
}

export const insertCampaign = statement("procedures.insertCampaign", {
  row: {},
  examples: [[STORE, ID, { name: "Sale", subject: "Sale", body: "Hello", audience: "subscribers", startsAt: null }]],
  sql: (store: SQL, id: string, k: CampaignFields) =>
    sql`insert into campaign (id, store_id, name, subject, body, audience, starts_at)
        values (${id}, ${store}, ${k.name}, ${k.subject}, ${k.body}, ${k.audience}, coalesce(${k.startsAt}::timestamptz, now()))`,
});

/** The fields given change; the others stay (null: not given). */
export const changeCampaign = statement("procedures.changeCampaign", {
  row: {},
  examples: [[STORE, ID, { name: null, subject: null, body: null, audience: null, startsAt: null }]],
  sql: (store: SQL, id: string, k: { [F in keyof CampaignFields]: CampaignFields[F] | null }) =>
    sql`update campaign set name = coalesce(${k.name}, name), subject = coalesce(${k.subject}, subject),
          body = coalesce(${k.body}, body), audience = coalesce(${k.audience}, audience),
          starts_at = coalesce(${k.startsAt}::timestamptz, starts_at), updated_at = now()
        where store_id = ${store} and id = ${id}`,
});

/** Every automation the store saved, with how many orders it enrolled and messages it sent. */
export const automations = statement("procedures.automations", {
  row: {
    kind: marketingAutomation.kind,
    enabled: marketingAutomation.enabled,
    delay_minutes: marketingAutomation.delayMinutes,
    subject: marketingAutomation.subject,
    body: marketingAutomation.body,
    updated_at: marketingAutomation.updatedAt,
    enrolled: pg.int4(),
    sent: pg.int4(),
  },
  examples: [[STORE]],
  sql: (store: SQL) =>
    sql`select a.kind, a.enabled, a.delay_minutes, a.subject, a.body, a.updated_at,
       (select count(*) from marketing_enrolment e where e.store_id = a.store_id and e.automation_id = a.id)::int as enrolled,
       (select count(*) from marketing_message m join marketing_enrolment e on e.store_id = m.store_id and e.id = m.enrolment_id
          where m.store_id = a.store_id and e.automation_id = a.id and m.status = 'sent')::int as sent
     from marketing_automation a where a.store_id = ${store}`,
});

export interface AutomationChange {
  kind: string;
  enabled: boolean | null;
  delayMinutes: number | null;
  subject: string | null;
  body: string | null;
  /** What a new row takes for what is not given. */
  defaults: { delayMinutes: number; subject: string; body: string };
}

/** The automation saved: a new row takes the defaults for what is not given, a saved one keeps its own. */
export const saveAutomation = statement("procedures.saveAutomation", {
  row: {},
  examples: [[STORE, { kind: "abandoned_checkout", enabled: true, delayMinutes: null, subject: null, body: null, defaults: { delayMinutes: 60, subject: "s", body: "b" } }]],
  sql: (store: SQL, a: AutomationChange) =>
    sql`insert into marketing_automation (store_id, kind, enabled, delay_minutes, subject, body)
        values (${store}, ${a.kind}, coalesce(${a.enabled}::boolean, false), coalesce(${a.delayMinutes}::int, ${a.defaults.delayMinutes}::int),
          coalesce(${a.subject}::text, ${a.defaults.subject}::text), coalesce(${a.body}::text, ${a.defaults.body}::text))
        on conflict (store_id, kind) do update set enabled = coalesce(${a.enabled}::boolean, marketing_automation.enabled),
          delay_minutes = coalesce(${a.delayMinutes}::int, marketing_automation.delay_minutes), subject = coalesce(${a.subject}::text, marketing_automation.subject),
          body = coalesce(${a.body}::text, marketing_automation.body), updated_at = now()`,
});
