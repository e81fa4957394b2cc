/**
 * The mailer port (issue 12). Adapters send one message and nothing else: the caller owns every write
 * (the notification log, the marketing send log) and its idempotency. `idempotencyKey` is passed to the
 * provider (Resend's `Idempotency-Key`), so a retry after a lost answer sends nothing twice.
 */
export interface OutgoingEmail {
  storeId: string;
  /** Display name and address, e.g. `Demo Store <orders@mail.example>`. */
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  /** Stable per logical message, e.g. `<eventId>:<template>`; at most 256 characters. */
  idempotencyKey: string;
  /** What it is, for the log and the provider's tags: a template name. */
  tag: string;
  /** Extra headers, e.g. List-Unsubscribe and List-Unsubscribe-Post (RFC 8058) on marketing messages. */
  headers?: Record<string, string>;
}

export type MailErrorKind = "rate_limited" | "unavailable" | "timeout" | "rejected" | "auth";

export class MailError extends Error {
  readonly kind: MailErrorKind;
  readonly retryable: boolean;
  readonly retryAfterSeconds: number | undefined;

  constructor(kind: MailErrorKind, message: string, retryAfterSeconds?: number) {
    super(message);
    this.name = "MailError";
    this.kind = kind;
    this.retryable = kind === "rate_limited" || kind === "unavailable" || kind === "timeout";
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export interface SentEmail {
  /** The provider's id for the message. */
  providerId: string;
}

export interface Mailer {
  readonly provider: "local" | "resend";
  send(message: OutgoingEmail): Promise<SentEmail>;
}
