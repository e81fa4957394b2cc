/**
 * The {apps}-jobs consumer: one message is one try of one delivery. The try is claimed in one unit (so a
 * duplicate message finds it taken and sends nothing), the POST is made outside any transaction, and the
 * outcome is recorded in a second unit that re-checks the claim. A failure queues the next try with its
 * delay (./backoff.ts); after the last one the delivery is failed and stays in the app's log.
 */
import { and, eq, isNull, lt, or, sql } from "drizzle-orm";
import { appDelivery, storeApp } from "../db/schema";
import { withStore, type StoreTx } from "../db/with-store";
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

async function claim(tx: StoreTx, job: AppDeliveryJob, now: Date, deps: AppConsumerDeps): Promise<Claim> {
  const staleBefore = new Date(now.getTime() - CLAIM_TIMEOUT_MS);
  const [row] = await tx
    .update(appDelivery)
    .set({ attempts: job.attempt, claimedAt: now, lastAttemptAt: now, updatedAt: now })
    .where(
      and(
        eq(appDelivery.storeId, tx.storeId),
        eq(appDelivery.id, job.deliveryId),
        eq(appDelivery.status, "pending"),
        eq(appDelivery.round, job.round),
        or(
          and(eq(appDelivery.attempts, job.attempt - 1), isNull(appDelivery.claimedAt)),
          and(eq(appDelivery.attempts, job.attempt), lt(appDelivery.claimedAt, staleBefore)),
        ),
      ),
    )
    .returning();
  if (!row) return unclaimed(tx, job);
  const [app] = await tx.select().from(storeApp).where(and(eq(storeApp.storeId, tx.storeId), eq(storeApp.id, row.appId)));
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

/** Not claimable: done already, or this try was made and its follow-up may not have been queued. */
async function unclaimed(tx: StoreTx, job: AppDeliveryJob): Promise<Claim> {
  const [row] = await tx
    .select({ status: appDelivery.status, round: appDelivery.round, attempts: appDelivery.attempts, claimedAt: appDelivery.claimedAt, nextAttemptAt: appDelivery.nextAttemptAt })
    .from(appDelivery)
    .where(and(eq(appDelivery.storeId, tx.storeId), eq(appDelivery.id, job.deliveryId)));
  const tried = row?.status === "pending" && row.round === job.round && row.attempts === job.attempt && row.claimedAt === null;
  return tried ? { kind: "requeue", nextAttemptAt: row.nextAttemptAt } : { kind: "done" };
}

/** Records the try's outcome if the claim still holds; answers the next try's delay when there is one. */
async function record(tx: StoreTx, job: AppDeliveryJob, claimedAt: Date, outcome: SendOutcome, now: Date, deps: AppConsumerDeps, final: boolean) {
  const delay = outcome.ok || final ? null : retryDelaySeconds(job.attempt, deps.random);
  const status = outcome.ok ? "delivered" : delay === null ? "failed" : "pending";
  const [row] = await tx
    .update(appDelivery)
    .set({
      status,
      claimedAt: null,
      lastStatus: outcome.status,
      lastError: outcome.ok ? null : outcome.error.slice(0, 500),
      deliveredAt: outcome.ok ? now : null,
      nextAttemptAt: delay === null ? null : new Date(now.getTime() + delay * 1000),
      updatedAt: sql`now()`,
    })
    .where(
      and(
        eq(appDelivery.storeId, tx.storeId),
        eq(appDelivery.id, job.deliveryId),
        eq(appDelivery.round, job.round),
        eq(appDelivery.attempts, job.attempt),
        eq(appDelivery.claimedAt, claimedAt),
      ),
    )
    .returning({ id: appDelivery.id });
  return { recorded: row !== undefined, status, delay };
}

function nextJob(job: AppDeliveryJob): AppDeliveryJob | null {
  return job.attempt < MAX_ATTEMPTS ? { ...job, attempt: job.attempt + 1 } : null;
}

/** Handles one message; throws (so the queue retries it) only when the database or the queue fails. */
export async function consumeAppJob(body: unknown, deps: AppConsumerDeps): Promise<{ outcome: string }> {
  const job = appDeliveryJobSchema.parse(body);
  const { now } = deps;
  const log = deps.log.child({ storeId: job.storeId, deliveryId: job.deliveryId, round: job.round, attempt: job.attempt });
  const claimed = await withStore(deps.db, job.storeId, (tx) => claim(tx, job, now, deps));
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
  const result = await withStore(deps.db, job.storeId, (tx) => record(tx, job, now, outcome, now, deps, claimed.kind === "refused"));
  const fields = { appId: claimed.appId, status: outcome.status, ms: Date.now() - started, next: result.status };
  if (outcome.ok) log.info("apps.delivered", fields);
  else log.warn("apps.delivery_failed", { ...fields, error: outcome.error, retryInSeconds: result.delay });
  const next = nextJob(job);
  if (result.recorded && result.delay !== null && next) await deps.jobs.send(next, { delaySeconds: result.delay });
  return { outcome: result.status };
}
