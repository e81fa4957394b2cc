/**
 * The {apps}-jobs consumer: one message is one try of one delivery, in two round trips. The try is claimed
 * in one unit that also reads the app (so a duplicate message finds it taken and sends nothing), the POST
 * is made outside any transaction, and the outcome is recorded in a second unit that re-checks the claim. A failure queues the next try with its
 * delay (./backoff.ts); after the last one the delivery is failed and stays in the app's log.
 */
import { and, eq, isNull, lt, or, sql, type Column, type SQL } from "drizzle-orm";
import { CURRENT_STORE } from "../db/openings";
import { plan, type Plan } from "../db/plan";
import { appDelivery, storeApp } from "../db/schema";
import type { Q } from "../db/steps";
import { sendStoreUnit } from "../db/unit";
import { MAX_ATTEMPTS, retryDelaySeconds } from "./backoff";
import { appDeliveryJobSchema, type AppConsumerDeps, type AppDeliveryJob } from "./jobs";
import { secretOf } from "./secrets";
import { postWebhook, type SendOutcome, type WebhookPost } from "./send";
import { appUrlProblem } from "./url";

/** A claim older than this is abandoned (the Worker died mid-try): the message's retry may take it over. */
export const CLAIM_TIMEOUT_MS = 60_000;

type Claim =
  | { kind: "send"; post: WebhookPost; appId: string }
  | { kind: "refused"; error: string; appId: string }
  | { kind: "done" }
  | { kind: "requeue"; nextAttemptAt: Date | null };

/** Try `attempt` may be claimed: the try before it was recorded, or this try's claim was abandoned. Also UCP's order updates (shared/ucp/order-webhooks.ts). */
export function claimableTry(c: { attempts: Column; claimedAt: Column }, attempt: number, now: Date): SQL | undefined {
  const staleBefore = new Date(now.getTime() - CLAIM_TIMEOUT_MS);
  return or(and(eq(c.attempts, attempt - 1), isNull(c.claimedAt)), and(eq(c.attempts, attempt), lt(c.claimedAt, staleBefore)));
}

/** What a try's outcome writes on its delivery, and the next try's delay (null: no more tries). */
export function triedFields(outcome: SendOutcome, attempt: number, final: boolean, now: Date, random?: () => number) {
  const delay = outcome.ok || final ? null : retryDelaySeconds(attempt, random);
  const status = outcome.ok ? ("delivered" as const) : delay === null ? ("failed" as const) : ("pending" as const);
  const set = {
    status,
    claimedAt: null,
    lastStatus: outcome.status,
    lastError: outcome.ok ? null : outcome.error.slice(0, 500),
    deliveredAt: outcome.ok ? now : null,
    nextAttemptAt: delay === null ? null : new Date(now.getTime() + delay * 1000),
    updatedAt: sql`now()`,
  };
  return { delay, status, set };
}

/** Claims the try, then reads the delivery's app and, for a try it could not claim, the delivery as it is. */
function claimPlan(q: Q, job: AppDeliveryJob, now: Date) {
  const delivery = and(eq(appDelivery.storeId, CURRENT_STORE), eq(appDelivery.id, job.deliveryId));
  return plan(
    [
      q
        .update(appDelivery)
        .set({ attempts: job.attempt, claimedAt: now, lastAttemptAt: now, updatedAt: now })
        .where(
          and(
            delivery,
            eq(appDelivery.status, "pending"),
            eq(appDelivery.round, job.round),
            claimableTry(appDelivery, job.attempt, now),
          ),
        )
        .returning(),
      q
        .select()
        .from(storeApp)
        .where(and(eq(storeApp.storeId, CURRENT_STORE), eq(storeApp.id, sql`(select ${appDelivery.appId} from ${appDelivery} where ${delivery})`))),
      q
        .select({ status: appDelivery.status, round: appDelivery.round, attempts: appDelivery.attempts, claimedAt: appDelivery.claimedAt, nextAttemptAt: appDelivery.nextAttemptAt })
        .from(appDelivery)
        .where(delivery),
    ] as const,
    ([[row], [app], [state]]) => ({ row, app, state }),
  );
}

async function claim(job: AppDeliveryJob, now: Date, deps: AppConsumerDeps): Promise<Claim> {
  const { row, app, state } = await sendStoreUnit(deps.db, job.storeId, (q) => claimPlan(q, job, now), { readOnly: false });
  if (!row) {
    // Not claimable: done already, or this try was made and its follow-up may not have been queued.
    const tried = state?.status === "pending" && state.round === job.round && state.attempts === job.attempt && state.claimedAt === null;
    return tried ? { kind: "requeue", nextAttemptAt: state.nextAttemptAt } : { kind: "done" };
  }
  if (!app?.active) return { kind: "refused", error: "The app was disabled before this try.", appId: row.appId };
  const urlProblem = appUrlProblem(app.url, deps.config.allowLocalUrls);
  if (urlProblem) return { kind: "refused", error: `URL refused: ${urlProblem}`, appId: app.id };
  const root = deps.config.rootSecret;
  const current = await secretOf(root, app.id, { version: app.secretVersion, salt: app.secretSalt, hash: app.secretHash });
  if (!current) return { kind: "refused", error: "The signing secret cannot be derived any more (APP_WEBHOOK_ROOT_SECRET changed): rotate the app's secret.", appId: app.id };
  const previous =
    app.previousSecretVersion && app.previousSecretSalt && app.previousSecretHash && app.previousSecretExpiresAt && app.previousSecretExpiresAt > now
      ? await secretOf(root, app.id, { version: app.previousSecretVersion, salt: app.previousSecretSalt, hash: app.previousSecretHash })
      : null;
  return {
    kind: "send",
    appId: app.id,
    post: {
      url: app.url,
      deliveryId: row.id,
      event: { eventId: row.eventId, kind: row.eventKind, createdAt: row.eventCreatedAt, storeId: row.storeId, payload: row.payload },
      secrets: previous ? [current, previous] : [current],
      now,
    },
  };
}

/** Records the try's outcome if the claim still holds; answers the next try's delay when there is one. */
function recordPlan(q: Q, job: AppDeliveryJob, claimedAt: Date, outcome: SendOutcome, now: Date, deps: AppConsumerDeps, final: boolean): Plan<{ recorded: boolean; status: string; delay: number | null }> {
  const { delay, status, set } = triedFields(outcome, job.attempt, final, now, deps.random);
  return plan(
    [
      q
        .update(appDelivery)
        .set(set)
        .where(
          and(
            eq(appDelivery.storeId, CURRENT_STORE),
            eq(appDelivery.id, job.deliveryId),
            eq(appDelivery.round, job.round),
            eq(appDelivery.attempts, job.attempt),
            eq(appDelivery.claimedAt, claimedAt),
          ),
        )
        .returning({ id: appDelivery.id }),
    ] as const,
    ([[row]]) => ({ recorded: row !== undefined, status, delay }),
  );
}

function nextJob(job: AppDeliveryJob): AppDeliveryJob | null {
  return job.attempt < MAX_ATTEMPTS ? { ...job, attempt: job.attempt + 1 } : null;
}

/** Handles one message; throws (so the queue retries it) only when the database or the queue fails. */
export async function consumeAppJob(body: unknown, deps: AppConsumerDeps): Promise<{ outcome: string }> {
  const job = appDeliveryJobSchema.parse(body);
  const { now } = deps;
  const log = deps.log.child({ storeId: job.storeId, deliveryId: job.deliveryId, round: job.round, attempt: job.attempt });
  const claimed = await claim(job, now, deps);
  if (claimed.kind === "done") return { outcome: "skipped" };
  if (claimed.kind === "requeue") {
    const next = nextJob(job);
    const waitMs = (claimed.nextAttemptAt?.getTime() ?? now.getTime()) - now.getTime();
    if (next) await deps.jobs.send(next, { delaySeconds: Math.max(0, Math.ceil(waitMs / 1000)) });
    return { outcome: "requeued" };
  }
  const started = Date.now();
  const outcome: SendOutcome =
    claimed.kind === "send" ? await postWebhook(deps.fetch, claimed.post, deps.timeoutMs) : { ok: false, status: null, error: claimed.error };
  const result = await sendStoreUnit(deps.db, job.storeId, (q) => recordPlan(q, job, now, outcome, now, deps, claimed.kind === "refused"), { readOnly: false });
  const fields = { appId: claimed.appId, status: outcome.status, ms: Date.now() - started, next: result.status };
  if (outcome.ok) log.info("apps.delivered", fields);
  else log.warn("apps.delivery_failed", { ...fields, error: outcome.error, retryInSeconds: result.delay });
  const next = nextJob(job);
  if (result.recorded && result.delay !== null && next) await deps.jobs.send(next, { delaySeconds: result.delay });
  return { outcome: result.status };
}
