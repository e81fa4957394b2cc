import type { Context } from "hono";
import { sha256Hex } from "#shared/core/tokens";
import { clientOf } from "#shared/limits/address";
import { passThrough, refusalMessage } from "#shared/limits/doors";
import { shopperKeys } from "#shared/limits/shopper";
import { plan } from "#shared/db/plan";
import { sendStoreUnit } from "#shared/db/unit";
import { isKeyInUse, keyPlan, ownerKeyPlan } from "#shared/pipeline/idempotency-key";
import { storeIdempotentAnswer } from "#shared/pipeline/statements";
import { appUrlProblem } from "#shared/apps/url";
import { agentProfileUrl, fetchAgentProfile } from "#shared/ucp/agent-profile";
import type { AlsoWrite, SessionAnswer } from "#shared/ucp/checkout-sessions";
import type { CompleteDeps } from "#shared/ucp/checkout-complete";
import { presentCheckout, type PresentedCheckout } from "#shared/ucp/checkout-present";
import { ucpSigningFromEnv } from "#shared/ucp/store-keys";
import { verifyMessage, type SignatureFailure } from "#shared/ucp/signatures";
import type { StorefrontEnv } from "./context";
import { limiterOf } from "./limits";

/**
 * Who the agent is, for both of UCP's transports on a store's domain (REST: ./ucp.ts; MCP: the checkout
 * tools of ./storefront-mcp.ts): its platform profile named by `UCP-Agent` (REST's header, MCP's
 * `meta["ucp-agent"].profile`), fetched and read as the specification says a business MUST, held 5 minutes;
 * a request's signature verified with that profile's keys when one is sent; and the agent's
 * `Idempotency-Key`, kept with the API's keys. Each answers a transport-neutral refusal
 * (`{status, code, content}`), which REST sends as `{code, content}` and MCP as a JSON-RPC error.
 */
type UcpContext = Context<StorefrontEnv>;

/** A protocol refusal: the HTTP status, the specification's error code and words for the agent's developer. */
export interface UcpRefusal {
  status: number;
  code: string;
  content: string;
  headers?: Record<string, string>;
}

/** The agent a request comes from: its profile URL (the owner of its sessions) and where it takes order updates. */
export interface Agent {
  url: string;
  webhookUrl?: string | undefined;
}

const refusal = (status: number, code: string, content: string, headers?: Record<string, string>): UcpRefusal => ({ status, code, content, ...(headers ? { headers } : {}) });
export const isRefusal = (v: unknown): v is UcpRefusal => typeof v === "object" && v !== null && "code" in v && "status" in v && "content" in v;

type ProfileFetch = (url: string, init: RequestInit) => Promise<Response>;

/**
 * How agents' profiles are fetched: the Worker's own fetch. In development and test a binding
 * `UCP_AGENT_FETCH` (a Fetcher) may stand in for the internet, as a local agent platform; it is ignored
 * everywhere else.
 */
function profileFetch(c: UcpContext): ProfileFetch {
  const local = (c.env as { UCP_AGENT_FETCH?: { fetch: ProfileFetch } }).UCP_AGENT_FETCH;
  const localEnv = c.var.config.APP_ENV === "development" || c.var.config.APP_ENV === "test";
  if (local && localEnv) return (url, init) => local.fetch(url, init);
  return (url, init) => fetch(url, init);
}

/** A profile read well is held 5 minutes per URL in the edge cache (the specification asks for at least 60 s). */
const PROFILE_TTL_SECONDS = 300;
const profileKey = (url: string) => `https://ucp-agent-profiles.internal/v2/${encodeURIComponent(url)}`;

interface HeldProfile {
  keys: Record<string, unknown>[];
  webhookUrl?: string;
}

/**
 * The agent named by a `UCP-Agent` header value (`profile="https://…"`), its profile fetched and read
 * (shared/ucp/agent-profile.ts: https to a public host, no redirects, 3 s, 64 KB, our version), and the
 * request's signature checked against its keys; or the protocol's refusal (`invalid_profile_url` 400,
 * `profile_unreachable` 424, `profile_malformed` or `version_unsupported` 422, a signature's code).
 */
export async function agentOf(c: UcpContext, header: string | null): Promise<Agent | UcpRefusal> {
  // With APP_ENV development a profile on the developer's machine (http, loopback, any port) is taken too: the
  // worker's local agent platform (workers/worker/agent-platform.tsx). Tests and production take public https only.
  const allowLocal = c.var.config.APP_ENV === "development";
  const named = agentProfileUrl(header, allowLocal);
  if (!named.ok) return refusal(named.status, named.code, named.content);
  const cache = caches.default;
  const held = await cache.match(profileKey(named.url));
  let profile: HeldProfile;
  if (held) profile = (await held.json()) as HeldProfile;
  else {
    const read = await fetchAgentProfile(named.url, { fetch: profileFetch(c), allowLocal });
    if (!read.ok) return refusal(read.status, read.code, read.content);
    // Order updates go only where an app's webhooks may (the apps' URL policy); another URL is not kept.
    const hook = read.profile.webhookUrl;
    profile = { keys: read.profile.keys, ...(hook && appUrlProblem(hook, allowLocal) === undefined ? { webhookUrl: hook } : {}) };
    await cache.put(profileKey(named.url), Response.json(profile, { headers: { "cache-control": `max-age=${PROFILE_TTL_SECONDS}` } }));
  }
  const refused = await signatureRefusal(c, profile.keys);
  return refused ?? { url: named.url, webhookUrl: profile.webhookUrl };
}

/** Status of each signature failure (the specification's error codes). */
const SIGNATURE_STATUS: Record<SignatureFailure, number> = { signature_missing: 401, signature_invalid: 401, key_not_found: 401, digest_mismatch: 400, algorithm_unsupported: 400 };

/**
 * A request that carries a signature is verified as UCP says it MUST be (shared/ucp/signatures.ts: RFC 9421
 * over the required components, the body's Content-Digest, a key of the agent's profile); an unsigned request
 * is served (signing is a SHOULD; decision 0042). The URL is the one the agent signed: https on the store's host.
 */
async function signatureRefusal(c: UcpContext, keys: Record<string, unknown>[]): Promise<UcpRefusal | null> {
  if (!c.req.header("signature") && !c.req.header("signature-input")) return null;
  const url = new URL(c.req.url);
  const body = c.req.method === "GET" || c.req.method === "HEAD" ? null : new Uint8Array(await c.req.arrayBuffer());
  const verified = await verifyMessage({ method: c.req.method, url: `https://${c.req.header("host") ?? c.var.hostname}${url.pathname}${url.search}`, headers: c.req.raw.headers, body }, async (kid) =>
    keys.find((k) => k["kid"] === kid && k["use"] !== "enc"),
  );
  return verified.ok ? null : refusal(SIGNATURE_STATUS[verified.code], verified.code, verified.content);
}

/**
 * Discount codes sent in a session count as code attempts of the shopper's discount door, one per code,
 * per address (the same budget the cart's code form has): guessing codes through an agent is no faster than
 * through the page. An agent cannot pass a person check, so past a threshold asking for one it is refused.
 */
export async function codesRefusal(c: UcpContext, codes: number): Promise<UcpRefusal | null> {
  const client = clientOf(c.req.header("cf-connecting-ip"));
  for (let i = 0; i < codes; i++) {
    const outcome = await passThrough(limiterOf(c.env), shopperKeys("discount", c.var.hostname, client), () => Promise.resolve("check" as const));
    if (outcome.allowed) continue;
    if ("checkRefused" in outcome) return refusal(429, "rate_limited", "Too many discount codes were tried at this store just now; the buyer can enter the code on the checkout page.");
    return refusal(429, "rate_limited", refusalMessage(outcome), { "retry-after": String(outcome.retryAfterSeconds) });
  }
  return null;
}

/** An answer as it is kept for a replay: the status and the body's bytes. */
export interface KeptAnswer {
  status: number;
  body: string;
}

export type Keyed<T> = { replayed: false; value: T } | { replayed: true; answer: KeptAnswer } | UcpRefusal;

/**
 * An agent's `Idempotency-Key` on a change (the specification's replay protection, with the API's keys:
 * shared/pipeline/idempotency-key.ts): per store and agent for 24 hours, over the operation (with the
 * session's id) and the request's bytes. The same key and request answer the first answer again; the same
 * key with another request or operation is 409 and runs nothing. The key is taken by the change's own unit,
 * so two racing requests with one key meet there: the second runs nothing and is told to retry. `keep` says
 * what of a result is kept (null: nothing, as for a refusal, so the key stays usable).
 */
export async function withAgentKey<T>(
  c: UcpContext,
  o: { agent: Agent; key: string; operation: string; request: string },
  run: (also: AlsoWrite) => Promise<T>,
  keep: (value: T) => KeptAnswer | null | Promise<KeptAnswer | null>,
): Promise<Keyed<T>> {
  const owner = `agent:${await sha256Hex(o.agent.url)}`;
  const hash = await sha256Hex(`${o.operation}\n${o.request}`);
  const procedure = o.operation.split(" ")[0]!;
  const inUse = () => refusal(409, "idempotency_in_progress", "A request with this Idempotency-Key is still being answered; retry in a few seconds.", { "retry-after": "2" });
  const seen = await sendStoreUnit(c.var.db, c.var.storeId, (q) => ownerKeyPlan(q, owner, o.key));
  if (seen) {
    if (seen.procedure !== procedure || seen.hash !== hash) {
      return refusal(409, "idempotency_conflict", "This Idempotency-Key was used for another request; send a new key for a new request (the same key repeats the first request only).");
    }
    if (seen.status === null || seen.response === null) return inUse();
    return { replayed: true, answer: { status: seen.status, body: seen.response } };
  }
  const taken = { key: o.key, owner, procedure, hash };
  let value: T;
  try {
    value = await run((q) => keyPlan(q, taken));
  } catch (e) {
    if (isKeyInUse(e)) return inUse();
    throw e;
  }
  const kept = await keep(value);
  if (kept) {
    await sendStoreUnit(c.var.db, c.var.storeId, (q) => plan([storeIdempotentAnswer(q, { ...taken, status: kept.status, response: kept.body })] as const, () => undefined), { readOnly: false });
  }
  return { replayed: false, value };
}

/**
 * The store's origin in what agents read: https on the hostname asked (the specification wants absolute https
 * URLs). With APP_ENV development, the origin the request came to (http and the dev server's port), so the
 * links work on the developer's machine.
 */
export function agentFacingOrigin(c: UcpContext): string {
  if (c.var.config.APP_ENV !== "development") return `https://${c.var.hostname}`;
  const url = new URL(c.req.url);
  return `${url.protocol}//${c.req.header("host") ?? url.host}`;
}

/** A session's answer as the agent reads it on the domain it reached (shared/ucp/checkout-present.ts). */
export function presented(c: UcpContext, answer: Extract<SessionAnswer, { ok: true }>): Promise<PresentedCheckout> {
  return presentCheckout(answer, { origin: agentFacingOrigin(c), storeId: c.var.storeId, rootSecret: ucpSigningFromEnv(c.env as unknown as Record<string, unknown>).rootSecret });
}

/** What completing a session needs of this request (shared/ucp/checkout-complete.ts). */
export async function completeDeps(c: UcpContext): Promise<CompleteDeps> {
  const { provider } = await c.var.providers.storeGateway(c.var.storeId);
  return { db: c.var.db, storeId: c.var.storeId, rootSecret: ucpSigningFromEnv(c.env as unknown as Record<string, unknown>).rootSecret, provider, ip: c.req.header("cf-connecting-ip") ?? null };
}

/** Why a session operation was refused, as the protocol's refusal (null: the session's own 404 answer). */
export function sessionRefusal(why: Extract<SessionAnswer, { ok: false }>["why"]): UcpRefusal | null {
  if (why === "terminal") return refusal(409, "invalid_state", "This checkout session is completed or canceled already and cannot change.");
  if (why === "placed") return refusal(409, "invalid_state", "This checkout session placed its order already and cannot change: the buyer pays on the order's page (continue_url), or cancel the session to cancel the unpaid order.");
  return null;
}
