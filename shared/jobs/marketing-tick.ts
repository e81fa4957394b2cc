import { together } from "../db/plan";
import { storeIdsWithMarketingWork } from "../db/privileged";
import { sendStoreUnit } from "../db/unit";
import { WORK_QUEUES } from "../events/routes";
import { SEND_CHUNK, type SendOrder } from "../marketing/send";
import { claimQueuedMessagesPlan, finishCampaignsPlan, queueDueEnrolmentsPlan, startDueCampaignsPlan } from "../marketing/work";
import { forEachStore } from "./per-store";
import type { JobContext } from "./types";

/** Enrolments decided and messages claimed per store and tick, at most; the rest wait 30 s. */
export const ENROLMENT_BATCH = 200;
export const CLAIM_BATCH = 500;

interface SendQueue {
  sendBatch(messages: { body: SendOrder }[]): Promise<unknown>;
}

/**
 * {marketing}-tick (every 30 s; docs/marketing.md): for each store the privileged list names, one store unit
 * (one round trip) starts the campaigns due (a queued message per consenting recipient), decides the
 * enrolments due, claims queued messages and closes campaigns with nothing left queued; then, after the
 * commit, hands the claimed ids to `{marketing}-send` in chunks. A hand-over that fails leaves the claims
 * to lapse and be taken again.
 */
export async function marketingTick(ctx: JobContext, only?: readonly string[]): Promise<Record<string, unknown>> {
  const { db, now } = ctx;
  const ids = only ?? (await storeIdsWithMarketingWork(db, now));
  const queue = ctx.env[WORK_QUEUES.marketing.binding] as SendQueue | undefined;
  return forEachStore(ctx, ids, async (storeId) => {
    const step = await sendStoreUnit(
      db,
      storeId,
      (q) =>
        together({
          started: startDueCampaignsPlan(q, now),
          enrolments: queueDueEnrolmentsPlan(q, now, ENROLMENT_BATCH),
          claimed: claimQueuedMessagesPlan(q, now, CLAIM_BATCH),
          finished: finishCampaignsPlan(q, now),
        }),
      { readOnly: false },
    );
    if (step.claimed.length > 0) {
      if (!queue) throw new Error(`the ${WORK_QUEUES.marketing.binding} queue is not bound to this Worker`);
      const orders: { body: SendOrder }[] = [];
      for (let i = 0; i < step.claimed.length; i += SEND_CHUNK) orders.push({ body: { type: "marketing.send", storeId, messageIds: step.claimed.slice(i, i + SEND_CHUNK) } });
      for (let i = 0; i < orders.length; i += 100) await queue.sendBatch(orders.slice(i, i + 100));
    }
    return {
      campaignsStarted: step.started.campaigns,
      messagesCreated: step.started.messages + step.enrolments.queued,
      enrolmentsSkipped: step.enrolments.skipped,
      handedOver: step.claimed.length,
      campaignsFinished: step.finished,
    };
  });
}
