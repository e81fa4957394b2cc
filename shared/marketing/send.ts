import type { Database } from "../db/database";
import { isUuid } from "../db/ids";
import { withStore } from "../db/with-store";
import type { Logger } from "../log";
import { MailError } from "../mail/mailer";
import type { MailConfig } from "../mail/select";
import { storefrontBase, unsubscribeKey } from "../mail/links";
import { renderMarketing, type MessageFacts } from "./render";

/**
 * The `{marketing}-send` consumer for the tick's hand-over (./work.ts): sends each claimed message that is
 * still queued. Consent is read again at this moment: a customer who withdrew it since the message was
 * queued (or whose email is gone) is skipped, never sent. The mail provider gets the key
 * `marketing:<messageId>`, so a message sent twice by a retry is one email. A refusal fails that message;
 * a retryable error leaves it queued (a later tick claims it again) until MAX_ATTEMPTS.
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

interface Claimed {
  recipient: string;
  subject: string;
  body: string;
  tag: string;
  facts: MessageFacts;
}

type Claim = { kind: "gone" } | { kind: "skipped"; reason: string } | { kind: "send"; message: Claimed };

export type SendOutcome = "sent" | "skipped" | "failed" | "deferred" | "gone";

async function claim(deps: MarketingDeps, storeId: string, id: string): Promise<Claim> {
  return withStore(deps.db, storeId, async (tx) => {
    const { rows } = await tx.$client.query<{
      email: string | null;
      consent: boolean;
      first_name: string | null;
      campaign_status: string | null;
      subject: string;
      body: string;
      tag: string;
      order_number: number | null;
      store_name: string;
    }>(
      `select c.email, c.accepts_marketing as consent, c.first_name, k.status as campaign_status,
         coalesce(k.subject, a.subject) as subject, coalesce(k.body, a.body) as body,
         case when k.id is not null then 'campaign' else a.kind end as tag, o.number as order_number, s.name as store_name
       from marketing_message m
       join customer c on c.store_id = m.store_id and c.id = m.customer_id
       join store s on s.id = m.store_id
       left join campaign k on k.store_id = m.store_id and k.id = m.campaign_id
       left join marketing_enrolment e on e.store_id = m.store_id and e.id = m.enrolment_id
       left join marketing_automation a on a.store_id = e.store_id and a.id = e.automation_id
       left join shop_order o on o.store_id = e.store_id and o.id = e.order_id
       where m.store_id = $1 and m.id = $2 and m.status = 'queued'
       for update of m`,
      [tx.storeId, id],
    );
    const row = rows[0];
    if (!row) return { kind: "gone" };
    const reason = row.campaign_status === "cancelled" ? "campaign cancelled" : !row.consent ? "no marketing consent" : !row.email ? "no email address" : null;
    if (reason) {
      await tx.$client.query("update marketing_message set status = 'skipped', reason = $3 where store_id = $1 and id = $2", [tx.storeId, id, reason]);
      return { kind: "skipped", reason };
    }
    const { key, hash } = await unsubscribeKey(deps.linkSecret, id);
    const base = await storefrontBase(tx);
    const recipient = row.email!.toLowerCase();
    await tx.$client.query("update marketing_message set attempts = attempts + 1, recipient = $3, unsubscribe_key_hash = $4 where store_id = $1 and id = $2", [
      tx.storeId,
      id,
      recipient,
      hash,
    ]);
    return {
      kind: "send",
      message: {
        recipient,
        subject: row.subject,
        body: row.body,
        tag: row.tag,
        facts: {
          storeName: row.store_name,
          firstName: row.first_name,
          storeUrl: base,
          orderNumber: row.order_number ?? undefined,
          unsubscribeUrl: base ? `${base}/unsubscribe/${id}?k=${key}` : null,
        },
      },
    };
  });
}

async function record(deps: MarketingDeps, storeId: string, id: string, outcome: { sent: true; providerId: string } | { sent: false; failed: boolean; error: string; retryInMs?: number }) {
  await withStore(deps.db, storeId, (tx) =>
    outcome.sent
      ? tx.$client.query("update marketing_message set status = 'sent', sent_at = now(), provider = $3, provider_id = $4, last_error = null where store_id = $1 and id = $2", [
          tx.storeId,
          id,
          deps.mail.mailer.provider,
          outcome.providerId,
        ])
      : tx.$client.query(
          `update marketing_message set last_error = $3, provider = $4,
             status = case when $5 or attempts >= $6 then 'failed' else status end,
             claimed_until = case when $7::int is null then claimed_until else now() + make_interval(secs => $7::int / 1000.0) end
           where store_id = $1 and id = $2`,
          [tx.storeId, id, outcome.error.slice(0, 1000), deps.mail.mailer.provider, outcome.failed, MAX_ATTEMPTS, outcome.retryInMs ?? null],
        ),
  );
}

/** Sends one message if it is still queued; never throws for a mail error (the row records it). */
export async function sendMarketingMessage(deps: MarketingDeps, storeId: string, id: string): Promise<SendOutcome> {
  const c = await claim(deps, storeId, id);
  if (c.kind !== "send") return c.kind;
  const { message } = c;
  const rendered = renderMarketing(message.subject, message.body, message.facts);
  try {
    const sent = await deps.mail.mailer.send({
      storeId,
      from: `${message.facts.storeName.replace(/[<>"]/g, "")} <news@${deps.mail.fromDomain}>`,
      to: message.recipient,
      subject: rendered.subject,
      text: rendered.text,
      html: rendered.html,
      idempotencyKey: `marketing:${id}`,
      tag: message.tag,
      // One-click unsubscribe from the mail client (RFC 8058): a POST to the same link.
      ...(message.facts.unsubscribeUrl ? { headers: { "List-Unsubscribe": `<${message.facts.unsubscribeUrl}>`, "List-Unsubscribe-Post": "List-Unsubscribe=One-Click" } } : {}),
    });
    await record(deps, storeId, id, { sent: true, providerId: sent.providerId });
    return "sent";
  } catch (e) {
    if (!(e instanceof MailError)) throw e;
    await record(deps, storeId, id, { sent: false, failed: !e.retryable, error: e.message, retryInMs: e.retryAfterSeconds === undefined ? undefined : e.retryAfterSeconds * 1000 });
    deps.log.warn("marketing.send_failed", { storeId, messageId: id, kind: e.kind, retryable: e.retryable });
    return e.retryable ? "deferred" : "failed";
  }
}

/**
 * One hand-over: its messages in order. A rate limit stops the rest of the chunk (they stay claimed until
 * their claim lapses, then a later tick hands them over again), so a busy provider is not hammered.
 */
export async function sendMarketingBatch(order: SendOrder, deps: MarketingDeps): Promise<Record<SendOutcome, number>> {
  const counts: Record<SendOutcome, number> = { sent: 0, skipped: 0, failed: 0, deferred: 0, gone: 0 };
  for (const id of order.messageIds) {
    const outcome = await sendMarketingMessage(deps, order.storeId, id);
    counts[outcome]++;
    if (outcome === "deferred") break;
  }
  deps.log.info("marketing.sent", { storeId: order.storeId, ...counts });
  return counts;
}
