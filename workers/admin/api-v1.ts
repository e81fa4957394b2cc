import { Hono, type Context } from "hono";
import { AREA_SCOPES } from "#shared/auth/grants";
import { propose, proposalAnswer } from "#shared/assistant/approvals";
import { proposeInUnits } from "#shared/assistant/proposal-units";
import { AppError, isAppError } from "#shared/core/errors";
import { rateLimitHeaders } from "#shared/limits/window";
import { recordRead } from "#shared/pipeline/activity";
import { procedureServices } from "#shared/pipeline/providers";
import { mediaServiceOf } from "#shared/media/store";
import { IDEMPOTENCY_HEADER, idempotencyKeyOf, REPLAYED_HEADER } from "#shared/pipeline/idempotency-key";
import { runIdempotent } from "#shared/pipeline/idempotent";
import { procedureKey } from "#shared/procedures/define";
import { findProcedure } from "#shared/registry/procedures";
import { bearerOf, countCalls, noBearer, principalOfBearer } from "./bearer";
import type { AdminEnv } from "./context";
import { readRpcBody, requireJsonContentType } from "./rpc";

/**
 * The token API: `POST /api/v1/<router>/<procedure>` with `Authorization: Bearer <token>` (a created
 * token or an OAuth access token) runs the admin's procedure registry for the token's grant through the
 * one pipeline (SPEC "Token API"). Cookies never reach it (the Worker's entry strips them), so a browser
 * session can never be borrowed here.
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
  const bearer = bearerOf(c);
  if (!bearer) throw noBearer("Send your token as Authorization: Bearer <token> (create one in Settings → MCP & API).", challenge(c));
  requireJsonContentType(c.req.raw);
  const proc = findProcedure(c.req.param("router"), c.req.param("procedure"));
  if (!proc) throw new AppError("NOT_FOUND", `No procedure ${c.req.param("router")}/${c.req.param("procedure")}.`);
  try {
    const principal = await principalOfBearer(c, bearer);
    const input = await readRpcBody(c.req.raw);
    const key = idempotencyKeyOf(c.req.header(IDEMPOTENCY_HEADER));
    const done = await runIdempotent(
      c.var.db,
      principal,
      proc,
      input,
      {
        door: "token",
        log: c.var.log,
        services: { ...procedureServices(c.var.providers), ...mediaServiceOf(c.env) },
        limit: () => countCalls(c, principal),
        propose,
        proposeInUnits,
        defer: c.var.defer,
      },
      key,
      (outcome) =>
        // An OAuth connection's change while 'Changes need approval' is on: nothing changed yet (202).
        outcome.kind === "proposed"
          ? { status: 202, json: JSON.stringify({ json: { proposal: proposalAnswer(outcome.proposal) } }) }
          : { status: 200, json: JSON.stringify({ json: outcome.output ?? null }) },
    );
    for (const [name, value] of Object.entries(done.decision ? rateLimitHeaders(done.decision) : {})) c.header(name, value);
    c.header("cache-control", "no-store");
    if (done.replayed) c.header(REPLAYED_HEADER, "true");
    const outcome = done.outcome;
    if (outcome && !proc.mutates && outcome.caller.grant) {
      const { store, grant } = outcome.caller;
      c.var.defer(() => recordRead(c.var.db, { storeId: store.id, grantId: grant.id, procedure: procedureKey(proc), via: "token" }));
    }
    return c.body(done.answer.json, done.answer.status as 200 | 202, { "content-type": "application/json" });
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
