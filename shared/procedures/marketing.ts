import { and, eq, sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import { emitStep, ensure } from "../db/changes";
import { mapPlan, plan, thenPlan } from "../db/plan";
import { AUTOMATION_KINDS, campaign, CAMPAIGN_AUDIENCES, CAMPAIGN_STATUSES, marketingMessage, type AutomationKind } from "../db/schema-marketing";
import type { RowOfStatement } from "../db/statement";
import type { Q } from "../db/steps";
import { AppError } from "../core/errors";
import { instant } from "../core/inputs";
import { AUTOMATION_DEFAULTS, templateText } from "../marketing/render";
import { storeProcedure } from "./define";
import { offsetOf, pagePlan, pagingInput } from "./paging";
import { automations, campaignById, campaignsPage, changeCampaign, countCampaigns, insertCampaign, saveAutomation } from "./statements/marketing";
import * as out from "./outputs";

/**
 * Campaigns and automations (docs/marketing.md). Reading needs `customers.read` (they are about the store's
 * customers). Scheduling, changing or cancelling a campaign needs `marketing.send`: it decides what every
 * consenting customer is sent, so it is a member's permission (Owner and Admin) that no grant area yields,
 * `content` write included (decision 0021); automations are changed with `content.write` (decision 0013).
 * Consent is never an input here: a campaign reaches only customers whose consent is confirmed
 * (`acceptsMarketing`) when it is sent.
 */
const AUDIENCE_HELP = "subscribers: every customer who consented; buyers: those of them with a paid order; non_buyers: those without one";

type CampaignRow = RowOfStatement<typeof campaignById>;

const campaignNotFound = () => new AppError("NOT_FOUND", "Campaign not found in this store.");

/** One campaign with its counts. */
function campaignPlan(q: Q, store: SQL, id: string) {
  return plan([campaignById(q, store, id)] as const, ([[row]]): CampaignRow => {
    if (!row) throw campaignNotFound();
    return row;
  });
}

type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

/**
 * The campaign exists (NOT_FOUND) and is locked for the rest of the change, and its status is one of
 * `allowed`, else `refusal` of the status it has: one guard per status, so the error can name it.
 */
function campaignIn(q: Q, store: SQL, id: string, allowed: readonly CampaignStatus[], refusal: (status: CampaignStatus) => AppError) {
  const where = sql`store_id = ${store} and id = ${id}`;
  return [
    ensure(q, sql`exists (select 1 from campaign where ${where} for update)`, campaignNotFound()),
    ...CAMPAIGN_STATUSES.filter((s) => !allowed.includes(s)).map((s) =>
      ensure(q, sql`not exists (select 1 from campaign where ${where} and status = ${s})`, refusal(s)),
    ),
  ];
}

const campaignFields = {
  name: z.string().trim().min(1, "is required").max(120).describe("For the merchant's list; customers do not see it"),
  subject: templateText(200).describe("The email's subject; placeholders {{first_name}} {{store_name}} {{store_url}}"),
  body: templateText(20_000).describe("Plain text, paragraphs split by a blank line; an unsubscribe footer is always added"),
  audience: z.enum(CAMPAIGN_AUDIENCES).describe(AUDIENCE_HELP),
  startsAt: instant.describe("ISO 8601 date-time with offset; in the past or omitted means at the next tick (within 30 s)"),
};

/** A campaign as its procedures answer it, with its messages counted by status. */
const campaignOutput = z.object({
  id: out.id,
  name: z.string(),
  subject: z.string(),
  body: z.string(),
  audience: z.enum(CAMPAIGN_AUDIENCES),
  status: z.enum(CAMPAIGN_STATUSES),
  startsAt: out.instant,
  startedAt: out.instant.nullable(),
  finishedAt: out.instant.nullable(),
  recipients: z.number().int(),
  createdAt: out.instant,
  sent: z.number().int(),
  skipped: z.number().int(),
  failed: z.number().int(),
  queued: z.number().int(),
});
/** An automation as its procedures answer it (`updatedAt` null while it keeps its defaults). */
const automationOutput = z.object({
  kind: z.enum(AUTOMATION_KINDS),
  about: z.string(),
  enabled: z.boolean(),
  delayMinutes: z.number().int(),
  subject: z.string(),
  body: z.string(),
  enrolled: z.number().int(),
  sent: z.number().int(),
  updatedAt: out.instant.nullable(),
});

export const listCampaigns = storeProcedure({
  router: "campaigns",
  name: "list",
  description: "The store's email campaigns, newest first, with their state and how many messages were sent, skipped (no consent by then) or failed.",
  access: "customers.read",
  mutates: false,
  output: out.paged(campaignOutput),
  input: z.strictObject({ ...pagingInput, status: z.enum(CAMPAIGN_STATUSES).optional() }),
  read(q, { store }, input) {
    const status = input.status ?? null;
    return pagePlan(campaignsPage(q, store, status, { limit: input.pageSize, offset: offsetOf(input) }), countCampaigns(q, store, status), input);
  },
});

export const getCampaign = storeProcedure({
  router: "campaigns",
  name: "get",
  description: "One campaign with its counts.",
  access: "customers.read",
  mutates: false,
  output: campaignOutput,
  input: z.strictObject({ id: z.uuid() }),
  read: (q, { store }, input) => campaignPlan(q, store, input.id),
});

export const createCampaign = storeProcedure({
  router: "campaigns",
  name: "create",
  description: `Schedule an email campaign to an audience of customers who consented to marketing (${AUDIENCE_HELP}). It starts at startsAt (default now, within 30 s); customers without consent are never sent anything.`,
  access: "marketing.send",
  mutates: true,
  output: campaignOutput,
  input: z.strictObject({ ...campaignFields, startsAt: campaignFields.startsAt.optional() }),
  write: {
    apply(q, { store }, input) {
      const id = crypto.randomUUID();
      return thenPlan(
        [
          insertCampaign(q, store, id, { name: input.name, subject: input.subject, body: input.body, audience: input.audience, startsAt: input.startsAt?.toISOString() ?? null }),
          emitStep(q, "campaign.created", { campaignId: id }),
        ],
        campaignPlan(q, store, id),
      );
    },
  },
});

const notScheduled = (status: CampaignStatus) =>
  new AppError("CONFLICT", `This campaign is ${status}; only a scheduled campaign can change.`, { reason: "campaign_not_scheduled", status });

export const updateCampaign = storeProcedure({
  router: "campaigns",
  name: "update",
  description: "Change a scheduled campaign (name, subject, body, audience, startsAt). A campaign that started cannot change; cancel it instead.",
  access: "marketing.send",
  mutates: true,
  output: campaignOutput,
  input: z.strictObject({
    id: z.uuid(),
    name: campaignFields.name.optional(),
    subject: campaignFields.subject.optional(),
    body: campaignFields.body.optional(),
    audience: campaignFields.audience.optional(),
    startsAt: campaignFields.startsAt.optional(),
  }),
  write: {
    apply(q, { store }, input) {
      return thenPlan(
        [
          ...campaignIn(q, store, input.id, ["scheduled"], notScheduled),
          changeCampaign(q, store, input.id, {
            name: input.name ?? null,
            subject: input.subject ?? null,
            body: input.body ?? null,
            audience: input.audience ?? null,
            startsAt: input.startsAt?.toISOString() ?? null,
          }),
          emitStep(q, "campaign.updated", { campaignId: input.id }),
        ],
        campaignPlan(q, store, input.id),
      );
    },
  },
});

export const cancelCampaign = storeProcedure({
  router: "campaigns",
  name: "cancel",
  description: "Stop a campaign: a scheduled one never starts; a sending one sends nothing more (messages already sent stay sent). A sent or cancelled campaign stays as it is (409).",
  access: "marketing.send",
  mutates: true,
  output: campaignOutput,
  input: z.strictObject({ id: z.uuid() }),
  write: {
    apply(q, { store }, input) {
      const finished = (status: CampaignStatus) =>
        new AppError("CONFLICT", `This campaign is ${status} already.`, { reason: "campaign_finished", status });
      return thenPlan(
        [
          ...campaignIn(q, store, input.id, ["scheduled", "sending"], finished),
          q
            .update(campaign)
            .set({ status: "cancelled", finishedAt: sql`now()`, updatedAt: sql`now()` })
            .where(and(eq(campaign.storeId, store), eq(campaign.id, input.id))),
          q
            .update(marketingMessage)
            .set({ status: "skipped", reason: "campaign cancelled" })
            .where(and(eq(marketingMessage.storeId, store), eq(marketingMessage.campaignId, input.id), eq(marketingMessage.status, "queued"))),
          emitStep(q, "campaign.cancelled", { campaignId: input.id }),
        ],
        campaignPlan(q, store, input.id),
      );
    },
  },
});

interface AutomationView {
  kind: AutomationKind;
  about: string;
  enabled: boolean;
  delayMinutes: number;
  subject: string;
  body: string;
  enrolled: number;
  sent: number;
  updatedAt: Date | null;
}

/** Every automation kind, with its defaults until the store saved it. */
function automationsPlan(q: Q, store: SQL) {
  return plan([automations(q, store)] as const, ([rows]): AutomationView[] =>
    AUTOMATION_KINDS.map((kind) => {
      const row = rows.find((r) => r.kind === kind);
      const d = AUTOMATION_DEFAULTS[kind];
      return row
        ? { kind, about: d.about, enabled: row.enabled, delayMinutes: row.delay_minutes, subject: row.subject, body: row.body, enrolled: row.enrolled, sent: row.sent, updatedAt: row.updated_at }
        : { kind, about: d.about, enabled: false, delayMinutes: d.delayMinutes, subject: d.subject, body: d.body, enrolled: 0, sent: 0, updatedAt: null };
    }),
  );
}

export const listAutomations = storeProcedure({
  router: "automations",
  name: "list",
  description:
    "The store's email automations (abandoned_checkout, first_order_thanks): whether each is on, its delay, its words, how many orders it enrolled and messages it sent. Off until turned on.",
  access: "customers.read",
  mutates: false,
  output: z.array(automationOutput),
  input: z.strictObject({}),
  read: (q, { store }) => automationsPlan(q, store),
});

export const updateAutomation = storeProcedure({
  router: "automations",
  name: "update",
  description:
    "Turn an automation on or off, or change its delay (minutes after the order, 0-43200) and words. Orders placed while it is on are enrolled; a customer without marketing consent is never sent it.",
  access: "content.write",
  mutates: true,
  output: automationOutput,
  input: z.strictObject({
    kind: z.enum(AUTOMATION_KINDS),
    enabled: z.boolean().optional(),
    delayMinutes: z.number().int().min(0).max(43_200).optional(),
    subject: templateText(200).optional(),
    body: templateText(20_000).optional(),
  }),
  write: {
    apply(q, { store }, input) {
      const d = AUTOMATION_DEFAULTS[input.kind];
      return thenPlan(
        [
          saveAutomation(q, store, {
            kind: input.kind,
            enabled: input.enabled ?? null,
            delayMinutes: input.delayMinutes ?? null,
            subject: input.subject ?? null,
            body: input.body ?? null,
            defaults: { delayMinutes: d.delayMinutes, subject: d.subject, body: d.body },
          }),
          emitStep(q, "automation.updated", { kind: input.kind }),
        ],
        mapPlan(automationsPlan(q, store), (all) => all.find((a) => a.kind === input.kind)!),
      );
    },
  },
});

export const marketingProcedures = [listCampaigns, getCampaign, createCampaign, updateCampaign, cancelCampaign, listAutomations, updateAutomation];
