/**
 * One request to Razorpay's API: Basic auth with key_id:key_secret, JSON both ways, a deadline, and every
 * failure turned into a GatewayError (Razorpay's error body is `{error: {code, description, field,
 * source, step, reason, metadata}}`).
 */
import { z } from "zod";
import { exchangeJson, retryAfterSeconds, type FetchLike } from "../core/exchange";
import { GatewayError, type GatewayErrorKind } from "./gateway";

export type { FetchLike };

export interface RazorpayHttpConfig {
  keyId: string;
  keySecret: string;
  baseUrl: string;
  fetch: FetchLike;
  timeoutMs: number;
}

const errorBody = z.object({
  error: z.object({
    code: z.string(),
    description: z.string().optional(),
    field: z.string().nullish(),
    source: z.string().nullish(),
    reason: z.string().nullish(),
  }),
});

// A 400 is the shopper's or the bank's refusal, not our mistake, when Razorpay blames one of these.
const DECLINE_SOURCES = new Set(["customer", "bank", "issuer"]);
const DECLINE_REASONS = new Set(["payment_failed", "insufficient_balance", "refund_failed"]);

export function errorFromResponse(status: number, body: unknown, headers: Headers): GatewayError {
  const parsed = errorBody.safeParse(body);
  const e = parsed.success ? parsed.data.error : undefined;
  const details = { status, code: e?.code, field: e?.field ?? undefined, retryAfterSeconds: retryAfterSeconds(headers.get("retry-after")) };
  const message = `Razorpay ${status}${e ? ` ${e.code}: ${e.description ?? ""}` : ""}`.trim();
  let kind: GatewayErrorKind;
  if (status === 401 || status === 403) kind = "auth";
  else if (status === 429) kind = "rate_limited";
  // 409: Razorpay is still processing an earlier request with the same idempotency key; retry later.
  else if (status >= 500 || status === 409 || e?.code === "SERVER_ERROR" || e?.code === "GATEWAY_ERROR") kind = "unavailable";
  else if (DECLINE_SOURCES.has(e?.source ?? "") || DECLINE_REASONS.has(e?.reason ?? "")) kind = "declined";
  else kind = "bad_request";
  return new GatewayError("razorpay", kind, message, details);
}

export async function razorpayRequest(
  cfg: RazorpayHttpConfig,
  method: "GET" | "POST",
  path: string,
  options: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<unknown> {
  const headers: Record<string, string> = {
    authorization: `Basic ${btoa(`${cfg.keyId}:${cfg.keySecret}`)}`,
    accept: "application/json",
    ...options.headers,
  };
  if (options.body !== undefined) headers["content-type"] = "application/json";
  const { response, body } = await exchangeJson(
    {
      fetch: cfg.fetch,
      timeoutMs: cfg.timeoutMs,
      timeout: () => new GatewayError("razorpay", "timeout", `Razorpay did not answer within ${cfg.timeoutMs} ms`),
      unreachable: (message) => new GatewayError("razorpay", "unavailable", `Razorpay could not be reached: ${message}`),
    },
    new URL(path, cfg.baseUrl).toString(),
    { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) },
  );
  if (!response.ok) throw errorFromResponse(response.status, body, response.headers);
  if (body === undefined) throw new GatewayError("razorpay", "unavailable", `Razorpay answered ${response.status} without JSON`, { status: response.status });
  return body;
}

/** Parses a success body; a body of another shape means Razorpay is not answering as documented. */
export function parseAnswer<T extends z.ZodType>(schema: T, body: unknown, what: string): z.infer<T> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new GatewayError("razorpay", "unavailable", `Razorpay answered an unexpected ${what}`);
  return parsed.data;
}
