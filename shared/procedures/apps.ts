import { and, desc, eq, sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import { appEventsSchema } from "../apps/events";
import { newAppSecret, type SecretRecord } from "../apps/secrets";
import { appUrlProblem } from "../apps/url";
import { emitStep, ensure, unchanged } from "../db/changes";
import { constant, mapPlan, plan, together } from "../db/plan";
import { APP_DELIVERY_STATUSES, appDelivery, storeApp } from "../db/schema";
import type { Q, Step } from "../db/steps";
import { AppError, badRequest } from "../core/errors";
import { storeProcedure, type Services } from "./define";
import { countColumn, offsetOf, pagePlan, pagingInput } from "./paging";
import * as out from "./outputs";

/**
 * Apps (issue 12; docs/apps.md): endpoints that receive the store's public events as signed webhooks.
 * A signing secret is answered once, by create and rotateSecret; only what derives and checks it is
 * stored (docs/decisions/0011-app-webhook-secrets.md). Deliveries are made by the {apps}-* queues.
 */

/** How long the previous secret keeps signing after a rotation, so receivers can switch without a gap. */
export const PREVIOUS_SECRET_HOURS = 24;

const nameSchema = z.string().trim().min(1, "Give the app a name").max(100);
const urlSchema = z.string().trim().min(1, "Enter the URL that receives the webhooks").max(2048);

const columns = {
  id: storeApp.id,
  name: storeApp.name,
  url: storeApp.url,
  events: storeApp.events,
  active: storeApp.active,
  secretHint: storeApp.secretHint,
  secretVersion: storeApp.secretVersion,
  previousSecretExpiresAt: storeApp.previousSecretExpiresAt,
  // Spelled out: drizzle leaves the table off columns in a one-table select, which a subquery would misread.
  pendingDeliveries: sql<number>`(select count(*)::int from app_delivery d where d.store_id = store_app.store_id and d.app_id = store_app.id and d.status = 'pending')`,
  failedDeliveries: sql<number>`(select count(*)::int from app_delivery d where d.store_id = store_app.store_id and d.app_id = store_app.id and d.status = 'failed')`,
  createdAt: storeApp.createdAt,
  updatedAt: storeApp.updatedAt,
};

export const deliveryColumns = {
  id: appDelivery.id,
  eventId: appDelivery.eventId,
  eventKind: appDelivery.eventKind,
  status: appDelivery.status,
  round: appDelivery.round,
  attempts: appDelivery.attempts,
  lastStatus: appDelivery.lastStatus,
  lastError: appDelivery.lastError,
  lastAttemptAt: appDelivery.lastAttemptAt,
  nextAttemptAt: appDelivery.nextAttemptAt,
  deliveredAt: appDelivery.deliveredAt,
  createdAt: appDelivery.createdAt,
};

export const appNotFound = () => new AppError("NOT_FOUND", "App not found in this store.");

function appPlan(q: Q, store: SQL, id: string) {
  return plan([q.select(columns).from(storeApp).where(and(eq(storeApp.storeId, store), eq(storeApp.id, id)))] as const, ([[row]]) => {
    if (!row) throw appNotFound();
    return row;
  });
}

/** The app as the change left it, read by the change's own unit after its statements. */
function thenApp(q: Q, store: SQL, id: string, change: readonly Step[]) {
  const loaded = appPlan(q, store, id);
  return plan([...change, ...loaded.steps], (results) => loaded.finish(results.slice(change.length)));
}

/** The app exists in the store; it is locked for the rest of the change. */
const appFound = (q: Q, where: SQL | undefined) => ensure(q, sql`exists (select 1 from ${storeApp} where ${where} for update)`, appNotFound());

function webhookConfig(services: Services) {
  const config = services.appWebhooks?.();
  if (!config) throw new Error("App webhooks are not configured at this door (APP_WEBHOOK_ROOT_SECRET).");
  return config;
}

/** A URL the door's policy refuses, refused by the change's unit (so after the caller's own checks). */
const urlRefused = (q: Q, problem: string | undefined) => (problem ? [ensure(q, sql`false`, badRequest([{ path: "url", message: problem }]))] : []);

type NewSecret = Awaited<ReturnType<typeof newAppSecret>>;

/** An app (a webhook subscriber) as its procedures answer it: never its secret, only a hint of it. */
const appOutput = z.object({
  id: out.id,
  name: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  active: z.boolean(),
  secretHint: z.string(),
  secretVersion: z.number().int(),
  previousSecretExpiresAt: out.instant.nullable(),
  pendingDeliveries: z.number().int(),
  failedDeliveries: z.number().int(),
  createdAt: out.instant,
  updatedAt: out.instant,
});
/** apps.create and apps.rotateSecret: the secret is shown once, here. */
const appWithSecret = z.object({ app: appOutput, secret: z.string() });
/** One event's delivery to an app. */
export const deliveryOutput = z.object({
  id: out.id,
  eventId: out.id,
  eventKind: z.string(),
  status: z.enum(APP_DELIVERY_STATUSES),
  round: z.number().int(),
  attempts: z.number().int(),
  lastStatus: z.number().int().nullable(),
  lastError: z.string().nullable(),
  lastAttemptAt: out.instant.nullable(),
  nextAttemptAt: out.instant.nullable(),
  deliveredAt: out.instant.nullable(),
  createdAt: out.instant,
});

export const listApps = storeProcedure({
  router: "apps",
  name: "list",
  description:
    "The store's apps: endpoints that receive the store's events as signed webhooks, by name, with their URL, subscribed events, whether active, the secret's last 4 characters and how many deliveries are pending or failed.",
  access: "settings.read",
  mutates: false,
  output: out.paged(appOutput),
  input: z.strictObject({ ...pagingInput }),
  read(q, { store }, input) {
    const where = eq(storeApp.storeId, store);
    return pagePlan(
      q.select(columns).from(storeApp).where(where).orderBy(storeApp.name).limit(input.pageSize).offset(offsetOf(input)),
      q.select(countColumn()).from(storeApp).where(where),
      input,
    );
  },
});

export const getApp = storeProcedure({
  router: "apps",
  name: "get",
  description:
    "One app by id with its delivery log, newest first, paged: each delivery's event, status (pending, delivered, failed), tries, the last HTTP status or error and when the next try is due. Filter the log by status.",
  access: "settings.read",
  mutates: false,
  output: z.object({ app: appOutput, deliveries: out.paged(deliveryOutput) }),
  input: z.strictObject({ id: z.uuid(), status: z.enum(APP_DELIVERY_STATUSES).optional(), ...pagingInput }),
  read(q, { store }, input) {
    const where = and(
      eq(appDelivery.storeId, store),
      eq(appDelivery.appId, input.id),
      input.status ? eq(appDelivery.status, input.status) : undefined,
    );
    // The app's plan comes first, so a missing app answers NOT_FOUND (its log is then empty anyway).
    return together({
      app: appPlan(q, store, input.id),
      deliveries: pagePlan(
        q
          .select(deliveryColumns)
          .from(appDelivery)
          .where(where)
          .orderBy(desc(appDelivery.createdAt), desc(appDelivery.id))
          .limit(input.pageSize)
          .offset(offsetOf(input)),
        q.select(countColumn()).from(appDelivery).where(where),
        input,
      ),
    });
  },
});

export const createApp = storeProcedure({
  router: "apps",
  name: "create",
  description:
    "Register an app: a public https URL (port 443) that receives the store's events as signed POSTs, and the events it wants (kinds such as order.paid, groups such as order.*, or *). Answers the app and its signing secret once: store the secret, it cannot be shown again.",
  access: "settings.write",
  mutates: true,
  output: appWithSecret,
  input: z.strictObject({
    name: nameSchema.describe("What the app is, e.g. Accounting sync"),
    url: urlSchema.describe("The https URL that receives the webhooks"),
    events: appEventsSchema.describe("Event kinds (order.paid), groups (order.*) or * for every public event"),
  }),
  write: {
    // The id and the first secret are made before the unit (the secret derives from the id), which stores
    // only what derives and checks it. Nothing is read first: one trip.
    prepare(_q, _scope, input, services) {
      const config = webhookConfig(services);
      const id = crypto.randomUUID();
      const problem = appUrlProblem(input.url, config.allowLocalUrls);
      return constant(newAppSecret(config.rootSecret, id, 1).then((made) => ({ ...made, id, problem })));
    },
    apply(q, { store }, input, { id, problem, secret, record, hint }: NewSecret & { id: string; problem: string | undefined }) {
      const change = [
        ...urlRefused(q, problem),
        q.insert(storeApp).values({
          id,
          storeId: store,
          name: input.name,
          url: input.url,
          events: input.events,
          secretVersion: record.version,
          secretSalt: record.salt,
          secretHash: record.hash,
          secretHint: hint,
        }),
        emitStep(q, "app.created", { appId: id, events: input.events }),
      ];
      return mapPlan(thenApp(q, store, id, change), (app) => ({ app, secret }));
    },
  },
});

export const updateApp = storeProcedure({
  router: "apps",
  name: "update",
  description: "Change an app's name, URL, events (replaced as a whole) or active switch. A disabled app gets no new deliveries, and its pending ones fail at their next try.",
  access: "settings.write",
  mutates: true,
  output: appOutput,
  input: z.strictObject({
    id: z.uuid(),
    name: nameSchema.optional(),
    url: urlSchema.optional(),
    events: appEventsSchema.optional(),
    active: z.boolean().optional(),
  }),
  write: {
    // The URL policy is the door's: looked at before the unit, refused by it (after a missing app's 404).
    prepare: (_q, _scope, input, services) => constant(input.url === undefined ? undefined : appUrlProblem(input.url, webhookConfig(services).allowLocalUrls)),
    apply(q, { store }, input, problem: string | undefined) {
      const { id, ...fields } = input;
      const where = and(eq(storeApp.storeId, store), eq(storeApp.id, id));
      const changed = Object.keys(fields);
      return thenApp(q, store, id, [
        appFound(q, where),
        ...urlRefused(q, problem),
        ...(changed.length > 0
          ? [q.update(storeApp).set({ ...fields, updatedAt: sql`now()` }).where(where), emitStep(q, "app.updated", { appId: id, fields: changed })]
          : []),
      ]);
    },
  },
});

export const deleteApp = storeProcedure({
  router: "apps",
  name: "delete",
  description: "Delete an app and its delivery log: it receives nothing more, and deliveries waiting for a retry are dropped.",
  access: "settings.write",
  mutates: true,
  output: out.deleted,
  input: z.strictObject({ id: z.uuid() }),
  write: {
    apply(q, { store }, input) {
      const app = and(eq(storeApp.storeId, store), eq(storeApp.id, input.id));
      return plan(
        [
          appFound(q, app),
          emitStep(q, "app.deleted", sql`(select jsonb_build_object('appId', ${storeApp.id}) from ${storeApp} where ${app})`),
          q.delete(storeApp).where(app).returning({ id: storeApp.id }),
        ] as const,
        ([, , [deleted]]) => ({ id: deleted!.id, deleted: true }),
      );
    },
  },
});

export const rotateAppSecret = storeProcedure({
  router: "apps",
  name: "rotateSecret",
  description: `Give an app a new signing secret, answered once. The previous secret also signs for ${PREVIOUS_SECRET_HOURS} hours (each delivery then carries both signatures) unless keepPrevious is false, which stops it at once.`,
  access: "settings.write",
  mutates: true,
  output: appWithSecret,
  input: z.strictObject({ id: z.uuid(), keepPrevious: z.boolean().default(true) }),
  write: {
    // The new secret derives from the next version: the current one is read first (the previous secret
    // keeps it), the secret made, and the change checks that the version is still the one read.
    prepare: (q, { store }, input, services) =>
      plan(
        [
          q
            .select({ version: storeApp.secretVersion, salt: storeApp.secretSalt, hash: storeApp.secretHash })
            .from(storeApp)
            .where(and(eq(storeApp.storeId, store), eq(storeApp.id, input.id))),
        ] as const,
        ([[current]]) => {
          if (!current) throw appNotFound();
          return newAppSecret(webhookConfig(services).rootSecret, input.id, current.version + 1).then((made) => ({ ...made, current }));
        },
      ),
    apply(q, { store }, input, { current, secret, record, hint }: NewSecret & { current: SecretRecord }) {
      const where = and(eq(storeApp.storeId, store), eq(storeApp.id, input.id));
      const keep = input.keepPrevious;
      const change = [
        unchanged(q, sql`exists (select 1 from ${storeApp} where ${where} and ${storeApp.secretVersion} = ${current.version} for update)`),
        q
          .update(storeApp)
          .set({
            secretVersion: record.version,
            secretSalt: record.salt,
            secretHash: record.hash,
            secretHint: hint,
            previousSecretVersion: keep ? current.version : null,
            previousSecretSalt: keep ? current.salt : null,
            previousSecretHash: keep ? current.hash : null,
            previousSecretExpiresAt: keep ? sql`now() + make_interval(hours => ${PREVIOUS_SECRET_HOURS})` : null,
            updatedAt: sql`now()`,
          })
          .where(where),
        emitStep(q, "app.secret_rotated", { appId: input.id, version: record.version, keptPrevious: keep }),
      ];
      return mapPlan(thenApp(q, store, input.id, change), (app) => ({ app, secret }));
    },
  },
});

export const appProcedures = [listApps, getApp, createApp, updateApp, deleteApp, rotateAppSecret];
