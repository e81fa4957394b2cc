/**
 * Cloudflare for SaaS custom hostnames (API v4, https://api.cloudflare.com/client/v4), with an API token
 * that may edit the zone's SSL and certificates:
 *   POST   /zones/<zone_id>/custom_hostnames            {hostname, ssl: {method: "http", type: "dv"}}
 *   GET    /zones/<zone_id>/custom_hostnames?hostname=  the one with that hostname, as a list
 *   DELETE /zones/<zone_id>/custom_hostnames/<id>       the hostname and its certificates
 * Every answer is the envelope `{success, errors: [{code, message}], messages, result}`. HTTP DCV: the
 * certificate is issued once the merchant's CNAME points at the zone's fallback origin.
 */
import { z } from "zod";
import { exchangeJson, retryAfterSeconds, type FetchLike } from "#shared/core/exchange";
import { RouterError, type CustomHostname, type DomainRouter, type RouterErrorKind } from "./router";

export const CLOUDFLARE_API = "https://api.cloudflare.com/client/v4";
/** Cloudflare's error code for a hostname the zone already has. */
const DUPLICATE_HOSTNAME = 1406;

export interface CloudflareRouterConfig {
  zoneId: string;
  apiToken: string;
  /** Default Cloudflare's API; tests point it at a local server. */
  baseUrl?: string;
  fetch?: FetchLike;
  /** Default 10 000. */
  timeoutMs?: number;
}

const envelope = z.object({
  success: z.boolean(),
  errors: z.array(z.object({ code: z.number().int().optional(), message: z.string().optional() })).default([]),
  result: z.unknown().optional(),
});

const hostnameResult = z.object({
  id: z.string().min(1),
  hostname: z.string(),
  status: z.string().optional(),
  ssl: z.object({ status: z.string().optional() }).nullish(),
  verification_errors: z.array(z.unknown()).optional(),
});

function toCustomHostname(r: z.infer<typeof hostnameResult>): CustomHostname {
  return {
    id: r.id,
    hostname: r.hostname,
    status: r.status ?? "pending",
    sslStatus: r.ssl?.status ?? null,
    verificationErrors: (r.verification_errors ?? []).map((e) => (typeof e === "string" ? e : JSON.stringify(e))),
  };
}

export function errorFromResponse(status: number, body: unknown, headers: Headers): RouterError {
  const parsed = envelope.safeParse(body);
  const first = parsed.success ? parsed.data.errors[0] : undefined;
  const details = { status, code: first?.code, retryAfterSeconds: retryAfterSeconds(headers.get("retry-after")) };
  const message = `Cloudflare ${status}${first ? `: ${first.code ?? ""} ${first.message ?? ""}`.trimEnd() : ""}`;
  let kind: RouterErrorKind;
  if (status === 401 || status === 403) kind = "auth";
  else if (status === 429) kind = "rate_limited";
  else if (status >= 500) kind = "unavailable";
  else if (status === 404) kind = "not_found";
  else if (status === 409 || first?.code === DUPLICATE_HOSTNAME) kind = "conflict";
  else if (status >= 400) kind = "bad_request";
  else kind = "unavailable"; // a 2xx that says it failed is not the API as documented
  return new RouterError("cloudflare", kind, message, details);
}

export function cloudflareRouter(config: CloudflareRouterConfig): DomainRouter {
  const base = `${(config.baseUrl ?? CLOUDFLARE_API).replace(/\/$/, "")}/zones/${encodeURIComponent(config.zoneId)}/custom_hostnames`;
  const timeoutMs = config.timeoutMs ?? 10_000;

  async function call(method: "GET" | "POST" | "DELETE", url: string, body?: unknown): Promise<unknown> {
    const { response, body: answered } = await exchangeJson(
      {
        fetch: config.fetch ?? ((input, init) => fetch(input, init)),
        timeoutMs,
        timeout: () => new RouterError("cloudflare", "timeout", `Cloudflare did not answer within ${timeoutMs} ms`),
        unreachable: (message) => new RouterError("cloudflare", "unavailable", `Cloudflare could not be reached: ${message}`),
      },
      url,
      {
        method,
        headers: { authorization: `Bearer ${config.apiToken}`, accept: "application/json", ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      },
    );
    const parsed = envelope.safeParse(answered);
    if (!response.ok || !parsed.success || !parsed.data.success) throw errorFromResponse(response.status, answered, response.headers);
    return parsed.data.result;
  }

  function parse<T extends z.ZodType>(schema: T, value: unknown, what: string): z.infer<T> {
    const parsed = schema.safeParse(value);
    if (!parsed.success) throw new RouterError("cloudflare", "unavailable", `Cloudflare answered an unexpected ${what}`);
    return parsed.data;
  }

  return {
    provider: "cloudflare",

    async find(hostname) {
      const result = await call("GET", `${base}?hostname=${encodeURIComponent(hostname)}`);
      const list = parse(z.array(hostnameResult), result, "custom hostname list");
      const match = list.find((h) => h.hostname.toLowerCase() === hostname.toLowerCase());
      return match ? toCustomHostname(match) : null;
    },

    async create(hostname) {
      const result = await call("POST", base, { hostname, ssl: { method: "http", type: "dv" } });
      return toCustomHostname(parse(hostnameResult, result, "custom hostname"));
    },

    async remove(id) {
      await call("DELETE", `${base}/${encodeURIComponent(id)}`);
    },
  };
}
