import { Hono, type Context, type MiddlewareHandler } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { askedOf, checkoutRequest, jsonPathOf, type SessionAsked } from "#shared/ucp/checkout-input";
import { agenticCheckoutOn, cancelSession, createSession, getSession, replaceSession, sessionNotFound, type AlsoWrite, type SessionAnswer } from "#shared/ucp/checkout-sessions";
import { UCP_REST_BASE } from "#shared/ucp/profile";
import { idempotencyKeyOf, REPLAYED_HEADER } from "#shared/pipeline/idempotency-key";
import type { StorefrontEnv } from "./context";
import { agentOf, codesRefusal, completeDeps, isRefusal, presented, sessionRefusal, withAgentKey, type Agent, type UcpRefusal } from "./ucp-agent";
import { completeSession } from "#shared/ucp/checkout-complete";
import { isUuid } from "#shared/db/ids";

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

const protocolError = (status: number, code: string, content: string, headers: Record<string, string> = {}) =>
  Response.json({ code, content }, { status, headers: { "cache-control": "no-store", ...headers } });

const refused = (r: UcpRefusal) => protocolError(r.status, r.code, r.content, r.headers);

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

/** The request's JSON body (415 unless it is application/json; 400 when it does not parse), or its refusal. */
async function jsonBody(c: UcpContext): Promise<{ body: unknown } | Response> {
  if ((c.req.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase() !== "application/json") {
    return protocolError(415, "unsupported_media_type", "Send the checkout object as application/json.");
  }
  try {
    return { body: JSON.parse(await c.req.text()) as unknown };
  } catch {
    return protocolError(400, "invalid_request", "The body is not valid JSON.");
  }
}

/** The checkout object of a create or update, as the session keeps it, or a 400 naming the first wrong field. */
async function askedIn(c: UcpContext): Promise<SessionAsked | Response> {
  const read = await jsonBody(c);
  if (read instanceof Response) return read;
  const parsed = checkoutRequest.safeParse(read.body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return protocolError(400, "invalid_request", `${jsonPathOf(issue.path)}: ${issue.message}`);
  }
  return askedOf(parsed.data);
}

/** Discount codes sent in a session count at the discount door (./ucp-agent.ts `codesRefusal`). */
async function countCodes(c: UcpContext, asked: SessionAsked): Promise<Response | null> {
  const limited = await codesRefusal(c, asked.discountCodes.length);
  return limited ? refused(limited) : null;
}

async function answer(c: UcpContext, result: SessionAnswer, status: ContentfulStatusCode = 200): Promise<Response> {
  c.header("cache-control", "no-store");
  if (result.ok) return c.json(await presented(c, result), status);
  const why = sessionRefusal(result.why);
  return why ? refused(why) : notFound();
}

/** The common steps: a store closed by its password is closed to agents; the id a session id; the agent named and its profile read. */
async function preflight(c: UcpContext, id?: string): Promise<Agent | Response> {
  if (c.var.store.passwordCookieHash !== null) return protocolError(403, "password_protected", "This store is open only to people with its password; it does not sell to agents.");
  if (id !== undefined && !isUuid(id)) return notFound();
  const agent = await agentOf(c, c.req.header("ucp-agent") ?? null);
  return isRefusal(agent) ? refused(agent) : agent;
}

/**
 * An `Idempotency-Key` on a change (./ucp-agent.ts `withAgentKey`): the same key and body answer the first
 * answer again (marked Idempotent-Replayed); another body or operation is 409 and runs nothing. Every answer
 * of the operation is kept (a success, a finished session's 409, a 404), so a retry hears the same; a
 * refusal before it (the body's shape, the agent) takes no key.
 */
async function idempotent(c: UcpContext, agent: Agent, operation: string, run: (also?: AlsoWrite) => Promise<Response>): Promise<Response> {
  const header = c.req.header("idempotency-key");
  if (header === undefined) return run();
  const kept = await withAgentKey(c, { agent, key: idempotencyKeyOf(header)!, operation, request: await c.req.text() }, run, async (res) =>
    res.status < 500 ? { status: res.status, body: await res.clone().text() } : null,
  );
  if (isRefusal(kept)) return refused(kept);
  if (kept.replayed) return new Response(kept.answer.body, { status: kept.answer.status, headers: { "content-type": "application/json", "cache-control": "no-store", [REPLAYED_HEADER]: "true" } });
  return kept.value;
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
  return idempotent(c, agent, "ucp.checkout.create", async (also) => answer(c, await createSession(c.var.db, c.var.storeId, agent.url, asked, also, c.var.hostname), 201));
});

ucpSessions.get(`${BASE}/:id`, async (c) => {
  const agent = await preflight(c, c.req.param("id"));
  if (agent instanceof Response) return agent;
  return answer(c, await getSession(c.var.db, c.var.storeId, agent.url, c.req.param("id")));
});

ucpSessions.put(`${BASE}/:id`, async (c) => {
  const agent = await preflight(c, c.req.param("id"));
  if (agent instanceof Response) return agent;
  const asked = await askedIn(c);
  if (asked instanceof Response) return asked;
  const limited = await countCodes(c, asked);
  if (limited) return limited;
  const id = c.req.param("id");
  return idempotent(c, agent, `ucp.checkout.update ${id}`, async (also) => answer(c, await replaceSession(c.var.db, c.var.storeId, agent.url, id, asked, also)));
});

ucpSessions.post(`${BASE}/:id/cancel`, async (c) => {
  const agent = await preflight(c, c.req.param("id"));
  if (agent instanceof Response) return agent;
  const id = c.req.param("id");
  return idempotent(c, agent, `ucp.checkout.cancel ${id}`, async (also) => answer(c, await cancelSession(c.var.db, c.var.storeId, agent.url, id, also)));
});

/**
 * Completing places the order (shared/ucp/checkout-complete.ts). The body is the checkout as the agent holds
 * it; its `payment` is not read (we advertise no payment handler: the buyer pays on the store's page), so any
 * JSON object is taken. The specification's MCP binding requires an Idempotency-Key here; over REST it is
 * honoured when sent, as on every change.
 */
ucpSessions.post(`${BASE}/:id/complete`, async (c) => {
  const agent = await preflight(c, c.req.param("id"));
  if (agent instanceof Response) return agent;
  if ((await c.req.text()).trim() !== "") {
    const read = await jsonBody(c);
    if (read instanceof Response) return read;
    if (typeof read.body !== "object" || read.body === null || Array.isArray(read.body)) return protocolError(400, "invalid_request", "$: send the checkout object (or no body).");
  }
  const id = c.req.param("id");
  const deps = await completeDeps(c);
  return idempotent(c, agent, `ucp.checkout.complete ${id}`, async (also) => answer(c, await completeSession(deps, agent, id, also)));
});
