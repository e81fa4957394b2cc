import type { Logger } from "../core/log";
import type { Database } from "../db/database";
import { plan } from "../db/plan";
import type { Q } from "../db/steps";
import { sendStoreUnit } from "../db/unit";
import type { RoutedEvent } from "../events/routes";
import { MailError } from "../mail/mailer";
import type { MailConfig } from "../mail/select";
import { recordTry } from "./statements";
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
      recordTry(q, {
        eventId: message.eventId,
        template,
        recipient: claim.recipient,
        subject: claim.subject.slice(0, 300),
        status,
        provider,
        providerId: fields.providerId ?? null,
        error: fields.error?.slice(0, 1000) ?? null,
      }),
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
