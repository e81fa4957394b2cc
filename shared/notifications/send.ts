import type { Database } from "../db/database";
import { isUuid } from "../db/ids";
import { withStore } from "../db/with-store";
import type { RoutedEvent } from "../events/routes";
import type { Logger } from "../log";
import { orderEmailKey, storefrontBase } from "../mail/links";
import { MailError } from "../mail/mailer";
import { orderPath } from "../orders/access";
import type { MailConfig } from "../mail/select";
import { renderNotification, type NotificationFacts } from "./templates";

/**
 * The `{notifications}-send` consumer: one message to the shopper per event and template. Three short
 * steps, the provider call outside any transaction:
 *
 * 1. a store unit reads the order and claims the `notification` row (unique per event and template); a
 *    row already `sent` or `failed` means a duplicate delivery: nothing more happens;
 * 2. the mailer sends with the key `<eventId>:<template>`, so a retry after a lost answer is one message;
 * 3. a store unit records the outcome. A retryable failure is recorded and thrown (the queue retries it
 *    later, then dead-letters it); a refusal (bad address) is recorded as `failed` and not retried.
 */
export interface NotificationDeps {
  db: Database;
  log: Logger;
  mail: MailConfig;
  /** EMAIL_LINK_SECRET (shared/mail/links.ts): messages then carry the link to the order. */
  linkSecret?: string;
}

export class RetryLater extends Error {
  readonly delaySeconds: number | undefined;
  constructor(message: string, delaySeconds?: number) {
    super(message);
    this.name = "RetryLater";
    this.delaySeconds = delaySeconds;
  }
}

type Claim = { done: true } | { done: false; facts: NotificationFacts };

export async function sendNotification(message: RoutedEvent, deps: NotificationDeps): Promise<"sent" | "duplicate" | "skipped" | "failed"> {
  const template = message.route.replace(/^notification:/, "");
  const orderId = message.payload["orderId"];
  if (!isUuid(orderId) || !isUuid(message.eventId)) {
    deps.log.warn("notification.skipped", { eventId: message.eventId, template, reason: "no order in the event" });
    return "skipped";
  }
  const claim = await withStore(deps.db, message.storeId, async (tx): Promise<Claim | null> => {
    const { rows } = await tx.$client.query<{ status: string }>("select status from notification where store_id = $1 and event_id = $2 and template = $3", [
      tx.storeId,
      message.eventId,
      template,
    ]);
    if (rows[0] && rows[0].status !== "sending") return { done: true };
    const { rows: found } = await tx.$client.query<{ number: number; email: string; total: number; currency: string; store_name: string; return_number: number | null }>(
      `select o.number, o.email, o.total::float8 as total, o.currency, s.name as store_name,
         (select r.number from order_return r where r.store_id = o.store_id and r.id::text = $3) as return_number
       from shop_order o join store s on s.id = o.store_id where o.store_id = $1 and o.id = $2`,
      [tx.storeId, orderId, String(message.payload["returnId"] ?? "")],
    );
    const o = found[0];
    if (!o) return null;
    const facts: NotificationFacts = {
      storeName: o.store_name,
      orderNumber: o.number,
      email: o.email,
      total: o.total,
      currency: o.currency,
      amount: typeof message.payload["amount"] === "number" ? message.payload["amount"] : undefined,
      returnNumber: o.return_number ?? undefined,
      expiresAt: typeof message.payload["expiresAt"] === "string" ? message.payload["expiresAt"] : undefined,
      reason: typeof message.payload["reason"] === "string" ? message.payload["reason"] : undefined,
    };
    if (!renderNotification(template, facts)) return null;
    if (deps.linkSecret) {
      const base = await storefrontBase(tx);
      const { key, hash } = await orderEmailKey(deps.linkSecret, orderId);
      await tx.$client.query("update shop_order set email_key_hash = $3 where store_id = $1 and id = $2 and email_key_hash is distinct from $3", [tx.storeId, orderId, hash]);
      if (base) facts.orderUrl = `${base}${orderPath(orderId, key)}`;
    }
    const rendered = renderNotification(template, facts)!;
    await tx.$client.query(
      `insert into notification (store_id, event_id, template, recipient, subject, attempts) values ($1, $2, $3, $4, $5, 1)
       on conflict (store_id, event_id, template) do update set attempts = notification.attempts + 1`,
      [tx.storeId, message.eventId, template, o.email, rendered.subject.slice(0, 300)],
    );
    return { done: false, facts };
  });
  if (!claim) {
    deps.log.warn("notification.skipped", { eventId: message.eventId, template, reason: "no such order or template" });
    return "skipped";
  }
  if (claim.done) return "duplicate";
  const rendered = renderNotification(template, claim.facts)!;
  const record = (status: "sent" | "sending" | "failed", fields: { providerId?: string; error?: string }) =>
    withStore(deps.db, message.storeId, (tx) =>
      tx.$client.query(
        `update notification set status = $4, provider = $5, provider_id = coalesce($6, provider_id), last_error = $7,
           sent_at = case when $4 = 'sent' then now() else sent_at end
         where store_id = $1 and event_id = $2 and template = $3`,
        [tx.storeId, message.eventId, template, status, deps.mail.mailer.provider, fields.providerId ?? null, fields.error?.slice(0, 1000) ?? null],
      ),
    );
  try {
    const sent = await deps.mail.mailer.send({
      storeId: message.storeId,
      from: `${claim.facts.storeName.replace(/[<>"]/g, "")} <orders@${deps.mail.fromDomain}>`,
      to: claim.facts.email,
      subject: rendered.subject,
      text: rendered.text,
      html: rendered.html,
      idempotencyKey: `${message.eventId}:${template}`,
      tag: template,
    });
    await record("sent", { providerId: sent.providerId });
    return "sent";
  } catch (e) {
    if (e instanceof MailError && !e.retryable) {
      await record("failed", { error: e.message });
      deps.log.warn("notification.failed", { eventId: message.eventId, template, kind: e.kind });
      return "failed";
    }
    await record("sending", { error: String(e instanceof Error ? e.message : e) });
    throw new RetryLater(String(e instanceof Error ? e.message : e), e instanceof MailError ? e.retryAfterSeconds : undefined);
  }
}
