import { Hono, type Context, type MiddlewareHandler } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { sha256Hex } from "#shared/core/tokens";
import { plan } from "#shared/db/plan";
import { sendStoreUnit } from "#shared/db/unit";
import { clientOf } from "#shared/limits/address";
import { passThrough, refusalMessage } from "#shared/limits/doors";
import { shopperKeys } from "#shared/limits/shopper";
import { agentProfileUrl, fetchAgentProfile } from "#shared/ucp/agent-profile";
import { verifyMessage, type SignatureFailure } from "#shared/ucp/signatures";
import { askedOf, checkoutRequest, type SessionAsked } from "#shared/ucp/checkout-input";
import { agentKeyPlan, agenticCheckoutOn, cancelSession, createSession, getSession, replaceSession, sessionNotFound, type AlsoWrite, type SessionAnswer } from "#shared/ucp/checkout-sessions";
import { UCP_REST_BASE } from "#shared/ucp/profile";
import { idempotencyKeyOf, isKeyInUse, keyPlan, REPLAYED_HEADER } from "#shared/pipeline/idempotency-key";
import { storeIdempotentAnswer } from "#shared/pipeline/statements";
import type { StorefrontEnv } from "./context";
import { limiterOf } from "./limits";
import { continuePath } from "./ucp-handoff";

/**
 * UCP checkout sessions over REST on every store's own domains (issue 26 item 3; docs/ucp.md):
 * `POST /api/ucp/checkout-sessions` (201), `GET` and `PUT /api/ucp/checkout-sessions/:id`,
 * `POST /api/ucp/checkout-sessions/:id/cancel`. Before any database work: the storefront's input guard (64 KB,
 * 32 levels, no NUL), the per-address limit of the `ucp` door (limits.tsx) and the store of the hostname.
 * Then the `UCP-Agent` header (its profile URL names the session's owner; the profile is fetched and read,
 * then held 5 minutes), the body's shape (zod), and the session (shared/ucp/checkout-sessions.ts). Protocol errors are
 * `{code, content}` with the specification's status; business problems are 200 with `messages`. While the
 * store's agentic checkout is off, every path answers 404.
 */
export const ucpSessions = new Hono<StorefrontEnv>();

type UcpContext = Context<StorefrontEnv>;

const BASE = `${UCP_REST_BASE}/checkout-sessions`;
const REQUEST_ID = /^[\x21-\x7E]{1,200}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const protocolError = (status: number, code: string, content: string, headers: Record<string, string> = {}) =>
  Response.json({ code, content }, { status, headers: { "cache-control": "no-store", ...headers } });

const notFound = () => Response.json(sessionNotFound(), { status: 404, headers: { "cache-control": "no-store" } });

/**
 * Every refusal on the way here (the guard, the limit, an unknown host, a path or method we do not serve)
 * answered in the protocol's shape, `{code, content}` with its HTTP status (and Retry-After on 429), not the
 * storefront's own error JSON; and every answer with its `Request-Id`. Mounted in front of everything else for
 * /api/ucp (app.tsx).
 */
export const ucpRefusals: MiddlewareHandler = async function ucpRefusals(c, next) {
  await next();
  // The agent's `Request-Id`, for its tracing, echoed on every answer (one we make when it sends none).
  const requestId = c.req.header("request-id");
  c.res.headers.set("request-id", requestId && REQUEST_ID.test(requestId) ? requestId : crypto.randomUUID());
  const res = c.res;
  if (res.status < 400 || !(res.headers.get("content-type") ?? "").startsWith("application/json")) return;
  const body = (await res.clone().json().catch(() => null)) as { json?: { code: string; message: string; data?: { reason?: unknown } } } | null;
  const error = body?.json;
  if (!error) return;
  const headers = new Headers(res.headers);
  headers.delete("content-length");
  headers.set("cache-control", "no-store");
  const code = typeof error.data?.reason === "string" ? error.data.reason : error.code.toLowerCase();
  c.res = undefined;
  c.res = new Response(JSON.stringify({ code, content: error.message }), { status: res.status, headers });
};

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
const profileKey = (url: string) => `https://ucp-agent-profiles.internal/${encodeURIComponent(url)}`;

/**
 * The agent's profile URL from `UCP-Agent` (required on every request), its profile fetched and read as the
 * specification says a business MUST (shared/ucp/agent-profile.ts: https to a public host, no redirects, 3 s,
 * 64 KB, our version), or the protocol's refusal (`invalid_profile_url` 400, `profile_unreachable` 424,
 * `profile_malformed` or `version_unsupported` 422).
 */
async function agentOf(c: UcpContext): Promise<string | Response> {
  const named = agentProfileUrl(c.req.header("ucp-agent") ?? null, false);
  if (!named.ok) return protocolError(named.status, named.code, named.content);
  const cache = caches.default;
  const held = await cache.match(profileKey(named.url));
  let keys: Record<string, unknown>[];
  if (held) keys = (await held.json()) as Record<string, unknown>[];
  else {
    const read = await fetchAgentProfile(named.url, { fetch: profileFetch(c), allowLocal: false });
    if (!read.ok) return protocolError(read.status, read.code, read.content);
    keys = read.profile.keys;
    await cache.put(profileKey(named.url), Response.json(keys, { headers: { "cache-control": `max-age=${PROFILE_TTL_SECONDS}` } }));
  }
  const refused = await signatureRefusal(c, keys);
  return refused ?? named.url;
}

/** Status of each signature failure (the specification's error codes). */
const SIGNATURE_STATUS: Record<SignatureFailure, number> = { signature_missing: 401, signature_invalid: 401, key_not_found: 401, digest_mismatch: 400, algorithm_unsupported: 400 };

/**
 * A request that carries a signature is verified as UCP says it MUST be (shared/ucp/signatures.ts: RFC 9421
 * over the required components, the body's Content-Digest, a key of the agent's profile); an unsigned request
 * is served (signing is a SHOULD; decision 0042). The URL is the one the agent signed: https on the store's host.
 */
async function signatureRefusal(c: UcpContext, keys: Record<string, unknown>[]): Promise<Response | null> {
  if (!c.req.header("signature") && !c.req.header("signature-input")) return null;
  const url = new URL(c.req.url);
  const body = c.req.method === "GET" || c.req.method === "HEAD" ? null : new Uint8Array(await c.req.arrayBuffer());
  const verified = await verifyMessage({ method: c.req.method, url: `https://${c.req.header("host") ?? c.var.hostname}${url.pathname}${url.search}`, headers: c.req.raw.headers, body }, async (kid) =>
    keys.find((k) => k["kid"] === kid && k["use"] !== "enc"),
  );
  return verified.ok ? null : protocolError(SIGNATURE_STATUS[verified.code], verified.code, verified.content);
}

/** The checkout object of a create or update, as the session keeps it, or a 400 naming the first wrong field. */
async function askedIn(c: UcpContext): Promise<SessionAsked | Response> {
  if ((c.req.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase() !== "application/json") {
    return protocolError(415, "unsupported_media_type", "Send the checkout object as application/json.");
  }
  let body: unknown;
  try {
    body = JSON.parse(await c.req.text());
  } catch {
    return protocolError(400, "invalid_request", "The body is not valid JSON.");
  }
  const parsed = checkoutRequest.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = issue.path.reduce<string>((at, p) => (typeof p === "number" ? `${at}[${p}]` : `${at}.${String(p)}`), "$");
    return protocolError(400, "invalid_request", `${path}: ${issue.message}`);
  }
  return askedOf(parsed.data);
}

/**
 * Discount codes sent in a session count as code attempts of the shopper's discount door, one per code,
 * per address (the same budget the cart's code form has): guessing codes through an agent is no faster than
 * through the page. An agent cannot pass a person check, so past a threshold asking for one it is refused.
 */
async function countCodes(c: UcpContext, asked: SessionAsked): Promise<Response | null> {
  const client = clientOf(c.req.header("cf-connecting-ip"));
  for (let i = 0; i < asked.discountCodes.length; i++) {
    const outcome = await passThrough(limiterOf(c.env), shopperKeys("discount", c.var.hostname, client), () => Promise.resolve("check" as const));
    if (outcome.allowed) continue;
    if ("checkRefused" in outcome) return protocolError(429, "rate_limited", "Too many discount codes were tried at this store just now; the buyer can enter the code on the checkout page.");
    return protocolError(429, "rate_limited", refusalMessage(outcome), { "retry-after": String(outcome.retryAfterSeconds) });
  }
  return null;
}

function answer(c: UcpContext, result: SessionAnswer, status: ContentfulStatusCode = 200): Response {
  c.header("cache-control", "no-store");
  if (result.ok) {
    // Where the buyer takes over (ucp-handoff.tsx), while the session is open.
    const open = result.checkout.status !== "completed" && result.checkout.status !== "canceled";
    const origin = `https://${c.var.hostname}`;
    const checkout = { ...result.checkout, links: result.checkout.links.map((l) => ({ ...l, url: `${origin}${l.url}` })) };
    return c.json(open ? { ...checkout, continue_url: `${origin}${continuePath(checkout.id)}` } : checkout, status);
  }
  if (result.why === "terminal") return protocolError(409, "invalid_state", "This checkout session is completed or canceled already and cannot change.");
  return notFound();
}

/** The common steps: a store closed by its password is closed to agents; the id a session id; the agent named and its profile read. */
async function preflight(c: UcpContext, id?: string): Promise<string | Response> {
  if (c.var.store.passwordCookieHash !== null) return protocolError(403, "password_protected", "This store is open only to people with its password; it does not sell to agents.");
  if (id !== undefined && !UUID.test(id)) return notFound();
  return agentOf(c);
}

/**
 * An `Idempotency-Key` on a create or an update (the specification's replay protection, with the API's keys:
 * shared/pipeline/idempotency-key.ts): per store and agent for 24 hours, over the operation, the session and
 * the raw body's SHA-256. The same key and body answer the first answer again (marked Idempotent-Replayed);
 * the same key with another body or operation is 409 and runs nothing. The key is taken by the change's own
 * unit, so two racing requests with one key meet there: the second runs nothing and is told to retry.
 */
async function idempotent(c: UcpContext, agent: string, operation: string, run: (also?: AlsoWrite) => Promise<Response>): Promise<Response> {
  const header = c.req.header("idempotency-key");
  if (header === undefined) return run();
  const key = idempotencyKeyOf(header)!;
  const owner = `agent:${await sha256Hex(agent)}`;
  const hash = await sha256Hex(`${operation}\n${await c.req.text()}`);
  const procedure = operation.split(" ")[0]!;
  const inUse = () => protocolError(409, "idempotency_in_progress", "A request with this Idempotency-Key is still being answered; retry in a few seconds.", { "retry-after": "2" });
  const seen = await sendStoreUnit(c.var.db, c.var.storeId, (q) => agentKeyPlan(q, owner, key));
  if (seen) {
    if (seen.procedure !== procedure || seen.hash !== hash) {
      return protocolError(409, "idempotency_conflict", "This Idempotency-Key was used for another request; send a new key for a new request (the same key repeats the first request only).");
    }
    if (seen.status === null || seen.response === null) return inUse();
    return new Response(seen.response, { status: seen.status, headers: { "content-type": "application/json", "cache-control": "no-store", [REPLAYED_HEADER]: "true" } });
  }
  const taken = { key, owner, procedure, hash };
  let res: Response;
  try {
    res = await run((q) => keyPlan(q, taken));
  } catch (e) {
    if (isKeyInUse(e)) return inUse();
    throw e;
  }
  if (res.status >= 200 && res.status < 300) {
    const response = await res.clone().text();
    await sendStoreUnit(c.var.db, c.var.storeId, (q) => plan([storeIdempotentAnswer(q, { ...taken, status: res.status, response })] as const, () => undefined), { readOnly: false });
  }
  return res;
}

/**
 * While the store's agentic checkout is off, every path answers 404, a request refused for its shape (a
 * missing UCP-Agent, a wrong body or key) too: the switch is read only for such a refusal (the sessions'
 * own units read it with their first statement).
 */
const offFirst: MiddlewareHandler<StorefrontEnv> = async function offFirst(c, next) {
  await next();
  if (![400, 401, 415, 422, 424].includes(c.res.status)) return;
  if (await agenticCheckoutOn(c.var.db, c.var.storeId)) return;
  c.res = undefined;
  c.res = notFound();
};
ucpSessions.use(BASE, offFirst);
ucpSessions.use(`${BASE}/*`, offFirst);

ucpSessions.post(BASE, async (c) => {
  const agent = await preflight(c);
  if (agent instanceof Response) return agent;
  const asked = await askedIn(c);
  if (asked instanceof Response) return asked;
  const limited = await countCodes(c, asked);
  if (limited) return limited;
  return idempotent(c, agent, "ucp.checkout.create", async (also) => answer(c, await createSession(c.var.db, c.var.storeId, agent, asked, also), 201));
});

ucpSessions.get(`${BASE}/:id`, async (c) => {
  const agent = await preflight(c, c.req.param("id"));
  if (agent instanceof Response) return agent;
  return answer(c, await getSession(c.var.db, c.var.storeId, agent, c.req.param("id")));
});

ucpSessions.put(`${BASE}/:id`, async (c) => {
  const agent = await preflight(c, c.req.param("id"));
  if (agent instanceof Response) return agent;
  const asked = await askedIn(c);
  if (asked instanceof Response) return asked;
  const limited = await countCodes(c, asked);
  if (limited) return limited;
  const id = c.req.param("id");
  return idempotent(c, agent, `ucp.checkout.update ${id}`, async (also) => answer(c, await replaceSession(c.var.db, c.var.storeId, agent, id, asked, also)));
});

ucpSessions.post(`${BASE}/:id/cancel`, async (c) => {
  const agent = await preflight(c, c.req.param("id"));
  if (agent instanceof Response) return agent;
  return answer(c, await cancelSession(c.var.db, c.var.storeId, agent, c.req.param("id")));
});
