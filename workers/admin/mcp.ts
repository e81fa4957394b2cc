import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { Hono, type Context } from "hono";
import { isSlug, mcpMetadataUrl } from "#shared/auth/mcp-urls";
import { firstCall, mcpServer, runFirstCall, type McpDeps } from "#shared/assistant/mcp";
import { mediaServiceOf } from "#shared/media/store";
import { readBoundedText } from "#shared/http/body";
import { AppError, isAppError } from "#shared/core/errors";
import { rateLimitHeaders } from "#shared/limits/window";
import type { Caller, Principal } from "#shared/pipeline/principal";
import { resolveCaller, tooManyRequests } from "#shared/pipeline/run";
import { bearerOf, countCalls, noBearer, principalOfBearer } from "./bearer";
import type { AdminEnv } from "./context";
import { invalidParams, type JsonRpcErrorAnswer } from "./mcp-params";

/**
 * POST /api/mcp/<store_slug>: the store's remote MCP endpoint (Streamable HTTP, stateless, JSON answers;
 * one message or a batch per POST), on the SDK's McpServer (docs/decisions/0005-doors-and-limits.md says
 * why not `agents`' handler). Bearer: an OAuth access token issued for this store's MCP URL, or a created
 * token of this store. Order, before any database work: Origin, bearer, body and batch size, token (KV
 * for OAuth), then the per-grant limiter counts every JSON-RPC request in the POST. Then the grant is
 * re-checked in Postgres, and every tool call runs through the one pipeline.
 */
export const mcp = new Hono<AdminEnv>();

/** The most messages one POST may carry, and the largest body (a batch of tool calls stays far below it). */
export const MCP_MAX_BATCH = 20;
export const MCP_BODY_LIMIT = 256 * 1024;

const originOf = (c: Context) => new URL(c.req.url).origin;

function challenge(c: Context, slug: string, error?: string): Record<string, string> {
  return { "WWW-Authenticate": `Bearer resource_metadata="${mcpMetadataUrl(originOf(c), slug)}"${error ? `, error="${error}"` : ""}` };
}

function jsonRpcError(status: number, code: number, message: string, headers: Record<string, string> = {}): Response {
  return Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, { status, headers: { "cache-control": "no-store", ...headers } });
}

/**
 * The MCP transport spec asks servers to validate Origin against DNS rebinding. Clients that are not
 * browsers send none; a browser page may call only from the admin's own origin.
 */
function foreignOrigin(c: Context): boolean {
  const origin = c.req.header("origin");
  return origin !== undefined && origin !== originOf(c);
}

type Message = { id?: unknown; method?: unknown; params?: { arguments?: unknown } };

const messagesOf = (body: unknown): Message[] => (Array.isArray(body) ? body : [body]).filter((m): m is Message => typeof m === "object" && m !== null);

/** JSON-RPC requests in a message or batch: each one counts as a call; notifications and responses do not. */
function requestCount(body: unknown): number {
  return messagesOf(body).filter((m) => typeof m.method === "string" && (typeof m.id === "string" || typeof m.id === "number")).length;
}

/** Each tools/call request's arguments as sent, by request id. */
function toolArguments(body: unknown): (id: string | number) => unknown {
  const byId = new Map<string | number, unknown>();
  for (const m of messagesOf(body)) {
    if (m.method === "tools/call" && (typeof m.id === "string" || typeof m.id === "number")) byId.set(m.id, m.params?.arguments ?? {});
  }
  return (id) => byId.get(id) ?? {};
}

/**
 * Takes out of the body the requests whose params their method refuses (mcp-params.ts): their answers,
 * and what is left for the server (undefined when nothing is).
 */
function withoutInvalidParams(body: unknown): { refused: JsonRpcErrorAnswer[]; rest: unknown } {
  const refused: JsonRpcErrorAnswer[] = [];
  const keep = (m: unknown) => {
    const answer = typeof m === "object" && m !== null ? invalidParams(m as Message) : undefined;
    if (answer) refused.push(answer);
    return !answer;
  };
  if (!Array.isArray(body)) return { refused, rest: keep(body) ? body : undefined };
  const rest = body.filter(keep);
  return { refused, rest: rest.length > 0 ? rest : undefined };
}

/** The server's answer with the door's refusals added to the batch's answers. */
async function withRefusals(res: Response, refused: JsonRpcErrorAnswer[]): Promise<Response> {
  if (refused.length === 0) return res;
  const text = res.status === 200 ? await res.text() : "";
  const answered: unknown = text ? JSON.parse(text) : [];
  const all = [...(Array.isArray(answered) ? answered : [answered]), ...refused];
  const headers = new Headers(res.headers);
  headers.set("content-type", "application/json");
  headers.delete("content-length");
  return new Response(JSON.stringify(all), { status: 200, headers });
}

mcp.post("/api/mcp/:slug", async (c) => {
  const slug = c.req.param("slug");
  if (!isSlug(slug)) throw new AppError("NOT_FOUND", "No store has this MCP address.");
  if (foreignOrigin(c)) return jsonRpcError(403, -32000, "Requests from another origin are refused (MCP transport: Origin validation).");
  const bearer = bearerOf(c);
  if (!bearer) throw noBearer("Connect with OAuth: this endpoint needs a bearer token.", challenge(c, slug)["WWW-Authenticate"]!);

  let principal: Principal;
  try {
    principal = await principalOfBearer(c, bearer);
  } catch (e) {
    if (isAppError(e) && e.code === "UNAUTHORIZED") throw new AppError(e.code, e.message, e.data, challenge(c, slug, "invalid_token"));
    throw e;
  }
  const text = await readBoundedText(c.req.raw, MCP_BODY_LIMIT);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return jsonRpcError(400, -32700, "Parse error: the body is not valid JSON.");
  }
  if (Array.isArray(body) && (body.length === 0 || body.length > MCP_MAX_BATCH)) {
    return jsonRpcError(400, -32600, `Invalid Request: a batch carries 1 to ${MCP_MAX_BATCH} messages; split it into several POSTs.`);
  }
  const ids = messagesOf(body).flatMap((m) => (m.method !== undefined && m.id !== undefined ? [m.id] : []));
  if (new Set(ids).size !== ids.length) return jsonRpcError(400, -32600, "Invalid Request: two requests in one batch share an id.");
  // Every JSON-RPC request counts as one call; a batch is counted whole and refused whole (429) when
  // it does not fit, so nothing of it runs.
  const decision = await countCalls(c, principal, Math.max(1, requestCount(body)));
  const limitHeaders = rateLimitHeaders(decision);
  if (!decision.allowed) throw tooManyRequests(decision, "this connection");
  // Counted, then answered without the server when its params are wrong (-32602, not the SDK's -32603).
  const { refused, rest } = withoutInvalidParams(body);
  if (rest === undefined) {
    const answer = Array.isArray(body) ? refused : refused[0];
    return Response.json(answer, { status: 200, headers: { ...limitHeaders, "cache-control": "no-store" } });
  }
  body = rest;

  // The caller is resolved in Postgres (a grant of one store is refused in any other, SPEC Authentication
  // 6): with the POST's first tool call when it has a plan (a read's one unit, a change's first), else on its own.
  const deps = { db: c.var.db, principal, log: c.var.log, defer: c.var.defer, services: mediaServiceOf(c.env) };
  const unauthorized = (e: unknown) =>
    isAppError(e) && e.code === "UNAUTHORIZED" ? new AppError(e.code, e.message, e.data, { ...limitHeaders, ...challenge(c, slug, "invalid_token") }) : e;
  const first = firstCall(messagesOf(body));
  let caller: Caller;
  let early: McpDeps["early"];
  if (first) {
    const ran = await runFirstCall(deps, first, slug);
    if ("error" in ran) throw unauthorized(ran.error);
    caller = ran.caller;
    early = { id: first.id, result: ran.result };
  } else {
    caller = await resolveCaller(c.var.db, principal, "mcp", slug).catch((e: unknown) => {
      throw unauthorized(e);
    });
  }
  const server = mcpServer({ ...deps, caller, early, argumentsOf: toolArguments(body) });
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  const res = await withRefusals(await transport.handleRequest(c.req.raw, { parsedBody: body }), refused);
  const headers = new Headers(res.headers);
  for (const [name, value] of Object.entries(limitHeaders)) headers.set(name, value);
  headers.set("cache-control", "no-store");
  return new Response(res.body, { status: res.status, headers });
});

// Stateless: no server-to-client stream and no session to end.
mcp.on(["GET", "DELETE"], "/api/mcp/:slug", () => {
  throw new AppError("METHOD_NOT_ALLOWED", "This MCP endpoint is stateless: POST one JSON-RPC message or a batch.", undefined, { allow: "POST" });
});
