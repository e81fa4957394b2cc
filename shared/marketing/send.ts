import type { Database } from "../db/database";
import { isUuid } from "../db/ids";
import { mapPlan, plan, together, type Plan } from "../db/plan";
import type { RowOfStatement } from "../db/statement";
import type { Q } from "../db/steps";
import { sendStoreUnit } from "../db/unit";
import type { Logger } from "../core/log";
import { MailError } from "../mail/mailer";
import type { MailConfig } from "../mail/select";
import { storefrontBasePlan, unsubscribeKey } from "../mail/links";
import { renderMarketing, type MessageFacts } from "./render";
import { claimSendable, recordTries, skipUnsendable, type Tried } from "./statements";

/**
 * The `{marketing}-send` consumer for the tick's hand-over (./work.ts): sends each claimed message that is
 * still queued, in two round trips with the provider calls between them. Consent is read again at this
 * moment, by the unit that takes the messages: a customer who withdrew it since the message was queued
 * (or whose email is gone) is skipped, never sent. The mail provider gets the key `marketing:<messageId>`,
 * so a message sent twice by a retry is one email. A refusal fails that message; a retryable error leaves
 * it queued (a later tick claims it again) until MAX_ATTEMPTS.
 */
export const SEND_CHUNK = 50;
export const MAX_ATTEMPTS = 5;

export interface SendOrder {
  type: "marketing.send";
  storeId: string;
  messageIds: string[];
}

export function isSendOrder(body: unknown): body is SendOrder {
  const b = body as Partial<SendOrder> | null;
  return typeof b === "object" && b !== null && b.type === "marketing.send" && isUuid(b.storeId) && Array.isArray(b.messageIds) && b.messageIds.every(isUuid);
}

export interface MarketingDeps {
  db: Database;
  log: Logger;
  mail: MailConfig;
  /** EMAIL_LINK_SECRET (./links.ts). */
  linkSecret: string;
}

type Claimed = RowOfStatement<typeof claimSendable>;

export type SendOutcome = "sent" | "skipped" | "failed" | "deferred" | "gone";

interface Taken {
  skipped: Set<string>;
  claimed: Map<string, Claimed>;
  base: string | null;
}

/**
 * The hand-over's messages still queued, in one unit: those whose customer withdrew consent (or lost the
 * email), or whose campaign was cancelled, become `skipped` with the reason; the others get their recipient
 * and unsubscribe key and are answered with what their email needs. Any other id is gone (sent by an
 * earlier delivery, or its customer deleted).
 */
function takePlan(q: Q, ids: readonly string[], hashes: readonly string[]): Plan<Taken> {
  const take = plan(
    [skipUnsendable(q, ids), claimSendable(q, ids, hashes)] as const,
    ([skipped, claimed]) => ({ skipped: new Set(skipped.map((r) => r.id)), claimed: new Map(claimed.map((r) => [r.id, r])) }),
  );
  return mapPlan(together({ take, base: storefrontBasePlan(q) }), (o) => ({ ...o.take, base: o.base }));
}

/** Records the tries in one unit: each message still queued counts the try and becomes `sent`, or `failed` when refused or out of tries. */
function recordPlan(q: Q, provider: string, tried: readonly Tried[]): Plan<void> {
  return plan([recordTries(q, provider, MAX_ATTEMPTS, tried)] as const, () => undefined);
}

async function sendOne(deps: MarketingDeps, storeId: string, message: Claimed, facts: MessageFacts): Promise<Tried> {
  const rendered = renderMarketing(message.subject, message.body, facts);
  try {
    const sent = await deps.mail.mailer.send({
      storeId,
      from: `${facts.storeName.replace(/[<>"]/g, "")} <news@${deps.mail.fromDomain}>`,
      to: message.recipient,
      subject: rendered.subject,
      text: rendered.text,
      html: rendered.html,
      idempotencyKey: `marketing:${message.id}`,
      tag: message.tag,
      // One-click unsubscribe from the mail client (RFC 8058): a POST to the same link.
      ...(facts.unsubscribeUrl ? { headers: { "List-Unsubscribe": `<${facts.unsubscribeUrl}>`, "List-Unsubscribe-Post": "List-Unsubscribe=One-Click" } } : {}),
    });
    return { id: message.id, sent: true, provider_id: sent.providerId };
  } catch (e) {
    if (!(e instanceof MailError)) throw e;
    deps.log.warn("marketing.send_failed", { storeId, messageId: message.id, kind: e.kind, retryable: e.retryable });
    return { id: message.id, sent: false, failed: !e.retryable, error: e.message.slice(0, 1000), retry_in_ms: e.retryAfterSeconds === undefined ? null : e.retryAfterSeconds * 1000 };
  }
}

/**
 * One hand-over: its messages in order, taken in one unit and recorded in another. A retryable error (a
 * rate limit) stops the rest of the chunk (they stay claimed until their claim lapses, then a later tick
 * hands them over again), so a busy provider is not hammered. A mail error never throws (the row records it).
 */
export async function sendMarketingBatch(order: SendOrder, deps: MarketingDeps): Promise<Record<SendOutcome, number>> {
  const counts: Record<SendOutcome, number> = { sent: 0, skipped: 0, failed: 0, deferred: 0, gone: 0 };
  const keys = await Promise.all(order.messageIds.map((id) => unsubscribeKey(deps.linkSecret, id)));
  const taken = await sendStoreUnit(
    deps.db,
    order.storeId,
    (q) =>
      takePlan(
        q,
        order.messageIds,
        keys.map((k) => k.hash),
      ),
    { readOnly: false },
  );
  const tried: Tried[] = [];
  let stopped = false;
  try {
    for (const [i, id] of order.messageIds.entries()) {
      const message = taken.claimed.get(id);
      if (!message) {
        counts[taken.skipped.has(id) ? "skipped" : "gone"]++;
        continue;
      }
      if (stopped) continue;
      const facts: MessageFacts = {
        storeName: message.store_name,
        firstName: message.first_name,
        storeUrl: taken.base,
        orderNumber: message.order_number ?? undefined,
        unsubscribeUrl: taken.base ? `${taken.base}/unsubscribe/${id}?k=${keys[i]!.key}` : null,
      };
      const outcome = await sendOne(deps, order.storeId, message, facts);
      tried.push(outcome);
      const kind = outcome.sent ? "sent" : outcome.failed ? "failed" : "deferred";
      counts[kind]++;
      stopped = kind === "deferred";
    }
  } finally {
    // What was sent is recorded even when an unexpected error stops the hand-over.
    if (tried.length > 0) await sendStoreUnit(deps.db, order.storeId, (q) => recordPlan(q, deps.mail.mailer.provider, tried), { readOnly: false });
  }
  deps.log.info("marketing.sent", { storeId: order.storeId, ...counts });
  return counts;
}
