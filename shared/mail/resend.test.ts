import { describe, expect, it } from "vitest";
import { MailError, type OutgoingEmail } from "./mailer";
import { resendMailer } from "./resend";

/**
 * The Resend adapter against a local stand-in for `POST https://api.resend.com/emails` that checks what
 * Resend's documentation requires (bearer key, JSON body with from/to/subject, `Idempotency-Key`) and
 * answers like it: the same key again answers the same id; errors as `{statusCode, name, message}`.
 */
function fakeResend(answer?: (n: number) => Response | "hang" | "throw") {
  const byKey = new Map<string, string>();
  const calls: { headers: Headers; body: Record<string, unknown> }[] = [];
  const fetch = async (url: string, init: RequestInit): Promise<Response> => {
    const headers = new Headers(init.headers);
    const body = JSON.parse(String(init.body)) as Record<string, unknown>;
    calls.push({ headers, body });
    const forced = answer?.(calls.length);
    if (forced === "throw") throw new TypeError("fetch failed");
    if (forced === "hang") return new Promise((_, reject) => init.signal?.addEventListener("abort", () => reject(Object.assign(new Error("timed out"), { name: "TimeoutError" }))));
    if (forced) return forced;
    if (url !== "https://api.resend.com/emails" || init.method !== "POST") return Response.json({ statusCode: 404, name: "not_found", message: "Not found" }, { status: 404 });
    if (headers.get("authorization") !== "Bearer re_test_key_123") return Response.json({ statusCode: 401, name: "missing_api_key", message: "Missing API key" }, { status: 401 });
    if (!Array.isArray(body.to) || typeof body.subject !== "string" || typeof body.from !== "string") {
      return Response.json({ statusCode: 422, name: "validation_error", message: "Missing `to` field." }, { status: 422 });
    }
    const key = headers.get("idempotency-key") ?? crypto.randomUUID();
    if (!byKey.has(key)) byKey.set(key, crypto.randomUUID());
    return Response.json({ id: byKey.get(key) });
  };
  return { fetch, calls };
}

const email: OutgoingEmail = {
  storeId: "5f0e4c1a-aaaa-4bbb-8ccc-000000000001",
  from: "Demo Store <orders@mail.example.com>",
  to: "asha@example.test",
  subject: "Payment received",
  text: "Thanks",
  html: "<p>Thanks</p>",
  idempotencyKey: "evt-1:payment_received",
  tag: "payment_received",
};

const failure = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e as MailError);

describe("Resend adapter", () => {
  it("sends what Resend documents; the same idempotency key is one message", async () => {
    const server = fakeResend();
    const mailer = resendMailer({ apiKey: "re_test_key_123", fetch: server.fetch });
    const a = await mailer.send(email);
    const b = await mailer.send(email);
    expect(a.providerId).toBe(b.providerId);
    expect(server.calls[0]!.headers.get("idempotency-key")).toBe("evt-1:payment_received");
    expect(server.calls[0]!.body).toMatchObject({ from: email.from, to: [email.to], subject: email.subject, html: email.html, text: email.text, tags: [{ name: "template", value: "payment_received" }] });
    expect(server.calls[0]!.body).not.toHaveProperty("headers");
    const unsubscribe = { "List-Unsubscribe": "<https://shop.example/unsubscribe/m1?k=x>", "List-Unsubscribe-Post": "List-Unsubscribe=One-Click" };
    await mailer.send({ ...email, idempotencyKey: "marketing:m1", tag: "campaign", headers: unsubscribe });
    expect(server.calls[2]!.body).toMatchObject({ headers: unsubscribe, tags: [{ name: "template", value: "campaign" }] });
  });

  it("maps Resend's answers: 429 with Retry-After, 5xx, unreachable and timeouts retryable; 401 and 422 not", async () => {
    const cases: [Response | "hang" | "throw", string, boolean][] = [
      [Response.json({ statusCode: 429, name: "rate_limit_exceeded", message: "Too many requests" }, { status: 429, headers: { "retry-after": "3" } }), "rate_limited", true],
      [Response.json({ statusCode: 500, name: "application_error", message: "Internal" }, { status: 500 }), "unavailable", true],
      ["throw", "unavailable", true],
      ["hang", "timeout", true],
      [Response.json({ statusCode: 401, name: "missing_api_key", message: "Missing API key" }, { status: 401 }), "auth", false],
      [Response.json({ statusCode: 422, name: "validation_error", message: "Invalid `to` field." }, { status: 422 }), "rejected", false],
    ];
    for (const [answer, kind, retryable] of cases) {
      const server = fakeResend(() => answer);
      const e = await failure(resendMailer({ apiKey: "re_test_key_123", fetch: server.fetch, timeoutMs: 50 }).send(email));
      expect(e, kind).toBeInstanceOf(MailError);
      expect({ kind: e!.kind, retryable: e!.retryable }).toEqual({ kind, retryable });
      if (kind === "rate_limited") expect(e!.retryAfterSeconds).toBe(3);
    }
  });
});
