import { Hono, type Context } from "hono";
import { isSlug, mcpResourceUrl, PRM_PREFIX, MCP_PATH_PREFIX, slugOfResource } from "#shared/auth/mcp-urls";
import { storeIdBySlug } from "#shared/db/privileged";
import { readBoundedText } from "#shared/http/body";
import { AppError } from "#shared/core/errors";
import { hitClient } from "#shared/limits/limit";
import { rateLimitHeaders, type LimitPolicy } from "#shared/limits/window";
import type { AdminEnv } from "../context";
import { judgeRegistration, REGISTRATION_BODY_LIMIT } from "./registration";
import { ACCESS_PREFIX, authServer, isClientIdShape, isProviderTokenShape, OAUTH_PATHS, REFRESH_PREFIX, slugOfProviderToken, unprefix } from "./server";

/** The OAuth endpoints the provider speaks, wrapped where this service adds to them. */
export const oauth = new Hono<AdminEnv>();

/** SPEC "Limits": dynamic registration, 20 per hour per IP. */
export const REGISTER_POLICY: LimitPolicy = { limit: 20, windowMs: 60 * 60_000 };

const originOf = (c: Context) => new URL(c.req.url).origin;
// Hono types the execution context on its own; it is the Workers one.
const ctxOf = (c: Context) => c.executionCtx as unknown as ExecutionContext;

function oauthError(status: number, error: string, description: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ error, error_description: description }), {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store", ...headers },
  });
}

// RFC 8414 metadata. The provider writes it; we list our own revocation endpoint and leave out the
// list of protected resources (one per store: slugs are not published).
oauth.get(OAUTH_PATHS.metadata, async (c) => {
  const origin = originOf(c);
  const res = await authServer(origin, null).fetch(c.req.raw, c.env, ctxOf(c));
  const metadata = (await res.json()) as Record<string, unknown>;
  delete metadata["protected_resources"];
  metadata["revocation_endpoint"] = `${origin}${OAUTH_PATHS.revoke}`;
  metadata["revocation_endpoint_auth_methods_supported"] = metadata["token_endpoint_auth_methods_supported"];
  c.header("cache-control", "public, max-age=300");
  return c.json(metadata);
});

// RFC 9728 metadata of one store's MCP endpoint. No scopes are named: the consent page offers the
// read areas when a client asks for none, and the member chooses.
oauth.get(`${PRM_PREFIX}${MCP_PATH_PREFIX}:slug`, async (c) => {
  const slug = c.req.param("slug");
  if (!isSlug(slug) || !(await storeIdBySlug(c.var.db, slug))) throw new AppError("NOT_FOUND", "No store has this MCP address.");
  const origin = originOf(c);
  c.header("cache-control", "public, max-age=300");
  return c.json({
    resource: mcpResourceUrl(origin, slug),
    authorization_servers: [origin],
    bearer_methods_supported: ["header"],
    resource_name: `Commerce MCP server (${slug})`,
    resource_documentation: `${origin}/settings/api`,
  });
});

// RFC 7591 dynamic registration (201), limited per address (IPv6 by its /64, and its /48 with 4 times the
// number: decision 0019); the redirect-URI policy is in server.ts.
oauth.post(OAUTH_PATHS.register, async (c) => {
  const { decision, by } = await hitClient(c.env.RATE_LIMITER, "register", c.req.header("cf-connecting-ip"), REGISTER_POLICY);
  if (!decision.allowed) {
    const from = by === "address" ? "one address" : "one IPv6 /48 network";
    return oauthError(429, "too_many_requests", `At most ${decision.limit} registrations per hour from ${from}.`, rateLimitHeaders(decision));
  }
  // Our metadata policy answers first, with RFC 7591's own error codes (registration.ts); the provider
  // gets only the fields it passed.
  const text = await readBoundedText(c.req.raw, REGISTRATION_BODY_LIMIT).catch(() => null);
  if (text === null) return oauthError(413, "invalid_request", `The client metadata is larger than ${REGISTRATION_BODY_LIMIT} bytes.`);
  const verdict = judgeRegistration(text);
  if ("error" in verdict) return oauthError(400, verdict.error, verdict.description);
  const headers = new Headers(c.req.raw.headers);
  headers.set("content-type", "application/json");
  headers.delete("content-length");
  const request = new Request(c.req.raw.url, { method: "POST", headers, body: verdict.body });
  return authServer(originOf(c), null).fetch(request, c.env, ctxOf(c));
});

/** Re-sends a form to the provider's token endpoint with some fields changed. */
function forwardForm(c: Context, form: URLSearchParams): Request {
  const headers = new Headers(c.req.raw.headers);
  headers.set("content-type", "application/x-www-form-urlencoded");
  headers.delete("content-length");
  return new Request(`${originOf(c)}${OAUTH_PATHS.token}`, { method: "POST", headers, body: form.toString() });
}

/** A token or revocation request's form; its body is small (a code, a token, a verifier). */
export const OAUTH_FORM_LIMIT = 16 * 1024;

async function readForm(c: Context): Promise<URLSearchParams | Response> {
  const type = c.req.header("content-type")?.split(";")[0]?.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") {
    return oauthError(400, "invalid_request", "Send the request as application/x-www-form-urlencoded.");
  }
  const text = await readBoundedText(c.req.raw, OAUTH_FORM_LIMIT).catch(() => null);
  if (text === null) return oauthError(413, "invalid_request", `The request is larger than ${OAUTH_FORM_LIMIT} bytes.`);
  return new URLSearchParams(text);
}

/** The client id of a token or revocation request, as the provider will read it: HTTP Basic, the form, or a client assertion's issuer. */
function clientIdOf(c: Context, form: URLSearchParams): { id: string; basic: boolean } {
  const basic = /^basic[ \t]+(\S+)\s*$/i.exec(c.req.header("authorization") ?? "")?.[1];
  if (basic) {
    try {
      const pair = atob(basic);
      return { id: decodeURIComponent(pair.slice(0, Math.max(0, pair.indexOf(":"))).replace(/\+/g, " ")), basic: true };
    } catch {
      return { id: "", basic: true };
    }
  }
  const assertion = form.get("client_assertion");
  if (form.get("client_id") || !assertion) return { id: form.get("client_id") ?? "", basic: false };
  try {
    const claims = JSON.parse(atob((assertion.split(".")[1] ?? "").replace(/-/g, "+").replace(/_/g, "/"))) as { iss?: unknown };
    return { id: typeof claims.iss === "string" ? claims.iss : "", basic: false };
  } catch {
    return { id: "", basic: false };
  }
}

/**
 * Refuses what cannot name anything we issued before the provider looks it up in KV (whose keys hold 512
 * bytes; a longer one is an error there, not an answer): a client id, a code or a refresh token of
 * another shape (RFC 6749 §5.2: invalid_client, invalid_grant).
 */
function unknownCredentials(c: Context, form: URLSearchParams): Response | undefined {
  const client = clientIdOf(c, form);
  if (client.id && !isClientIdShape(client.id)) {
    return oauthError(401, "invalid_client", "No client has this client_id; register again.", client.basic ? { "WWW-Authenticate": 'Basic realm="oauth"' } : {});
  }
  const code = form.get("code");
  if (form.get("grant_type") === "authorization_code" && code && !isProviderTokenShape(code)) {
    return oauthError(400, "invalid_grant", "The authorization code is not valid; start the authorization again.");
  }
  const refresh = form.get("refresh_token");
  if (form.get("grant_type") === "refresh_token" && refresh && !isProviderTokenShape(refresh)) {
    return oauthError(400, "invalid_grant", "The refresh token is not valid; authorize again.");
  }
  return undefined;
}

// Token endpoint: authorization_code (PKCE S256 required) and refresh_token; both tokens rotate.
oauth.post(OAUTH_PATHS.token, async (c) => {
  const form = await readForm(c);
  if (form instanceof Response) return form;
  const refresh = form.get("refresh_token");
  if (refresh) form.set("refresh_token", unprefix(refresh));
  const unknown = unknownCredentials(c, form);
  if (unknown) return unknown;
  const slug =
    slugOfResource(originOf(c), form.get("resource")) ?? slugOfProviderToken(form.get("code") ?? form.get("refresh_token") ?? "");
  const res = await authServer(originOf(c), slug).fetch(forwardForm(c, form), c.env, ctxOf(c));
  if (!res.ok) return res;
  const body = (await res.json()) as Record<string, unknown>;
  if (typeof body["access_token"] === "string") body["access_token"] = `${ACCESS_PREFIX}${body["access_token"]}`;
  if (typeof body["refresh_token"] === "string") body["refresh_token"] = `${REFRESH_PREFIX}${body["refresh_token"]}`;
  return new Response(JSON.stringify(body), { status: res.status, headers: res.headers });
});

// RFC 7009 revocation (the provider serves it on its token endpoint; we give it its own address).
oauth.post(OAUTH_PATHS.revoke, async (c) => {
  const form = await readForm(c);
  if (form instanceof Response) return form;
  const token = form.get("token");
  if (!token) return oauthError(400, "invalid_request", "token is required.");
  const unknown = unknownCredentials(c, form);
  if (unknown) return unknown;
  // RFC 7009 §2.2: a token that is not one of ours is answered as revoked (once a client is named: the
  // provider asks for one first).
  if (!isProviderTokenShape(unprefix(token)) && clientIdOf(c, form).id) return new Response(null, { status: 200, headers: { "cache-control": "no-store" } });
  form.set("token", unprefix(token));
  form.delete("grant_type");
  return authServer(originOf(c), slugOfProviderToken(unprefix(token))).fetch(forwardForm(c, form), c.env, ctxOf(c));
});
