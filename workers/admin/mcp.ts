import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { Hono, type Context } from "hono";
import { invalidToken, resolvePrincipal, type ApiCredential, type ApiPrincipal } from "#shared/api/execute";
import { TOKEN_PATTERN } from "#shared/api/grants";
import { isSlug, mcpMetadataUrl, mcpResourceUrl } from "#shared/api/mcp-urls";
import { mcpServer } from "#shared/assistant/mcp";
import { sha256Hex } from "#shared/auth/tokens";
import { isUuid } from "#shared/db/ids";
import { AppError, isAppError } from "#shared/http/errors";
import { API_POLICY, hit } from "#shared/limits/limit";
import { rateLimitHeaders } from "#shared/limits/window";
import type { AdminEnv } from "./context";
import { ACCESS_PREFIX, authServer } from "./oauth/server";

/**
 * POST /api/mcp/<store_slug>: the store's remote MCP endpoint (Streamable HTTP, stateless, JSON
 * answers; one message or a batch per POST). Bearer: an OAuth access token issued for this store's
 * MCP URL, or a created token of this store. The grant is re-checked in Postgres on every POST and
 * counts against the same per-grant limiter as /api/v1.
 */
export const mcp = new Hono<AdminEnv>();

const originOf = (c: Context) => new URL(c.req.url).origin;

function challenge(c: Context, slug: string, error?: string): Record<string, string> {
  return { "WWW-Authenticate": `Bearer resource_metadata="${mcpMetadataUrl(originOf(c), slug)}"${error ? `, error="${error}"` : ""}` };
}

async function credentialOf(c: Context<AdminEnv>, slug: string, bearer: string): Promise<ApiCredential> {
  if (TOKEN_PATTERN.test(bearer)) return { kind: "token", tokenHash: await sha256Hex(bearer) };
  if (!bearer.startsWith(ACCESS_PREFIX)) throw invalidToken();
  const origin = originOf(c);
  // The provider checks the token, its expiry and its audience (this store's MCP URL exactly).
  const validated = await authServer(origin, slug).validateToken<{ apiGrantId?: unknown; storeId?: unknown }>(
    mcpResourceUrl(origin, slug),
    bearer.slice(ACCESS_PREFIX.length),
    c.env,
  );
  const { apiGrantId, storeId } = validated?.props ?? {};
  if (!isUuid(apiGrantId) || !isUuid(storeId)) throw invalidToken();
  return { kind: "oauth", grantId: apiGrantId, storeId };
}

mcp.post("/api/mcp/:slug", async (c) => {
  const slug = c.req.param("slug");
  if (!isSlug(slug)) throw new AppError("NOT_FOUND", "No store has this MCP address.");
  const bearer = /^Bearer +([^\s]+)\s*$/i.exec(c.req.header("authorization") ?? "")?.[1];
  if (!bearer) throw new AppError("UNAUTHORIZED", "Connect with OAuth: this endpoint needs a bearer token.", { reason: "no_token" }, challenge(c, slug));
  let principal: ApiPrincipal;
  try {
    const credential = await credentialOf(c, slug, bearer);
    principal = await resolvePrincipal(c.var.db, credential);
    // A grant of one store is refused in any other (SPEC Authentication 6).
    if (principal.store.slug !== slug) throw invalidToken("This token belongs to another store.");
  } catch (e) {
    if (isAppError(e) && e.code === "UNAUTHORIZED") throw new AppError(e.code, e.message, e.data, challenge(c, slug, "invalid_token"));
    throw e;
  }
  const decision = await hit(c.env.RATE_LIMITER, `grant:${principal.grantId}`, API_POLICY);
  const limitHeaders = rateLimitHeaders(decision);
  if (!decision.allowed) {
    throw new AppError("TOO_MANY_REQUESTS", `Rate limit reached: ${decision.limit} requests per minute for this connection (MCP and /api/v1 together).`, undefined, limitHeaders);
  }
  const server = mcpServer({ db: c.var.db, principal, log: c.var.log, defer: c.var.defer });
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  const res = await transport.handleRequest(c.req.raw);
  const headers = new Headers(res.headers);
  for (const [name, value] of Object.entries(limitHeaders)) headers.set(name, value);
  headers.set("cache-control", "no-store");
  return new Response(res.body, { status: res.status, headers });
});

// Stateless: no server-to-client stream and no session to end.
mcp.on(["GET", "DELETE"], "/api/mcp/:slug", () => {
  throw new AppError("METHOD_NOT_ALLOWED", "This MCP endpoint is stateless: POST one JSON-RPC message or a batch.", undefined, { allow: "POST" });
});
