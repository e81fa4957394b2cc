import { auth } from "@modelcontextprotocol/sdk/client/auth.js";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { hit } from "#shared/limits/limit";
import type { RateLimiter } from "#shared/limits/rate-limiter";
import { REGISTER_POLICY } from "./oauth/routes";
import { makeStore, testDb } from "../../test/harness";
import { addMember } from "../../test/procedures";
import { randomIp, sessionFor } from "../../test/admin";
import { adminFetch, consent, MemoryOAuthClient, SECURE_ADMIN } from "../../test/oauth";

const db = testDb();
const limiter = (env as unknown as { RATE_LIMITER: DurableObjectNamespace<RateLimiter> }).RATE_LIMITER;
const mcpUrl = (slug: string) => `${SECURE_ADMIN}/api/mcp/${slug}`;

async function tokenRequest(fields: Record<string, string>, path = "/api/oauth/token"): Promise<Response> {
  return adminFetch(`${SECURE_ADMIN}${path}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields).toString(),
  });
}

/** Discovery, registration, sign-in and consent, code exchange: the SDK's own client against the Worker. */
async function connect(options: { areas?: string[]; role?: "owner" | "admin" | "staff"; scope?: string } = {}) {
  const store = await makeStore(db);
  const userId = options.role && options.role !== "owner" ? (await addMember(db, store, options.role)).userId : store.ownerUserId;
  const browser = await sessionFor(db, userId, store.id);
  const client = new MemoryOAuthClient(undefined, undefined, options.scope);
  expect(await auth(client, { serverUrl: mcpUrl(store.slug), fetchFn: adminFetch })).toBe("REDIRECT");
  const { redirect, page } = await consent(browser, client.authorizationUrl!, options.areas ? { areas: options.areas } : {});
  const code = redirect.searchParams.get("code")!;
  expect(await auth(client, { serverUrl: mcpUrl(store.slug), authorizationCode: code, fetchFn: adminFetch })).toBe("AUTHORIZED");
  return { store, browser, client, page, tokens: client.saved! };
}

describe("OAuth authorization server", () => {
  it("publishes RFC 8414 metadata: exact issuer, S256 only, our endpoints, the 14 area scopes", async () => {
    const res = await adminFetch(`${SECURE_ADMIN}/.well-known/oauth-authorization-server`);
    expect(res.status).toBe(200);
    const m = (await res.json()) as Record<string, unknown>;
    expect(m).toMatchObject({
      issuer: SECURE_ADMIN,
      authorization_endpoint: `${SECURE_ADMIN}/oauth/authorize`,
      token_endpoint: `${SECURE_ADMIN}/api/oauth/token`,
      registration_endpoint: `${SECURE_ADMIN}/api/oauth/register`,
      revocation_endpoint: `${SECURE_ADMIN}/api/oauth/revoke`,
      code_challenge_methods_supported: ["S256"],
    });
    expect(m["scopes_supported"]).toHaveLength(14);
    expect(m["protected_resources"]).toBeUndefined();
  });

  it("publishes RFC 9728 metadata per store; an unknown slug is 404", async () => {
    const store = await makeStore(db);
    const res = await adminFetch(`${SECURE_ADMIN}/.well-known/oauth-protected-resource/api/mcp/${store.slug}`);
    expect(await res.json()).toMatchObject({ resource: mcpUrl(store.slug), authorization_servers: [SECURE_ADMIN] });
    expect((await adminFetch(`${SECURE_ADMIN}/.well-known/oauth-protected-resource/api/mcp/no-such-store-zz`)).status).toBe(404);
  });

  it("runs the whole flow with the SDK client: discovery, registration, consent, code exchange; writes the oauth grant", async () => {
    const { store, tokens, page, client } = await connect({ areas: ["products:read", "orders:read"] });
    expect(page).toContain("Test MCP client");
    expect(page).toContain("127.0.0.1");
    expect(tokens.access_token).toMatch(/^wcat_/);
    expect(tokens.refresh_token).toMatch(/^wcrt_/);
    expect(tokens.expires_in).toBe(3600);
    expect(tokens.scope?.split(" ").sort()).toEqual(["orders:read", "products:read"]);
    const grants = await withStore(db, store.id, (tx) => tx.$client.query("select kind, areas, client_id, client_name from api_grant where kind = 'oauth'"));
    expect(grants.rows).toEqual([{ kind: "oauth", areas: ["products:read", "orders:read"], client_id: client.info!.client_id, client_name: "Test MCP client" }]);
  });

  it("offers the read areas when the client asks for none, and never more than the role allows", async () => {
    const { page } = await connect({ role: "staff" });
    expect(page).toContain('value="products:read"');
    expect(page).toContain('value="discounts:read"');
    expect(page).not.toContain('value="analytics:read"');
    const wants = await connect({ role: "staff", scope: "products:write analytics:read" });
    expect(wants.page).toContain('value="products:write"');
    expect(wants.page).toMatch(/Not offered \(beyond your role\): analytics:read/);
  });

  it("rotates both tokens on refresh; a rotated refresh token dies once its successor is used", async () => {
    const { client } = await connect();
    const clientId = client.info!.client_id;
    const r1 = client.saved!.refresh_token!;
    const first = (await (await tokenRequest({ grant_type: "refresh_token", refresh_token: r1, client_id: clientId })).json()) as Record<string, string>;
    expect(first["access_token"]).toMatch(/^wcat_/);
    expect(first["refresh_token"]).not.toBe(r1);
    const second = await tokenRequest({ grant_type: "refresh_token", refresh_token: first["refresh_token"]!, client_id: clientId });
    expect(second.status).toBe(200);
    const replay = await tokenRequest({ grant_type: "refresh_token", refresh_token: r1, client_id: clientId });
    expect(replay.status).toBe(400);
    expect(((await replay.json()) as { error: string }).error).toBe("invalid_grant");
  });

  it("refuses PKCE plain and a missing code challenge", async () => {
    const store = await makeStore(db);
    const browser = await sessionFor(db, store.ownerUserId, store.id);
    const client = new MemoryOAuthClient();
    await auth(client, { serverUrl: mcpUrl(store.slug), fetchFn: adminFetch });
    for (const change of [(u: URL) => u.searchParams.set("code_challenge_method", "plain"), (u: URL) => (u.searchParams.delete("code_challenge"), u.searchParams.delete("code_challenge_method"))]) {
      const url = new URL(client.authorizationUrl!);
      change(url);
      const res = await adminFetch(url.toString(), { headers: { cookie: browser.cookie }, redirect: "manual" });
      expect(res.status).toBe(302);
      const back = new URL(res.headers.get("location")!);
      expect(back.searchParams.get("error")).toBe("invalid_request");
    }
  });

  it("denying sends access_denied back to the client", async () => {
    const store = await makeStore(db);
    const browser = await sessionFor(db, store.ownerUserId, store.id);
    const client = new MemoryOAuthClient();
    await auth(client, { serverUrl: mcpUrl(store.slug), fetchFn: adminFetch });
    const { redirect } = await consent(browser, client.authorizationUrl!, { decision: "deny" });
    expect(redirect.searchParams.get("error")).toBe("access_denied");
  });

  it("sends a member who is not signed in to /login first, and asks for a store when no resource is named", async () => {
    const store = await makeStore(db);
    const client = new MemoryOAuthClient();
    await auth(client, { serverUrl: mcpUrl(store.slug), fetchFn: adminFetch });
    const res = await adminFetch(client.authorizationUrl!.toString(), { redirect: "manual" });
    expect(res.status).toBe(302);
    const location = res.headers.get("location")!;
    expect(location.startsWith("/login?next=%2Foauth%2Fauthorize%3F")).toBe(true);
    const browser = await sessionFor(db, store.ownerUserId, store.id);
    const bare = new URL(client.authorizationUrl!);
    bare.searchParams.delete("resource");
    const picker = await adminFetch(bare.toString(), { headers: { cookie: browser.cookie } });
    expect(await picker.text()).toContain(encodeURIComponent(mcpUrl(store.slug)));
  });

  it("refuses redirect URIs that are not https, loopback http or an app scheme; limits registrations per IP", async () => {
    const register = (uris: string[], ip = "198.51.100.7") =>
      adminFetch(`${SECURE_ADMIN}/api/oauth/register`, {
        method: "POST",
        headers: { "content-type": "application/json", "cf-connecting-ip": ip },
        body: JSON.stringify({ client_name: "x", redirect_uris: uris, token_endpoint_auth_method: "none" }),
      });
    const ip = randomIp();
    for (const good of [["https://app.example/cb"], ["http://localhost:3000/cb"], ["http://127.0.0.1/cb"], ["com.example.app:/oauth"], ["cursor://anysphere.cursor-mcp/oauth/callback"]]) {
      const res = await register(good, ip);
      expect({ good, status: res.status }).toEqual({ good, status: 201 });
    }
    for (const bad of [["http://evil.example/cb"], ["javascript:alert(1)"], ["https://ok.example/cb", "http://evil.example/cb"]]) {
      const res = await register(bad, ip);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe("invalid_redirect_uri");
    }
    let limited: Response | undefined;
    for (let i = 0; i < 20 && !limited; i++) {
      const res = await register(["https://app.example/cb"], ip);
      if (res.status === 429) limited = res;
    }
    expect(limited?.status).toBe(429);
    expect(Number(limited!.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("counts registrations from IPv6 by the /64 (one line), and its /48 with 4 times the number", async () => {
    const register = (ip: string) =>
      adminFetch(`${SECURE_ADMIN}/api/oauth/register`, {
        method: "POST",
        headers: { "content-type": "application/json", "cf-connecting-ip": ip },
        body: JSON.stringify({ client_name: "x", redirect_uris: ["https://app.example/cb"], token_endpoint_auth_method: "none" }),
      });
    const n = Math.floor(Math.random() * 0xfffe);
    const net = `2001:db8:${n.toString(16)}`;
    await hit(limiter, `register:${net}:1::/64`, REGISTER_POLICY, REGISTER_POLICY.limit);
    const sameLine = await register(`${net}:1::beef`);
    expect(sameLine.status).toBe(429);
    expect(((await sameLine.json()) as { error_description: string }).error_description).toBe(`At most ${REGISTER_POLICY.limit} registrations per hour from one address.`);
    const wide = { ...REGISTER_POLICY, limit: REGISTER_POLICY.limit * 4 };
    await hit(limiter, `register:${net}::/48`, wide, wide.limit);
    const sameNetwork = await register(`${net}:2::1`);
    expect(sameNetwork.status).toBe(429);
    expect(((await sameNetwork.json()) as { error_description: string }).error_description).toBe(`At most ${wide.limit} registrations per hour from one IPv6 /48 network.`);
    expect((await register(`2001:db8:${(n + 1).toString(16)}::1`)).status).toBe(201);
  });
});
