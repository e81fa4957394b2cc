import { Hono, type Context } from "hono";
import { AREA_SCOPES, TOKEN_PATTERN } from "#shared/api/grants";
import { invalidToken, recordRead, runApiProcedure } from "#shared/api/execute";
import { sha256Hex } from "#shared/auth/tokens";
import { AppError, isAppError } from "#shared/http/errors";
import { API_POLICY, hit } from "#shared/limits/limit";
import { rateLimitHeaders } from "#shared/limits/window";
import { procedureKey } from "#shared/procedures/define";
import { findProcedure } from "#shared/procedures/registry";
import type { AdminEnv } from "./context";
import { readRpcBody, requireJsonContentType } from "./rpc";

/**
 * The token API: `POST /api/v1/<router>/<procedure>` with `Authorization: Bearer <token>` runs the
 * admin's procedure registry for the token's grant (SPEC "Token API"). Cookies never reach it (the
 * Worker's entry strips them), so a browser session can never be borrowed here.
 */
export const apiV1 = new Hono<AdminEnv>();

export const API_V1_RESOURCE_METADATA = "/.well-known/oauth-protected-resource/api/v1";

/** Paths served to bearer tokens only: the entry strips cookies from these before anything runs. */
export const BEARER_ONLY_PREFIXES = ["/api/v1/", "/api/mcp/"];

export function stripCookies(request: Request): Request {
  const { pathname } = new URL(request.url);
  if (!BEARER_ONLY_PREFIXES.some((p) => pathname.startsWith(p)) || !request.headers.has("cookie")) return request;
  const headers = new Headers(request.headers);
  headers.delete("cookie");
  return new Request(request, { headers });
}

function challenge(c: Context, error?: string): string {
  const url = `${new URL(c.req.url).origin}${API_V1_RESOURCE_METADATA}`;
  return `Bearer resource_metadata="${url}"${error ? `, error="${error}"` : ""}`;
}

apiV1.post("/api/v1/:router/:procedure", async (c) => {
  const bearer = /^Bearer +([^\s]+)\s*$/i.exec(c.req.header("authorization") ?? "")?.[1];
  if (!bearer) {
    throw new AppError("UNAUTHORIZED", "Send your token as Authorization: Bearer <token> (create one in Settings → MCP & API).", { reason: "no_token" }, {
      "WWW-Authenticate": challenge(c),
    });
  }
  requireJsonContentType(c.req.raw);
  const proc = findProcedure(c.req.param("router"), c.req.param("procedure"));
  if (!proc) throw new AppError("NOT_FOUND", `No procedure ${c.req.param("router")}/${c.req.param("procedure")}.`);
  try {
    if (!TOKEN_PATTERN.test(bearer)) throw invalidToken();
    const input = await readRpcBody(c.req.raw);
    let limiterMs = 0;
    const result = await runApiProcedure(c.var.db, { kind: "token", tokenHash: await sha256Hex(bearer) }, proc, input, {
      via: "token",
      log: c.var.log,
      limit: async (grantId) => {
        const started = performance.now();
        const decision = await hit(c.env.RATE_LIMITER, `grant:${grantId}`, API_POLICY);
        limiterMs = performance.now() - started;
        return decision;
      },
    });
    // How long the limiter's decision took (it runs alongside the query); the bench reads it.
    c.header("server-timing", `limiter;dur=${limiterMs.toFixed(2)}`);
    if (!proc.mutates) {
      const { principal } = result;
      c.var.defer(recordRead(c.var.db, { storeId: principal.store.id, grantId: principal.grantId, procedure: procedureKey(proc), via: "token" }));
    }
    for (const [name, value] of Object.entries(rateLimitHeaders(result.decision))) c.header(name, value);
    c.header("cache-control", "no-store");
    return c.json({ json: result.output ?? null });
  } catch (e) {
    if (isAppError(e) && e.code === "UNAUTHORIZED") {
      throw new AppError(e.code, e.message, e.data, { ...e.headers, "WWW-Authenticate": challenge(c, "invalid_token") });
    }
    throw e;
  }
});

apiV1.all("/api/v1/:router/:procedure", () => {
  throw new AppError("METHOD_NOT_ALLOWED", 'Use POST /api/v1/<router>/<procedure> with {"json": <input>}.', undefined, { allow: "POST" });
});

// RFC 9728 metadata for the token API as a protected resource: where its tokens come from.
apiV1.get(API_V1_RESOURCE_METADATA, (c) => {
  const origin = new URL(c.req.url).origin;
  c.header("cache-control", "public, max-age=3600");
  return c.json({
    resource: `${origin}/api/v1`,
    authorization_servers: [origin],
    bearer_methods_supported: ["header"],
    scopes_supported: AREA_SCOPES,
    resource_name: "Commerce token API",
    resource_documentation: `${origin}/settings/api`,
  });
});
