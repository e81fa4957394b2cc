import type { Logger } from "../core/log";
import type { Database } from "../db/database";
import { CURRENT_STORE } from "../db/openings";
import { plan } from "../db/plan";
import { raw, sql, type Q } from "../db/steps";
import { sendStoreUnit } from "../db/unit";
import type { RoutedEvent } from "../events/routes";
import { MailError } from "../mail/mailer";
import type { MailConfig } from "../mail/select";
import type { Rendered } from "./templates";

/** What sending a shopper message needs (./send.ts, ./consent.ts and this file). */
export interface NotificationDeps {
  db: Database;
  log: Logger;
  mail: MailConfig;
  /** EMAIL_LINK_SECRET (shared/mail/links.ts): messages then carry the link to the order. */
  linkSecret?: string;
}

/**
 * The second half of every shopper message (./send.ts, ./consent.ts): the mailer call with the key
 * `<eventId>:<template>`, so a retry after a lost answer is one message, then one store unit that records
 * the try and its outcome on the `notification` row (unless another delivery finished it). A retryable
 * failure is recorded and thrown (the queue retries it later, then dead-letters it); a refusal (bad
 * address) is recorded as `failed` and not retried.
 */
export class RetryLater extends Error {
  readonly delaySeconds: number | undefined;
  constructor(message: string, delaySeconds?: number) {
    super(message);
    this.name = "RetryLater";
    this.delaySeconds = delaySeconds;
  }
}

/** Records one try on the notification row: made by the first try, counted by every later one, left alone once finished. */
function recordPlan(q: Q, message: RoutedEvent, template: string, claim: { recipient: string; subject: string }, provider: string, status: "sent" | "sending" | "failed", fields: { providerId?: string; error?: string }) {
  return plan(
    [
      raw(
        q,
        sql`insert into notification (store_id, event_id, template, recipient, subject, attempts, status, provider, provider_id, last_error, sent_at)
            values (${CURRENT_STORE}, ${message.eventId}, ${template}, ${claim.recipient}, ${claim.subject.slice(0, 300)}, 1, ${status}, ${provider},
              ${fields.providerId ?? null}, ${fields.error?.slice(0, 1000) ?? null}, case when ${status} = 'sent' then now() end)
            on conflict (store_id, event_id, template) do update set attempts = notification.attempts + 1, status = excluded.status, provider = excluded.provider,
              provider_id = coalesce(excluded.provider_id, notification.provider_id), last_error = excluded.last_error,
              sent_at = case when excluded.status = 'sent' then now() else notification.sent_at end
            where notification.status = 'sending'`,
      ),
    ] as const,
    () => undefined,
  );
}

/** Sends one rendered message to `to` from the store's `sender` address and records the try. */
export async function deliver(
  message: RoutedEvent,
  deps: NotificationDeps,
  template: string,
  to: { email: string; storeName: string; sender: "orders" | "news" },
  rendered: Rendered,
): Promise<"sent" | "failed"> {
  const record = (status: "sent" | "sending" | "failed", fields: { providerId?: string; error?: string }) =>
    sendStoreUnit(deps.db, message.storeId, (q) => recordPlan(q, message, template, { recipient: to.email, subject: rendered.subject }, deps.mail.mailer.provider, status, fields), {
      readOnly: false,
    });
  try {
    const sent = await deps.mail.mailer.send({
      storeId: message.storeId,
      from: `${to.storeName.replace(/[<>"]/g, "")} <${to.sender}@${deps.mail.fromDomain}>`,
      to: to.email,
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
