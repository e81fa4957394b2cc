import { and, desc, eq, sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import { appEventsSchema } from "../apps/events";
import { newAppSecret } from "../apps/secrets";
import { appUrlProblem } from "../apps/url";
import { emit } from "../db/outbox";
import { plan, together } from "../db/plan";
import { APP_DELIVERY_STATUSES, appDelivery, storeApp } from "../db/schema";
import type { Q, StatementClient } from "../db/steps";
import { runPlanOn } from "../db/unit";
import type { StoreTx } from "../db/with-store";
import { AppError, badRequest } from "../http/errors";
import { storeProcedure, type StoreContext } from "./define";
import { countColumn, offsetOf, pagePlan, pagingInput } from "./paging";

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

/** The app as it now is, inside a transaction that is open already (a change answers it). */
function loadApp(tx: StoreTx, id: string) {
  return runPlanOn(tx.$client as unknown as StatementClient, (q) => appPlan(q, sql`${tx.storeId}::uuid`, id));
}

function webhookConfig(ctx: StoreContext) {
  const config = ctx.services?.appWebhooks?.();
  if (!config) throw new Error("App webhooks are not configured at this door (APP_WEBHOOK_ROOT_SECRET).");
  return config;
}

function checkUrl(ctx: StoreContext, url: string): void {
  const problem = appUrlProblem(url, webhookConfig(ctx).allowLocalUrls);
  if (problem) throw badRequest([{ path: "url", message: problem }]);
}

export const listApps = storeProcedure({
  router: "apps",
  name: "list",
  description:
    "The store's apps: endpoints that receive the store's events as signed webhooks, by name, with their URL, subscribed events, whether active, the secret's last 4 characters and how many deliveries are pending or failed.",
  access: "settings.read",
  mutates: false,
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
  input: z.strictObject({
    name: nameSchema.describe("What the app is, e.g. Accounting sync"),
    url: urlSchema.describe("The https URL that receives the webhooks"),
    events: appEventsSchema.describe("Event kinds (order.paid), groups (order.*) or * for every public event"),
  }),
  async run(ctx, input) {
    checkUrl(ctx, input.url);
    const { tx } = ctx;
    const id = crypto.randomUUID();
    const { secret, record, hint } = await newAppSecret(webhookConfig(ctx).rootSecret, id, 1);
    await tx.insert(storeApp).values({
      id,
      storeId: tx.storeId,
      name: input.name,
      url: input.url,
      events: input.events,
      secretVersion: record.version,
      secretSalt: record.salt,
      secretHash: record.hash,
      secretHint: hint,
    });
    await emit(tx, "app.created", { appId: id, events: input.events });
    return { app: await loadApp(tx, id), secret };
  },
});

export const updateApp = storeProcedure({
  router: "apps",
  name: "update",
  description: "Change an app's name, URL, events (replaced as a whole) or active switch. A disabled app gets no new deliveries, and its pending ones fail at their next try.",
  access: "settings.write",
  mutates: true,
  input: z.strictObject({
    id: z.uuid(),
    name: nameSchema.optional(),
    url: urlSchema.optional(),
    events: appEventsSchema.optional(),
    active: z.boolean().optional(),
  }),
  async run(ctx, input) {
    const { tx } = ctx;
    const { id, ...fields } = input;
    await loadApp(tx, id);
    if (fields.url !== undefined) checkUrl(ctx, fields.url);
    const changed = Object.keys(fields);
    if (changed.length > 0) {
      await tx.update(storeApp).set({ ...fields, updatedAt: sql`now()` }).where(and(eq(storeApp.storeId, tx.storeId), eq(storeApp.id, id)));
      await emit(tx, "app.updated", { appId: id, fields: changed });
    }
    return loadApp(tx, id);
  },
});

export const deleteApp = storeProcedure({
  router: "apps",
  name: "delete",
  description: "Delete an app and its delivery log: it receives nothing more, and deliveries waiting for a retry are dropped.",
  access: "settings.write",
  mutates: true,
  input: z.strictObject({ id: z.uuid() }),
  async run({ tx }, input) {
    const [deleted] = await tx
      .delete(storeApp)
      .where(and(eq(storeApp.storeId, tx.storeId), eq(storeApp.id, input.id)))
      .returning({ id: storeApp.id });
    if (!deleted) throw appNotFound();
    await emit(tx, "app.deleted", { appId: deleted.id });
    return { id: deleted.id, deleted: true };
  },
});

export const rotateAppSecret = storeProcedure({
  router: "apps",
  name: "rotateSecret",
  description: `Give an app a new signing secret, answered once. The previous secret also signs for ${PREVIOUS_SECRET_HOURS} hours (each delivery then carries both signatures) unless keepPrevious is false, which stops it at once.`,
  access: "settings.write",
  mutates: true,
  input: z.strictObject({ id: z.uuid(), keepPrevious: z.boolean().default(true) }),
  async run(ctx, input) {
    const { tx } = ctx;
    const [current] = await tx
      .select({ version: storeApp.secretVersion, salt: storeApp.secretSalt, hash: storeApp.secretHash })
      .from(storeApp)
      .where(and(eq(storeApp.storeId, tx.storeId), eq(storeApp.id, input.id)))
      .for("update");
    if (!current) throw appNotFound();
    const { secret, record, hint } = await newAppSecret(webhookConfig(ctx).rootSecret, input.id, current.version + 1);
    const keep = input.keepPrevious;
    await tx
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
      .where(and(eq(storeApp.storeId, tx.storeId), eq(storeApp.id, input.id)));
    await emit(tx, "app.secret_rotated", { appId: input.id, version: record.version, keptPrevious: keep });
    return { app: await loadApp(tx, input.id), secret };
  },
});

export const appProcedures = [listApps, getApp, createApp, updateApp, deleteApp, rotateAppSecret];
