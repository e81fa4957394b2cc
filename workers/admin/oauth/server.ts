import { OAuthAuthorizationServer, type ClientRegistrationCallbackOptions } from "@cloudflare/workers-oauth-provider";
import { AREA_SCOPES } from "#shared/auth/grants";
import { isSlug, mcpResourceUrl } from "#shared/auth/mcp-urls";
import { createLogger } from "#shared/core/log";
import type { AdminBindings } from "../env";

/**
 * The OAuth 2.1 authorization server (RFC 8414, 7591, 7636, 7009, 8707, 9207), spoken by
 * @cloudflare/workers-oauth-provider, which keeps its tokens in OAUTH_KV by hash. Postgres stays the
 * authority on what a token may do: consent writes an `api_grant` row whose id travels in the
 * provider's props, and every MCP call re-checks that row (docs/decisions/0004-mcp-oauth.md).
 *
 * Each store's MCP URL is its own resource. The provider fixes its resources at construction, so an
 * instance is made per request for the one store the request is about (cheap: no I/O).
 */
export const ACCESS_TOKEN_TTL = 60 * 60;

// Isolate cache: a logger holds no request state.
const oauthLog = createLogger({ service: "admin", component: "oauth" });
export const REFRESH_TOKEN_TTL = 30 * 24 * 60 * 60;

export const OAUTH_PATHS = {
  authorize: "/oauth/authorize",
  token: "/api/oauth/token",
  register: "/api/oauth/register",
  revoke: "/api/oauth/revoke",
  metadata: "/.well-known/oauth-authorization-server",
} as const;

/**
 * The provider shapes its tokens as `<userId>:<grantId>:<secret>`. We give them fixed prefixes on the
 * way out (`wcat_` access, `wcrt_` refresh; secret scanners can tell them apart) and take them off on
 * the way in. The userId is `<store slug>.<member id>`, so a token or code names its store and the
 * right resource can be set up before the provider sees it.
 */
export const ACCESS_PREFIX = "wcat_";
export const REFRESH_PREFIX = "wcrt_";

export function userIdFor(slug: string, memberId: string): string {
  return `${slug}.${memberId}`;
}

/** The store slug inside a provider token or code (after any prefix is removed). */
export function slugOfProviderToken(token: string): string | null {
  const slug = token.split(":")[0]?.split(".")[0] ?? "";
  return isSlug(slug) ? slug : null;
}

/**
 * Whether `token` (prefix removed) has the shape of a code or token this service issues:
 * `<store slug>.<member id>:<16-character grant id>:<32-character secret>`. The provider looks every one
 * up in KV under a key made of its parts, and KV refuses keys over 512 bytes with an error: anything
 * else names nothing we issued and is refused before the lookup.
 */
const PROVIDER_TOKEN = /^([a-z0-9-]{1,63})\.([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}):[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]{32}$/;

export function isProviderTokenShape(token: string): boolean {
  const m = PROVIDER_TOKEN.exec(token);
  return m !== null && isSlug(m[1]!);
}

/** The client ids the provider issues are 16 characters of this alphabet; a little room, far below KV's 512-byte keys. */
const CLIENT_ID = /^[A-Za-z0-9_-]{1,64}$/;

export const isClientIdShape = (clientId: string): boolean => CLIENT_ID.test(clientId);

export function unprefix(token: string): string {
  if (token.startsWith(ACCESS_PREFIX)) return token.slice(ACCESS_PREFIX.length);
  if (token.startsWith(REFRESH_PREFIX)) return token.slice(REFRESH_PREFIX.length);
  return token;
}

/**
 * A loopback host for an http redirect URI (SPEC: http only on loopback; RFC 8252 §7.3): `localhost`
 * exactly, `[::1]`, or an IPv4 literal in 127.0.0.0/8. The URL parser writes every IPv4 literal as four
 * decimal parts (0x7f.1 becomes 127.0.0.1) and refuses a host whose last label is a number but not an
 * address, so four decimal parts after it are an address; `127.evil.com` is a DNS name anyone can point
 * anywhere, and so are `*.localhost` names outside a browser.
 */
export function isLoopbackHost(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

const FORBIDDEN_SCHEMES = new Set(["http:", "https:", "javascript:", "data:", "file:", "vbscript:", "about:", "blob:", "ftp:", "ws:", "wss:"]);

/**
 * SPEC: redirect URIs must be https, http on a loopback host, or an app-specific (private-use) scheme
 * such as `com.example.app:/callback` or `cursor://…`. Anything else is refused at registration.
 */
export function redirectUriProblem(uri: unknown): string | null {
  if (typeof uri !== "string") return "is not a string";
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return "is not an absolute URI";
  }
  if (url.hash || url.username || url.password) return "must not carry a fragment or credentials";
  if (url.protocol === "https:") return null;
  if (url.protocol === "http:") return isLoopbackHost(url.hostname) ? null : "uses http on a host that is not loopback";
  if (!FORBIDDEN_SCHEMES.has(url.protocol) && /^[a-z][a-z0-9+.-]*:$/.test(url.protocol)) return null;
  return `uses the scheme ${url.protocol} which is not allowed`;
}

function redirectUrisProblem(uris: unknown): string | null {
  if (!Array.isArray(uris) || uris.length === 0) return "redirect_uris must list at least one URI.";
  for (const uri of uris) {
    const problem = redirectUriProblem(uri);
    if (problem) return `Redirect URI ${String(uri)} ${problem}. Use https, http on localhost/127.0.0.1/[::1], or an app-specific scheme.`;
  }
  return null;
}

function checkRegistration({ clientMetadata }: ClientRegistrationCallbackOptions) {
  const problem = redirectUrisProblem(clientMetadata["redirect_uris"]);
  return problem ? { code: "invalid_redirect_uri", description: problem } : undefined;
}

/** The authorization server for requests about one store's MCP resource (or none: metadata, registration). */
export function authServer(origin: string, slug: string | null): OAuthAuthorizationServer<AdminBindings> {
  return new OAuthAuthorizationServer<AdminBindings>({
    issuer: origin,
    resources: [slug ? mcpResourceUrl(origin, slug) : `${origin}/api/mcp`],
    authorizeEndpoint: `${origin}${OAUTH_PATHS.authorize}`,
    tokenEndpoint: `${origin}${OAUTH_PATHS.token}`,
    clientRegistrationEndpoint: `${origin}${OAUTH_PATHS.register}`,
    scopesSupported: [...AREA_SCOPES],
    accessTokenTTL: ACCESS_TOKEN_TTL,
    refreshTokenTTL: REFRESH_TOKEN_TTL,
    allowPrivateUseRedirectUris: true,
    clientRegistrationCallback: checkRegistration,
    // The provider's refusals are client mistakes, answered to the client with the reason: a debug line
    // through our logger (and its scrubber) instead of the library's own console.warn, so a client (or a
    // script) sending junk cannot fill the logs.
    onError: ({ status, code, internal }) => oauthLog.debug("OAuth error response", { status, code, category: internal.category, reason: internal.reason }),
  });
}

/**
 * Revoking a connection in Settings also deletes its tokens at the provider: the grants of that
 * member's provider user whose metadata names the `api_grant` row. (Postgres already refuses the row.)
 */
export async function revokeProviderGrant(env: AdminBindings, origin: string, grant: { storeSlug: string; memberId: string; apiGrantId: string }): Promise<void> {
  // Listing and revoking grants only touch KV; any valid issuer will do when this origin is not one
  // (plain http on a non-loopback host, as in some tests).
  const issuer = origin.startsWith("https://") || /^http:\/\/(localhost|127\.[0-9.]+|\[::1\])(:\d+)?$/.test(origin) ? origin : "http://localhost";
  const api = authServer(issuer, grant.storeSlug).getOAuthApi(env);
  const userId = userIdFor(grant.storeSlug, grant.memberId);
  let cursor: string | undefined;
  do {
    const page = await api.listUserGrants(userId, cursor ? { cursor } : {});
    for (const g of page.items) {
      if ((g.metadata as { apiGrantId?: unknown } | null)?.apiGrantId === grant.apiGrantId) await api.revokeGrant(g.id, userId);
    }
    cursor = page.cursor;
  } while (cursor);
}
