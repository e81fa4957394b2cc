/**
 * One request to Shiprocket's API (https://apiv2.shiprocket.in/v1/external): a bearer token from
 * `POST /auth/login` kept in the isolate (refreshed a day before its 10 days run out, and once after a 401),
 * JSON both ways, a deadline on every call, and every failure turned into a CourierError. Shiprocket's error
 * body is `{message, status_code}`, with `errors: {field: [message]}` on a 422.
 */
import { z } from "zod";
import { exchangeJson, retryAfterSeconds, type FetchLike } from "#shared/core/exchange";
import { CourierError, type CourierErrorKind } from "./courier";

export type { FetchLike };

export const SHIPROCKET_API = "https://apiv2.shiprocket.in";
const DAY_MS = 24 * 60 * 60 * 1000;
/** Shiprocket's tokens last 10 days. */
export const TOKEN_LIFETIME_MS = 10 * DAY_MS;

export interface ShiprocketHttpConfig {
  email: string;
  password: string;
  baseUrl: string;
  fetch: FetchLike;
  timeoutMs: number;
  now: () => number;
  tokens: ShiprocketTokens;
}

const errorBody = z.object({
  message: z.string().optional(),
  status_code: z.number().int().optional(),
  errors: z.record(z.string(), z.union([z.array(z.string()), z.string()])).optional(),
});

// Shiprocket names its own fields; a 4xx names ours (CreateShipmentInput's paths).
const FIELD_OF: Readonly<Record<string, string>> = {
  order_id: "shipmentId",
  pickup_location: "pickup.name",
  billing_customer_name: "shipTo.name",
  billing_address: "shipTo.line1",
  billing_address_2: "shipTo.line2",
  billing_city: "shipTo.city",
  billing_state: "shipTo.state",
  billing_pincode: "shipTo.postalCode",
  billing_country: "shipTo.country",
  billing_email: "shipTo.email",
  billing_phone: "shipTo.phone",
  order_items: "items",
  sub_total: "value",
  payment_method: "paymentMode",
  weight: "weightGrams",
  length: "dimensionsCm.length",
  breadth: "dimensionsCm.breadth",
  height: "dimensionsCm.height",
  shipment_id: "providerRef",
  awbs: "awb",
};

export function ourField(shiprocketField: string): string {
  const [head, ...rest] = shiprocketField.split(".");
  const mapped = FIELD_OF[head!] ?? head!;
  return [mapped, ...rest].join(".");
}

// How Shiprocket words "no courier delivers there" (create, AWB assignment, serviceability).
const NOT_SERVICEABLE = /not serviceable|no courier|non[- ]?serviceable|serviceability/i;

/** A refusal Shiprocket worded (a 4xx, or a 200 that carries an error) as the port's error. */
export function refusal(message: string, details: { status?: number; field?: string } = {}): CourierError {
  const kind: CourierErrorKind = NOT_SERVICEABLE.test(message) ? "not_serviceable" : "bad_request";
  return new CourierError("shiprocket", kind, `Shiprocket: ${message}`, details);
}

export function errorFromResponse(status: number, body: unknown, headers: Headers, what = "Shiprocket"): CourierError {
  const parsed = errorBody.safeParse(body);
  const e = parsed.success ? parsed.data : {};
  const firstField = e.errors ? Object.keys(e.errors)[0] : undefined;
  const firstError = firstField ? [e.errors![firstField]].flat()[0] : undefined;
  const message = [e.message, firstError].filter(Boolean).join(" ") || `HTTP ${status}`;
  const details = { status, retryAfterSeconds: retryAfterSeconds(headers.get("retry-after")) };
  let kind: CourierErrorKind | undefined;
  if (status === 401 || status === 403) kind = "auth";
  else if (status === 429) kind = "rate_limited";
  else if (status >= 500) kind = "unavailable";
  if (kind) return new CourierError("shiprocket", kind, `${what} ${status}: ${message}`, details);
  return refusal(message, { status, ...(firstField ? { field: ourField(firstField) } : {}) });
}

/** One exchange with Shiprocket within the deadline; no answer is a CourierError (timeout or unavailable). */
function exchange(cfg: ShiprocketHttpConfig, url: string, init: RequestInit): Promise<{ response: Response; body: unknown }> {
  return exchangeJson(
    {
      fetch: cfg.fetch,
      timeoutMs: cfg.timeoutMs,
      timeout: () => new CourierError("shiprocket", "timeout", `Shiprocket did not answer within ${cfg.timeoutMs} ms`),
      unreachable: (message) => new CourierError("shiprocket", "unavailable", `Shiprocket could not be reached: ${message}`),
    },
    url,
    init,
  );
}

const loginAnswer = z.object({ token: z.string().min(1) });

/** Seconds-since-epoch `exp` of a JWT, when the token is one that says. */
function jwtExpiry(token: string): number | undefined {
  const payload = token.split(".")[1];
  if (!payload) return undefined;
  try {
    const json: unknown = JSON.parse(atob(payload.replace(/-/g, "+").replace(/_/g, "/")));
    const exp = z.object({ exp: z.number() }).safeParse(json);
    return exp.success ? exp.data.exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Bearer tokens kept in the isolate, one per account (base URL and email), so that every store and request
 * of an isolate shares one login. Concurrent callers wait for the same login.
 */
export class ShiprocketTokens {
  private readonly held = new Map<string, { token: string; refreshAt: number }>();
  private readonly pending = new Map<string, Promise<string>>();
  /** How many logins this cache has made (for tests and logs). */
  logins = 0;

  private key(cfg: ShiprocketHttpConfig): string {
    return `${cfg.baseUrl}\n${cfg.email}`;
  }

  async get(cfg: ShiprocketHttpConfig): Promise<string> {
    const key = this.key(cfg);
    const held = this.held.get(key);
    if (held && cfg.now() < held.refreshAt) return held.token;
    const inFlight = this.pending.get(key);
    if (inFlight) return inFlight;
    const login = this.login(cfg).finally(() => this.pending.delete(key));
    this.pending.set(key, login);
    return login;
  }

  /** Forgets a token Shiprocket refused, unless a newer one has replaced it already. */
  drop(cfg: ShiprocketHttpConfig, token: string): void {
    const key = this.key(cfg);
    if (this.held.get(key)?.token === token) this.held.delete(key);
  }

  private async login(cfg: ShiprocketHttpConfig): Promise<string> {
    this.logins++;
    const issuedAt = cfg.now();
    const { response, body } = await exchange(cfg, new URL("/v1/external/auth/login", cfg.baseUrl).toString(), {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ email: cfg.email, password: cfg.password }),
    });
    if (!response.ok) {
      const e = errorFromResponse(response.status, body, response.headers, "Shiprocket login");
      // A refused login is the API user's email or password, whatever status Shiprocket chose for it.
      if (e.kind === "bad_request" || e.kind === "not_serviceable") throw new CourierError("shiprocket", "auth", `Shiprocket login refused: ${e.message}`, { status: response.status });
      throw e;
    }
    const parsed = loginAnswer.safeParse(body);
    if (!parsed.success) throw new CourierError("shiprocket", "unavailable", "Shiprocket answered an unexpected login");
    const token = parsed.data.token;
    const expiresAt = jwtExpiry(token) ?? issuedAt + TOKEN_LIFETIME_MS;
    this.held.set(this.key(cfg), { token, refreshAt: expiresAt - DAY_MS });
    return token;
  }
}

/** Tokens shared by every adapter of this isolate. */
export const isolateTokens = new ShiprocketTokens();

/**
 * A call with the account's token; a 401 (the token expired or was revoked early) logs in again once and
 * repeats the call. The 2xx body (undefined for a 204), or a CourierError.
 */
export async function shiprocketRequest(cfg: ShiprocketHttpConfig, method: "GET" | "POST", path: string, body?: unknown): Promise<unknown> {
  const send = async (token: string) =>
    exchange(cfg, new URL(path, cfg.baseUrl).toString(), {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        accept: "application/json",
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const token = await cfg.tokens.get(cfg);
  let answer = await send(token);
  if (answer.response.status === 401) {
    cfg.tokens.drop(cfg, token);
    answer = await send(await cfg.tokens.get(cfg));
  }
  const { response, body: answered } = answer;
  if (!response.ok) throw errorFromResponse(response.status, answered, response.headers);
  // 204 (a cancel may answer so) has no body; any other success without JSON is not Shiprocket as documented.
  if (answered === undefined && response.status !== 204) throw new CourierError("shiprocket", "unavailable", `Shiprocket answered ${response.status} without JSON`, { status: response.status });
  return answered;
}

/** Parses a success body; a body of another shape means Shiprocket is not answering as documented. */
export function parseAnswer<T extends z.ZodType>(schema: T, body: unknown, what: string): z.infer<T> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new CourierError("shiprocket", "unavailable", `Shiprocket answered an unexpected ${what}`);
  return parsed.data;
}
