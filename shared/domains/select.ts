/**
 * Which DNS resolver and which custom-hostname router the deployment uses, from the Worker's configuration
 * (wrangler vars and `wrangler secret put`; docs/domains.md). The local adapters are the default, as
 * `npm run dev` wants, and are refused unless APP_ENV is development or test.
 */
import { z } from "zod";
import type { DnsResolver } from "./dns";
import { localDns } from "./dns-local";
import { dohDns } from "./dns-doh";
import type { FetchLike } from "#shared/core/exchange";
import { localKvOf } from "./local-kv";
import type { DomainRouter } from "./router";
import { cloudflareRouter } from "./router-cloudflare";
import { localRouter, parseLocalRouterBehaviour, type LocalRouterBehaviour } from "./router-local";

export type DnsConfig = { provider: "local" } | { provider: "cloudflare" };
export type RouterConfig = { provider: "local"; behaviour: LocalRouterBehaviour } | { provider: "cloudflare"; zoneId: string; apiToken: string };

const dnsSchema = z.object({ DOMAIN_DNS: z.enum(["local", "cloudflare"], { error: "must be local or cloudflare" }) });

const routerSchema = z.discriminatedUnion("DOMAIN_ROUTER", [
  z.object({ DOMAIN_ROUTER: z.literal("local"), LOCAL_ROUTER_BEHAVIOUR: z.string().optional() }),
  z.object({
    DOMAIN_ROUTER: z.literal("cloudflare"),
    CLOUDFLARE_ZONE_ID: z.string({ error: "is required" }).regex(/^[0-9a-f]{32}$/, "must be the zone's id (32 hex characters, the zone's Overview page)"),
    CLOUDFLARE_API_TOKEN: z.string({ error: "is required" }).min(20, "must be an API token (SSL and Certificates: Edit on the zone)"),
  }),
]);

function issues(what: string, error: z.ZodError): Error {
  return new Error(`${what} configuration: ${error.issues.map((i) => `${i.path.join(".") || "DOMAIN_ROUTER"}: ${i.message}`).join("; ")}`);
}

// Local DNS verifies any domain a developer clicks, and the local router routes nothing: a production
// deployment that fell back to them would hand hostnames to whoever asks. APP_ENV defaults to production.
function refuseOutsideDevelopment(env: Record<string, unknown>, what: string, variable: string, adapter: string): void {
  if (env.APP_ENV !== "development" && env.APP_ENV !== "test") throw new Error(`${what} configuration: ${variable}: the local ${adapter} is for development and tests only`);
}

/** The deployment's DNS configuration; throws naming the variable that is wrong. */
export function dnsConfigFromEnv(env: Record<string, unknown>): DnsConfig {
  const parsed = dnsSchema.safeParse({ DOMAIN_DNS: "local", ...env });
  if (!parsed.success) throw issues("Domain DNS", parsed.error);
  if (parsed.data.DOMAIN_DNS === "local") refuseOutsideDevelopment(env, "Domain DNS", "DOMAIN_DNS", "DNS");
  return { provider: parsed.data.DOMAIN_DNS };
}

/** The deployment's router configuration; throws naming the variable that is missing or wrong. */
export function routerConfigFromEnv(env: Record<string, unknown>): RouterConfig {
  const parsed = routerSchema.safeParse({ DOMAIN_ROUTER: "local", ...env });
  if (!parsed.success) throw issues("Domain router", parsed.error);
  const e = parsed.data;
  if (e.DOMAIN_ROUTER === "local") {
    refuseOutsideDevelopment(env, "Domain router", "DOMAIN_ROUTER", "router");
    return { provider: "local", behaviour: parseLocalRouterBehaviour(e.LOCAL_ROUTER_BEHAVIOUR) };
  }
  return { provider: "cloudflare", zoneId: e.CLOUDFLARE_ZONE_ID, apiToken: e.CLOUDFLARE_API_TOKEN };
}

export interface AdapterOptions {
  fetch?: FetchLike;
  /** The DoH endpoint or Cloudflare's API base, for tests against local servers. */
  url?: string;
  timeoutMs?: number;
}

/** The resolver of `config`; the local one keeps its records in `env`'s HOSTS namespace. */
export function dnsResolverFor(config: DnsConfig, env: object, options: AdapterOptions = {}): DnsResolver {
  if (config.provider === "local") return localDns(localKvOf(env, "Domain DNS"));
  return dohDns({ url: options.url, fetch: options.fetch, timeoutMs: options.timeoutMs });
}

/** The router of `config`; the local one keeps its hostnames in `env`'s HOSTS namespace. */
export function domainRouterFor(config: RouterConfig, env: object, options: AdapterOptions = {}): DomainRouter {
  if (config.provider === "local") return localRouter(localKvOf(env, "Domain router"), config.behaviour);
  return cloudflareRouter({ zoneId: config.zoneId, apiToken: config.apiToken, baseUrl: options.url, fetch: options.fetch, timeoutMs: options.timeoutMs });
}
