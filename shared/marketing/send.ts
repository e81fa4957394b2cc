import type { Database } from "../db/database";
import { isUuid } from "../db/ids";
import { CURRENT_STORE } from "../db/openings";
import { mapPlan, plan, together, type Plan } from "../db/plan";
import { raw, sql, type Q } from "../db/steps";
import { sendStoreUnit } from "../db/unit";
import type { Logger } from "../core/log";
import { MailError } from "../mail/mailer";
import type { MailConfig } from "../mail/select";
import { storefrontBasePlan, unsubscribeKey } from "../mail/links";
import { renderMarketing, type MessageFacts } from "./render";

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

interface Claimed extends Record<string, unknown> {
  id: string;
  recipient: string;
  first_name: string | null;
  subject: string;
  body: string;
  tag: string;
  order_number: number | null;
  store_name: string;
}

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
  const mine = sql`m2.store_id = ${CURRENT_STORE} and m2.id = any(${`{${ids.join(",")}}`}::uuid[]) and m2.status = 'queued'`;
  const take = plan(
    [
      raw<{ id: string }>(
        q,
        sql`update marketing_message m set status = 'skipped', reason = f.reason
            from (select m2.id, case when k.status = 'cancelled' then 'campaign cancelled' when not c.accepts_marketing then 'no marketing consent'
                                     when c.email is null then 'no email address' end as reason
                  from marketing_message m2 join customer c on c.store_id = m2.store_id and c.id = m2.customer_id
                  left join campaign k on k.store_id = m2.store_id and k.id = m2.campaign_id
                  where ${mine}) f
            where m.store_id = ${CURRENT_STORE} and m.id = f.id and f.reason is not null and m.status = 'queued'
            returning m.id`,
      ),
      raw<Claimed>(
        q,
        sql`update marketing_message m set recipient = f.recipient, unsubscribe_key_hash = h.hash
            from (select m2.id, lower(c.email) as recipient, c.first_name, coalesce(k.subject, a.subject) as subject, coalesce(k.body, a.body) as body,
                    case when k.id is not null then 'campaign' else a.kind end as tag, o.number as order_number, s.name as store_name
                  from marketing_message m2
                  join customer c on c.store_id = m2.store_id and c.id = m2.customer_id
                  join store s on s.id = m2.store_id
                  left join campaign k on k.store_id = m2.store_id and k.id = m2.campaign_id
                  left join marketing_enrolment e on e.store_id = m2.store_id and e.id = m2.enrolment_id
                  left join marketing_automation a on a.store_id = e.store_id and a.id = e.automation_id
                  left join shop_order o on o.store_id = e.store_id and o.id = e.order_id
                  where ${mine} and c.accepts_marketing and c.email is not null and k.status is distinct from 'cancelled') f,
                 unnest(${`{${ids.join(",")}}`}::uuid[], ${`{${hashes.join(",")}}`}::text[]) as h(id, hash)
            where m.store_id = ${CURRENT_STORE} and m.id = f.id and h.id = f.id and m.status = 'queued'
            returning f.id, f.recipient, f.first_name, f.subject, f.body, f.tag, f.order_number, f.store_name`,
      ),
    ] as const,
    ([skipped, claimed]) => ({ skipped: new Set(skipped.map((r) => r.id)), claimed: new Map(claimed.map((r) => [r.id, r])) }),
  );
  return mapPlan(together({ take, base: storefrontBasePlan(q) }), (o) => ({ ...o.take, base: o.base }));
}

/** One message's try. */
type Tried = { id: string; sent: true; provider_id: string } | { id: string; sent: false; failed: boolean; error: string; retry_in_ms: number | null };

/** Records the tries in one unit: each message still queued counts the try and becomes `sent`, or `failed` when refused or out of tries. */
function recordPlan(q: Q, provider: string, tried: readonly Tried[]): Plan<void> {
  return plan(
    [
      raw(
        q,
        sql`update marketing_message m set attempts = m.attempts + 1, provider = ${provider},
              status = case when r.sent then 'sent' when r.failed or m.attempts + 1 >= ${MAX_ATTEMPTS} then 'failed' else m.status end,
              sent_at = case when r.sent then now() else m.sent_at end,
              provider_id = case when r.sent then r.provider_id else m.provider_id end,
              last_error = case when r.sent then null else r.error end,
              claimed_until = case when r.retry_in_ms is null then m.claimed_until else now() + make_interval(secs => r.retry_in_ms / 1000.0) end
            from jsonb_to_recordset(${JSON.stringify(tried)}::jsonb) as r(id uuid, sent boolean, failed boolean, provider_id text, error text, retry_in_ms int)
            where m.store_id = ${CURRENT_STORE} and m.id = r.id and m.status = 'queued'`,
      ),
    ] as const,
    () => undefined,
  );
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
