import { AuthorizationError, authorizationErrorRedirect, CimdFetchError, type AuthRequest } from "@cloudflare/workers-oauth-provider";
import type { Context } from "hono";
import { mcpResourceUrl, slugOfResource } from "#shared/auth/mcp-urls";
import { storeIdBySlug } from "#shared/db/privileged";
import { AppError } from "#shared/core/errors";
import type { AdminEnv } from "../context";
import { authServer, isClientIdShape, redirectUriProblem } from "./server";

export function badRequestPage(message: string): AppError {
  return new AppError("BAD_REQUEST", message);
}

export interface CheckedAuthRequest {
  request: AuthRequest;
  /** The store the request's `resource` names, or null when it names none (the member picks one). */
  slug: string | null;
}

const redirectTo = (location: string) => new Response(null, { status: 302, headers: { location, "cache-control": "no-store" } });

/**
 * Checks an authorization request before anyone is asked to sign in. The provider's
 * `parseAuthRequest` checks the client, the exact redirect_uri, response_type, PKCE and the resource;
 * we add, first, that the redirect_uri meets the SPEC's rule (`redirectUriProblem`), then that the
 * resource must be an existing store's MCP URL and that PKCE must be S256.
 *
 * RFC 6749 §4.1.2.1: while the client or its redirect_uri is unknown, nothing is sent there (a 400
 * page, thrown). Once both are trusted, every other fault goes back to that redirect_uri with the
 * RFC's code (`invalid_request` for PKCE, `unsupported_response_type`, RFC 8707's `invalid_target`
 * for the resource), `state`, and `iss` (RFC 9207).
 */
export async function checkAuthRequest(c: Context<AdminEnv>): Promise<CheckedAuthRequest | Response> {
  const url = new URL(c.req.url);
  // A client id of another shape names no client (and would be a KV key past its 512 bytes).
  const clientId = url.searchParams.get("client_id");
  if (clientId && !isClientIdShape(clientId)) throw badRequestPage("This connection request is not valid: no app is registered with this client_id. Start again from your app.");
  // A redirect URI outside the SPEC's rule (http on `127.evil.com`) is never trusted, whatever a client
  // registered before the rule was exact keeps in KV: refused by the rule itself, before the provider's
  // own check (which says only "Invalid redirect URI") and before any lookup.
  const redirectUri = url.searchParams.get("redirect_uri");
  const redirectProblem = redirectUri === null ? null : redirectUriProblem(redirectUri);
  if (redirectProblem) throw badRequestPage(`This connection request is not valid: its redirect URI ${redirectProblem}. The app must use https, http on localhost/127.0.0.1/[::1], or an app-specific scheme; register it again with one.`);
  const resources = url.searchParams.getAll("resource");
  const named = resources.length === 1 ? slugOfResource(url.origin, resources[0]) : null;
  const slug = named && (await storeIdBySlug(c.var.db, named)) ? named : null;
  // A resource that is not a store's MCP URL is judged after the client and redirect_uri: the
  // request is checked without it first.
  const badResource = resources.length > 0 && !slug;
  if (badResource) url.searchParams.delete("resource");
  let request: AuthRequest;
  try {
    request = await authServer(url.origin, slug).getOAuthApi(c.env).parseAuthRequest(new Request(url, { headers: c.req.raw.headers }));
  } catch (e) {
    if (e instanceof AuthorizationError && e.redirectTo) return redirectTo(e.redirectTo);
    if (e instanceof AuthorizationError) throw badRequestPage(`This connection request is not valid: ${e.description}. Start again from your app.`);
    if (e instanceof CimdFetchError) throw badRequestPage("This app could not be verified. Start again from your app.");
    throw e;
  }
  if (badResource) {
    return redirectTo(authorizationErrorRedirect(request, "invalid_target", `The resource must be the MCP address of a store here (${mcpResourceUrl(url.origin, "<store>")}).`));
  }
  if (!request.codeChallenge || request.codeChallengeMethod !== "S256") {
    return redirectTo(authorizationErrorRedirect(request, "invalid_request", "PKCE with code_challenge_method=S256 is required."));
  }
  return { request, slug };
}
