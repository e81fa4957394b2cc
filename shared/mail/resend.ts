import { exchangeJson, retryAfterSeconds, type FetchLike } from "../core/exchange";
import { MailError, type Mailer, type OutgoingEmail } from "./mailer";

export interface ResendConfig {
  apiKey: string;
  baseUrl?: string;
  fetch?: FetchLike;
  timeoutMs?: number;
}

/**
 * Resend (https://resend.com/docs/api-reference/emails/send-email): `POST /emails` with a bearer key and
 * an `Idempotency-Key` header (a retry with the same key within 24 h sends nothing new and answers the
 * same id). 429 is `rate_limited` with its Retry-After; 5xx, an unreachable host or a timeout are
 * `unavailable`/`timeout` (retried by the queue); 401/403 `auth`; any other 4xx `rejected`.
 */
export function resendMailer(config: ResendConfig): Mailer {
  const base = config.baseUrl ?? "https://api.resend.com";
  const fetchFn = config.fetch ?? ((input, init) => fetch(input, init));
  const timeoutMs = config.timeoutMs ?? 10_000;
  return {
    provider: "resend",
    async send(message: OutgoingEmail) {
      const { response: res, body: answer } = await exchangeJson(
        {
          fetch: fetchFn,
          timeoutMs,
          timeout: () => new MailError("timeout", `Resend did not answer within ${timeoutMs} ms`),
          unreachable: (message) => new MailError("unavailable", `Resend did not answer: ${message}`),
        },
        `${base}/emails`,
        {
          method: "POST",
          headers: {
            authorization: `Bearer ${config.apiKey}`,
            "content-type": "application/json",
            "idempotency-key": message.idempotencyKey.slice(0, 256),
          },
          body: JSON.stringify({ from: message.from, to: [message.to], subject: message.subject, html: message.html, text: message.text, tags: [{ name: "template", value: message.tag.replace(/[^A-Za-z0-9_-]/g, "_") }], ...(message.headers ? { headers: message.headers } : {}) }),
        },
      );
      const body = (answer ?? null) as { id?: unknown; message?: unknown } | null;
      if (res.ok && typeof body?.id === "string") return { providerId: body.id };
      const said = typeof body?.message === "string" ? body.message : `HTTP ${res.status}`;
      if (res.status === 429) throw new MailError("rate_limited", `Resend: ${said}`, retryAfterSeconds(res.headers.get("retry-after")) || undefined);
      if (res.status === 401 || res.status === 403) throw new MailError("auth", `Resend: ${said}`);
      if (res.status >= 500 || res.ok) throw new MailError("unavailable", `Resend: ${said}`);
      throw new MailError("rejected", `Resend: ${said}`);
    },
  };
}
