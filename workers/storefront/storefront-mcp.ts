import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { Hono, type Context, type HonoRequest, type MiddlewareHandler } from "hono";
import { AppError } from "#shared/core/errors";
import { REPLAYED_HEADER } from "#shared/pipeline/idempotency-key";
import { agenticCheckoutOn } from "#shared/ucp/checkout-sessions";
import { sameSiteOnly } from "#shared/http/csrf";
import { clientOf } from "#shared/limits/address";
import { giveBackAll, passThrough, refusalMessage, type Counted } from "#shared/limits/doors";
import { shopperKeys, wrongCodeKeys } from "#shared/limits/shopper";
import type { StorefrontEnv } from "./context";
import { limiterOf } from "./limits";
import { appliesCode, storefrontMcpServer } from "./storefront-mcp-tools";
import { checkoutPreflight, checkoutRpcError, checkoutRpcErrorBody, isCheckoutTool, notFoundRpcResult, type CheckoutToolDeps } from "./storefront-mcp-ucp";
import { isRefusal, type UcpRefusal } from "./ucp-agent";

/**
 * POST /api/mcp on every store's own domains: the Storefront MCP (issue 26 item 1; docs/storefront-mcp.md),
 * for a shopper's AI agent. Streamable HTTP, stateless (no session id), JSON answers, no sign-in. Before any
 * database work: the request's shape (storefront input guard), the per-address limit (the `mcp` door,
 * limits.tsx), the store of the hostname (held in KV) and its password (a store behind its password is
 * closed to agents: 403). Then one JSON-RPC message per POST (no batches), on the SDK's McpServer with the
 * tools of storefront-mcp-tools.ts, UCP's checkout tools among them (storefront-mcp-ucp.ts: their arguments
 * and agent checked here first, their protocol refusals answered here as JSON-RPC errors). GET and DELETE:
 * 405 (no stream, no session).
 */
export const storefrontMcp = new Hono<StorefrontEnv>();

type McpContext = Context<StorefrontEnv>;

/** JSON-RPC's own codes, and the server's (-32000 to -32099) for what the HTTP status says (docs/storefront-mcp.md). */
const RPC_CODE: Record<number, number> = { 400: -32600, 413: -32600, 415: -32600, 401: -32001, 403: -32001, 404: -32004, 405: -32601, 429: -32029 };

function rpcError(status: number, code: number, message: string, data?: Record<string, unknown>, headers: Record<string, string> = {}): Response {
  return Response.json({ jsonrpc: "2.0", id: null, error: { code, message, ...(data ? { data } : {}) } }, { status, headers: { "cache-control": "no-store", ...headers } });
}

/**
 * Every refusal on the way to the server (a body too large or too deep, a NUL, the limit, an unknown host,
 * the password, a cross-site page) answered as a JSON-RPC error with its HTTP status, so an MCP client
 * reads why: `error.data` holds the storefront's error code, reason and request id. Mounted in front of
 * everything else for /api/mcp (app.tsx).
 */
export const mcpRefusals: MiddlewareHandler = async function mcpRefusals(c, next) {
  await next();
  const res = c.res;
  if (res.status < 400 || !(res.headers.get("content-type") ?? "").startsWith("application/json")) return;
  const body = (await res.clone().json().catch(() => null)) as { json?: { code: string; message: string; data?: Record<string, unknown>; requestId?: string } } | null;
  const error = body?.json;
  if (!error) return;
  const headers = new Headers(res.headers);
  headers.delete("content-length");
  headers.set("cache-control", "no-store");
  // UCP's binding asks for the wait of a 429 or 503 in `error.data.retry_after` (seconds) as well as in Retry-After.
  const retry = Number(res.headers.get("retry-after"));
  const checkout = await checkoutCallOf(c.req, res.status);
  const data = { code: error.code, ...(error.data ?? {}), ...(error.requestId ? { requestId: error.requestId } : {}), ...(retry > 0 ? { retry_after: retry } : {}) };
  // A UCP checkout tool's call hears it in the binding's shape (storefront-mcp-ucp.ts): data {code, content}.
  const answer = checkout
    ? checkoutRpcErrorBody(checkout.id, { status: res.status, code: typeof error.data?.["reason"] === "string" ? error.data["reason"] : error.code.toLowerCase(), content: error.message, ...(retry > 0 ? { headers: { "retry-after": String(retry) } } : {}) })
    : { jsonrpc: "2.0", id: null, error: { code: RPC_CODE[res.status] ?? -32000, message: error.message, data } };
  c.res = undefined;
  c.res = new Response(JSON.stringify(answer), { status: res.status, headers });
};

/**
 * The JSON-RPC id of a call to one of UCP's checkout tools, or null for any other message. Only a JSON body is
 * read, which the input guard has bounded (at most 64 KB) unless it refused it as too large (413).
 */
async function checkoutCallOf(req: HonoRequest, status: number): Promise<{ id: unknown } | null> {
  if (status === 413 || (req.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase() !== "application/json") return null;
  const sent = await req.text().then((t) => JSON.parse(t) as Message, () => null).catch(() => null);
  return sent?.method === "tools/call" && isCheckoutTool(sent.params?.name) ? { id: sent.id } : null;
}

// The MCP transport asks servers to check Origin (DNS rebinding): an agent's client sends none; a browser
// page of another site is refused, as every write of the storefront is.
storefrontMcp.use("/api/mcp", sameSiteOnly("this MCP endpoint from an MCP client or"));

type Message = { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: { name?: unknown; arguments?: unknown } };

/**
 * A discount code tried through update_cart counts as a code attempt of the shopper's discount door, and as
 * a wrong one until the store's code is found (limits.tsx does the same for the cart page's form): guessing
 * codes through an agent is no faster than through the page. Past a threshold that asks a person to pass a
 * check, an agent is refused (it cannot pass one): the shopper enters the code at checkout.
 */
async function countCodeAttempt(c: McpContext): Promise<Response | Counted[]> {
  const client = clientOf(c.req.header("cf-connecting-ip"));
  const limiter = limiterOf(c.env);
  let wrong: Counted[] = [];
  for (const keys of [shopperKeys("discount", c.var.hostname, client), wrongCodeKeys(c.var.hostname, client)]) {
    const outcome = await passThrough(limiter, keys, () => Promise.resolve("check" as const));
    if (!outcome.allowed) {
      const message =
        "checkRefused" in outcome ? "Too many discount codes were tried at this store just now; the shopper can enter the code on the checkout page." : refusalMessage(outcome);
      const retry: Record<string, string> = "checkRefused" in outcome ? {} : { "retry-after": String(outcome.retryAfterSeconds) };
      return rpcError(429, RPC_CODE[429]!, message, { code: "TOO_MANY_REQUESTS", reason: "rate_limited" }, retry);
    }
    wrong = outcome.counted;
  }
  return wrong;
}

storefrontMcp.post("/api/mcp", async (c) => {
  const { store } = c.var;
  // Closed means closed: an agent cannot enter the storefront's password (docs/storefront-mcp.md).
  if (store.passwordCookieHash !== null) {
    throw new AppError("FORBIDDEN", "This store is open only to people with its password; its catalogue and cart are not open to agents.", { reason: "password_protected" });
  }
  if ((c.req.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase() !== "application/json") {
    return rpcError(415, -32600, "Send one JSON-RPC message as application/json.");
  }
  // The input guard has read this body already (at most 64 KB, no NUL, at most 32 levels deep).
  let body: unknown;
  try {
    body = JSON.parse(await c.req.text());
  } catch {
    return rpcError(400, -32700, "Parse error: the body is not valid JSON.");
  }
  if (Array.isArray(body)) return rpcError(400, -32600, "Invalid Request: send one JSON-RPC message per POST (this server takes no batches).");
  if (typeof body !== "object" || body === null) return rpcError(400, -32600, "Invalid Request: the body is not a JSON-RPC message.");
  const message = body as Message;

  let wrongCode: Counted[] = [];
  let codeWasWrong = false;
  if (message.method === "tools/call" && message.params?.name === "update_cart" && appliesCode(message.params.arguments)) {
    const counted = await countCodeAttempt(c);
    if (counted instanceof Response) return counted;
    wrongCode = counted;
  }
  // UCP's checkout tools (storefront-mcp-ucp.ts): the arguments and the agent before the server runs; a
  // protocol refusal, there or from the tool, is a JSON-RPC error with its HTTP status.
  let refused: UcpRefusal | undefined;
  let replayed = false;
  const checkout: CheckoutToolDeps = { c, log: c.var.log, refuse: (r) => (refused = r), replayed: () => (replayed = true) };
  const tool = message.method === "tools/call" ? message.params?.name : undefined;
  if (isCheckoutTool(tool)) {
    const agent = await checkoutPreflight(c, tool, message.params?.arguments);
    if (isRefusal(agent)) {
      // While the store does not sell to agents, a refusal for the call's shape or its agent is not_found too, as over REST.
      if ([400, 401, 422, 424].includes(agent.status) && !(await agenticCheckoutOn(c.var.db, c.var.storeId))) return notFoundRpcResult(message.id);
      return checkoutRpcError(message.id, agent);
    }
    checkout.agent = agent;
  }
  const origin = `${new URL(c.req.url).protocol}//${c.req.header("host") ?? c.var.hostname}`;
  const server = storefrontMcpServer({ db: c.var.db, log: c.var.log, store, origin, codeWasWrong: () => (codeWasWrong = true) }, checkout);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  const res = await transport.handleRequest(c.req.raw, { parsedBody: body });
  if (refused) return checkoutRpcError(message.id, refused);
  // A code that was the store's (or a call that never looked one up) is no guess: given back.
  if (wrongCode.length && !codeWasWrong) await giveBackAll(limiterOf(c.env), wrongCode);
  const headers = new Headers(res.headers);
  headers.set("cache-control", "no-store");
  if (replayed) headers.set(REPLAYED_HEADER, "true");
  return new Response(res.body, { status: res.status, headers });
});

// Stateless: no server-to-client stream and no session to end.
storefrontMcp.on(["GET", "DELETE"], "/api/mcp", () => {
  throw new AppError("METHOD_NOT_ALLOWED", "This MCP endpoint is stateless: POST one JSON-RPC message.", undefined, { allow: "POST" });
});
