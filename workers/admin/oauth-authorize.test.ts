import { env } from "cloudflare:workers";
import { auth } from "@modelcontextprotocol/sdk/client/auth.js";
import { describe, expect, it } from "vitest";
import { makeStore, testDb } from "../../test/harness";
import { PASSWORD, person, randomIp } from "../../test/admin";
import { adminFetch, mcpUrl, MemoryOAuthClient, SECURE_ADMIN } from "../../test/oauth";
import type { AdminBindings } from "./env";
import { authServer } from "./oauth/server";

const db = testDb();
const CALLBACK = "http://127.0.0.1:33418/callback";

/** A registered client's authorization URL for a fresh store (resource, S256 challenge) with a state. */
async function authorizationUrl(slug?: string): Promise<URL> {
  const client = new MemoryOAuthClient(CALLBACK);
  await auth(client, { serverUrl: mcpUrl(slug ?? (await makeStore(db)).slug), fetchFn: adminFetch });
  const url = new URL(client.authorizationUrl!);
  url.searchParams.set("state", "s-123");
  return url;
}

const open = (url: URL, cookie?: string) => adminFetch(url.toString(), { redirect: "manual", ...(cookie ? { headers: { cookie } } : {}) });

/** Requests whose client or redirect_uri cannot be trusted: an error page, never a redirect. */
const UNTRUSTED: [string, (u: URL) => void, string][] = [
  ["an unknown client", (u) => u.searchParams.set("client_id", "no-such-client"), "Invalid client_id"],
  ["no client", (u) => u.searchParams.delete("client_id"), "client_id is required"],
  ["an unregistered redirect_uri", (u) => u.searchParams.set("redirect_uri", "https://evil.example/callback"), "Invalid redirect URI"],
  ["a registered redirect_uri with another path", (u) => u.searchParams.set("redirect_uri", "http://127.0.0.1:33418/other"), "Invalid redirect URI"],
  ["no redirect_uri", (u) => u.searchParams.delete("redirect_uri"), "Invalid redirect URI"],
];

/** Requests from a trusted client that are wrong otherwise: back to the client with the RFC's error code. */
const REFUSED: [string, (u: URL) => void, string][] = [
  ["PKCE plain", (u) => u.searchParams.set("code_challenge_method", "plain"), "invalid_request"],
  ["no code_challenge", (u) => (u.searchParams.delete("code_challenge"), u.searchParams.delete("code_challenge_method")), "invalid_request"],
  ["a code_challenge_method without a code_challenge", (u) => u.searchParams.delete("code_challenge"), "invalid_request"],
  ["a code_challenge without a method (plain by default)", (u) => u.searchParams.delete("code_challenge_method"), "invalid_request"],
  ["response_type token", (u) => u.searchParams.set("response_type", "token"), "unsupported_response_type"],
  ["no response_type", (u) => u.searchParams.delete("response_type"), "invalid_request"],
  ["the MCP URL of no store", (u) => u.searchParams.set("resource", mcpUrl("no-such-store-zz")), "invalid_target"],
  ["another origin's MCP URL", (u) => u.searchParams.set("resource", `https://evil.example/api/mcp/${u.searchParams.get("resource")!.split("/").pop()}`), "invalid_target"],
  ["a resource that is not a URL", (u) => u.searchParams.set("resource", "not a url"), "invalid_target"],
  ["the MCP prefix without a store", (u) => u.searchParams.set("resource", `${SECURE_ADMIN}/api/mcp`), "invalid_target"],
  ["two resources", (u) => u.searchParams.append("resource", mcpUrl("no-such-store-zz")), "invalid_target"],
];

describe("GET /oauth/authorize checks the request before asking anyone to sign in", () => {
  it.each(UNTRUSTED)("%s: a 400 error page, no redirect", async (_name, change, reason) => {
    const url = await authorizationUrl();
    change(url);
    const res = await open(url);
    expect(res.status).toBe(400);
    expect(res.headers.get("location")).toBeNull();
    expect(res.headers.get("content-type")).toMatch(/text\/html/);
    expect(await res.text()).toContain(reason);
  });

  it("a client kept with an http redirect URI on a DNS name that only starts like loopback (127.evil.com): a 400 error page, no redirect", async () => {
    // Registered before the rule was exact (the registration door refuses it now): its record as KV keeps it.
    const bindings = env as unknown as AdminBindings;
    const api = authServer(SECURE_ADMIN, null).getOAuthApi(bindings);
    const store = await makeStore(db);
    for (const redirect of ["http://127.evil.com/cb", "http://127.0.0.1.evil.com/cb", "http://localhost.evil.com/cb"]) {
      const client = await api.createClient({ redirectUris: ["https://old-app.example/cb"], clientName: "Old App", tokenEndpointAuthMethod: "none" });
      const record = await bindings.OAUTH_KV.get(`client:${client.clientId}`, "json");
      await bindings.OAUTH_KV.put(`client:${client.clientId}`, JSON.stringify({ ...(record as object), redirectUris: [redirect] }));
      const url = new URL(`${SECURE_ADMIN}/oauth/authorize`);
      for (const [k, v] of Object.entries({ response_type: "code", client_id: client.clientId, redirect_uri: redirect, code_challenge: "c".repeat(43), code_challenge_method: "S256", state: "s-123", resource: mcpUrl(store.slug) })) {
        url.searchParams.set(k, v);
      }
      const res = await open(url);
      expect({ redirect, status: res.status, location: res.headers.get("location") }).toEqual({ redirect, status: 400, location: null });
      expect(await res.text()).toContain("uses http on a host that is not loopback");
    }
  });

  it.each(REFUSED)("%s: back to the client's redirect_uri with error, state and iss", async (_name, change, error) => {
    const url = await authorizationUrl();
    change(url);
    const res = await open(url);
    expect(res.status).toBe(302);
    const back = new URL(res.headers.get("location")!);
    expect(back.origin + back.pathname).toBe(CALLBACK);
    expect(back.searchParams.get("error")).toBe(error);
    expect(back.searchParams.get("state")).toBe("s-123");
    expect(back.searchParams.get("iss")).toBe(SECURE_ADMIN);
    expect(back.searchParams.get("code")).toBeNull();
  });

  it("a good request, with or without a resource, asks to sign in and comes back to the same request", async () => {
    const p = await person(db);
    const url = await authorizationUrl(p.stores[0]!.slug);
    const bare = new URL(url);
    bare.searchParams.delete("resource");
    for (const request of [url, bare]) {
      const res = await open(request);
      expect(res.status).toBe(302);
      expect(res.headers.get("location")).toBe(`/login?next=${encodeURIComponent(request.pathname + request.search)}`);
    }
    // Sign in with that next: the member lands on the consent page of the very same request.
    const signedIn = await adminFetch(`${SECURE_ADMIN}/login`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: SECURE_ADMIN, "cf-connecting-ip": randomIp() },
      body: new URLSearchParams({ email: p.email, password: PASSWORD, next: url.pathname + url.search }).toString(),
      redirect: "manual",
    });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get("location")).toBe(url.pathname + url.search);
    const cookie = signedIn.headers.get("set-cookie")!.split(";")[0]!;
    const consent = await open(new URL(signedIn.headers.get("location")!, SECURE_ADMIN), cookie);
    expect(consent.status).toBe(200);
    expect(await consent.text()).toContain(`Connect Test MCP client to ${p.stores[0]!.name}?`);
  });
});
