/**
 * One request to Razorpay's API: Basic auth with key_id:key_secret, JSON both ways, a deadline, and every
 * failure turned into a GatewayError (Razorpay's error body is `{error: {code, description, field,
 * source, step, reason, metadata}}`).
 */
import { z } from "zod";
import { GatewayError, type GatewayErrorKind } from "./gateway";

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

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

/** Whole seconds from a Retry-After header (seconds or an HTTP date), or undefined. */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

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

/** Rejects with a timeout GatewayError after `ms`, aborting the request; `clear` stops the clock. */
function deadline(ms: number, controller: AbortController) {
  let timer: ReturnType<typeof setTimeout> | null = null;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new GatewayError("razorpay", "timeout", `Razorpay did not answer within ${ms} ms`));
    }, ms);
  });
  const clear = () => {
    if (timer !== null) clearTimeout(timer);
  };
  return { expired, clear };
}

export async function razorpayRequest(
  cfg: RazorpayHttpConfig,
  method: "GET" | "POST",
  path: string,
  options: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<unknown> {
  const controller = new AbortController();
  const clock = deadline(cfg.timeoutMs, controller);
  const headers: Record<string, string> = {
    authorization: `Basic ${btoa(`${cfg.keyId}:${cfg.keySecret}`)}`,
    accept: "application/json",
    ...options.headers,
  };
  if (options.body !== undefined) headers["content-type"] = "application/json";
  try {
    const response = await Promise.race([
      cfg.fetch(new URL(path, cfg.baseUrl).toString(), {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: controller.signal,
      }),
      clock.expired,
    ]);
    const text = await Promise.race([response.text(), clock.expired]);
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    if (!response.ok) throw errorFromResponse(response.status, body, response.headers);
    if (body === undefined) throw new GatewayError("razorpay", "unavailable", `Razorpay answered ${response.status} without JSON`, { status: response.status });
    return body;
  } catch (e) {
    if (e instanceof GatewayError) throw e;
    throw new GatewayError("razorpay", "unavailable", `Razorpay could not be reached: ${e instanceof Error ? e.message : String(e)}`);
  } finally {
    clock.clear();
  }
}

/** Parses a success body; a body of another shape means Razorpay is not answering as documented. */
export function parseAnswer<T extends z.ZodType>(schema: T, body: unknown, what: string): z.infer<T> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new GatewayError("razorpay", "unavailable", `Razorpay answered an unexpected ${what}`);
  return parsed.data;
}
