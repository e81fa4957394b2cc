import { plan, type Plan } from "../db/plan";
import type { Q } from "../db/steps";
import { claimQueuedMessages, countRecipients, finishCampaigns, queueDueEnrolments, startDueCampaigns } from "./statements";

/**
 * The store-scoped steps of `{marketing}-tick` (../jobs/marketing-tick.ts), statements of the store's one
 * unit of work: each decides in SQL, so the whole tick of a store is one round trip. The
 * `marketing_message` rows are the durable work list: a campaign's start writes one per consenting
 * recipient, a due enrolment one for its customer; the tick claims queued rows for five minutes and hands
 * their ids to `{marketing}-send`. A claim that lapses (a lost queue message, a crashed consumer) is taken
 * again by a later tick, so nothing is lost; the send itself is idempotent by the message id.
 */

/** A claim lasts this long; a row still queued after it is claimed again. */
export const CLAIM_MS = 5 * 60_000;

/**
 * Starts every campaign due at `now`: one queued message per consenting customer of its audience (the
 * audiences are the ones migration 0021 allows), then each started campaign's recipients counted.
 */
export function startDueCampaignsPlan(q: Q, now: Date): Plan<{ campaigns: number; messages: number }> {
  return plan(
    [
      startDueCampaigns(q, now),
      // The campaigns the statement above started are those it stamped with this tick's time.
      countRecipients(q, now),
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
      queueDueEnrolments(q, now, limit),
    ] as const,
    ([[row]]) => row ?? { queued: 0, skipped: 0 },
  );
}

/** Claims up to `limit` queued messages whose claim is free or lapsed; answers their ids. */
export function claimQueuedMessagesPlan(q: Q, now: Date, limit: number): Plan<string[]> {
  return plan(
    [
      claimQueuedMessages(q, now, limit, CLAIM_MS / 1000),
    ] as const,
    ([rows]) => rows.map((r) => r.id),
  );
}

/** Campaigns with nothing left queued are sent; answers how many. */
export function finishCampaignsPlan(q: Q, now: Date): Plan<number> {
  return plan(
    [
      finishCampaigns(q, now),
    ] as const,
    ([[row]]) => row?.n ?? 0,
  );
}
