import type { Context } from "hono";
import { TOKEN_PATTERN } from "#shared/auth/grants";
import { mcpResourceUrl } from "#shared/auth/mcp-urls";
import { sha256Hex } from "#shared/core/tokens";
import { isUuid } from "#shared/db/ids";
import { AppError } from "#shared/core/errors";
import { API_POLICY, hit } from "#shared/limits/limit";
import type { LimitDecision } from "#shared/limits/window";
import { invalidToken, type Principal } from "#shared/pipeline/principal";
import type { AdminEnv } from "./context";
import { ACCESS_PREFIX, authServer, isProviderTokenShape, slugOfProviderToken } from "./oauth/server";

/**
 * Both bearer doors (/api/v1 and /api/mcp) take both kinds of token (SPEC Authentication 2) and find the
 * principal the same way, without touching the database: a created token by the SHA-256 of its secret;
 * an OAuth access token through the provider (KV), whose props carry the grant and the store.
 */

/** The token in `Authorization: Bearer <token>`, or undefined. */
export function bearerOf(c: Context): string | undefined {
  return /^Bearer +([^\s]+)\s*$/i.exec(c.req.header("authorization") ?? "")?.[1];
}

const originOf = (c: Context) => new URL(c.req.url).origin;

/**
 * The principal of a bearer token. An OAuth access token is bound to its store's MCP URL (RFC 8707
 * audience); /api/v1 accepts it as that store's API too (docs/decisions/0005-doors-and-limits.md).
 * Throws 401 invalid_token for anything it cannot verify.
 */
export async function principalOfBearer(c: Context<AdminEnv>, bearer: string): Promise<Principal> {
  if (TOKEN_PATTERN.test(bearer)) return { kind: "token", tokenHash: await sha256Hex(bearer) };
  // Only the shape we issue reaches the provider's KV lookup (its keys hold 512 bytes).
  if (!bearer.startsWith(ACCESS_PREFIX) || !isProviderTokenShape(bearer.slice(ACCESS_PREFIX.length))) throw invalidToken();
  const token = bearer.slice(ACCESS_PREFIX.length);
  const slug = slugOfProviderToken(token);
  if (!slug) throw invalidToken();
  const origin = originOf(c);
  // The provider checks the token, its expiry and its audience (that store's MCP URL exactly).
  const validated = await authServer(origin, slug).validateToken<{ apiGrantId?: unknown; storeId?: unknown }>(mcpResourceUrl(origin, slug), token, c.env);
  const { apiGrantId, storeId } = validated?.props ?? {};
  if (!isUuid(apiGrantId) || !isUuid(storeId)) throw invalidToken();
  return { kind: "oauth", grantId: apiGrantId, storeId };
}

/**
 * The per-grant limiter's key, known without a database read: a created token's hash, an OAuth grant's
 * id. The same grant has the same key at both doors, so they count together (SPEC "Limits").
 */
export function limiterKey(principal: Principal): string {
  switch (principal.kind) {
    case "token":
      return `token:${principal.tokenHash}`;
    case "oauth":
      return `grant:${principal.grantId}`;
    case "member":
    case "session":
      throw new TypeError("Sessions have no per-grant limiter");
  }
}

/** Counts `cost` calls (a batch's requests) against the principal's limiter; reports how long it took. */
export async function countCalls(c: Context<AdminEnv>, principal: Principal, cost = 1): Promise<LimitDecision> {
  const started = performance.now();
  const decision = await hit(c.env.RATE_LIMITER, limiterKey(principal), API_POLICY, cost);
  // The bench reads how long the limiter's decision took.
  c.header("server-timing", `limiter;dur=${(performance.now() - started).toFixed(2)}`);
  return decision;
}

export function noBearer(message: string, challenge: string): AppError {
  return new AppError("UNAUTHORIZED", message, { reason: "no_token" }, { "WWW-Authenticate": challenge });
}
