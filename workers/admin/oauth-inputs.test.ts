import { randomIp } from "../../test/admin";
import { describe, expect, it } from "vitest";
import { nested } from "../../test/fuzz";
import { testDb } from "../../test/harness";
import { adminFetch, connectMcpClient, SECURE_ADMIN } from "../../test/oauth";
import { MAX_REDIRECT_URIS } from "./oauth/registration";

/**
 * Issue 20 item 20 (docs/decisions/0023-inputs-at-the-door.md): what cannot name anything we issued is
 * refused with the RFC's error before the provider looks it up in KV (whose keys hold 512 bytes: a longer
 * one was a 500), and registration refuses junk metadata as RFC 7591 lets it.
 */
const db = testDb();

const LONG_CLIENT = "c".repeat(600);
/** Three parts, as the provider's tokens, but each far longer: the KV key would be over 512 bytes. */
const LONG_TOKEN = `demo.${"m".repeat(300)}:${"g".repeat(200)}:${"s".repeat(200)}`;

const ip = randomIp;

function post(path: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  return adminFetch(`${SECURE_ADMIN}${path}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(fields).toString(),
  });
}

async function oauthAnswer(res: Response): Promise<{ status: number; error: unknown }> {
  const text = await res.text();
  return { status: res.status, error: text ? (JSON.parse(text) as { error?: unknown }).error : undefined };
}

function register(metadata: unknown) {
  return adminFetch(`${SECURE_ADMIN}/api/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json", "cf-connecting-ip": ip() },
    body: typeof metadata === "string" ? metadata : JSON.stringify(metadata),
  });
}

describe("client ids, codes and tokens longer than any we issue (was a 500 from KV)", () => {
  it("authorize: a client_id of 600 bytes is a 400 page, no redirect", async () => {
    const url = `${SECURE_ADMIN}/oauth/authorize?${new URLSearchParams({ response_type: "code", client_id: LONG_CLIENT, redirect_uri: "http://127.0.0.1:33418/callback", code_challenge: "x".repeat(43), code_challenge_method: "S256" })}`;
    const res = await adminFetch(url, { redirect: "manual" });
    expect(res.status).toBe(400);
    expect(res.headers.get("location")).toBeNull();
    expect(await res.text()).toContain("no app is registered with this client_id");
  });

  it("token: a long client_id (form or HTTP Basic) is invalid_client; a long code or refresh token is invalid_grant", async () => {
    const code = { grant_type: "authorization_code", code_verifier: "v".repeat(50), redirect_uri: "http://127.0.0.1:33418/callback" };
    expect(await oauthAnswer(await post("/api/oauth/token", { ...code, client_id: LONG_CLIENT, code: "a:b:c" }))).toEqual({ status: 401, error: "invalid_client" });
    const basic = `Basic ${btoa(`${LONG_CLIENT}:secret`)}`;
    const viaBasic = await post("/api/oauth/token", { ...code, code: "a:b:c" }, { authorization: basic });
    expect(await oauthAnswer(viaBasic)).toEqual({ status: 401, error: "invalid_client" });
    expect(await oauthAnswer(await post("/api/oauth/token", { ...code, client_id: "AbCdEfGhIjKlMnOp", code: LONG_TOKEN }))).toEqual({ status: 400, error: "invalid_grant" });
    expect(await oauthAnswer(await post("/api/oauth/token", { grant_type: "refresh_token", client_id: "AbCdEfGhIjKlMnOp", refresh_token: `wcrt_${LONG_TOKEN}` }))).toEqual({
      status: 400,
      error: "invalid_grant",
    });
  });

  it("revoke: a token that is not one of ours is answered 200 (RFC 7009 §2.2); a long client_id is invalid_client", async () => {
    const { oauth } = await connectMcpClient(db);
    const clientId = oauth.info!.client_id;
    for (const token of [`wcat_${LONG_TOKEN}`, LONG_TOKEN, "junk", `wcrt_${"x".repeat(5_000)}`]) {
      const res = await post("/api/oauth/revoke", { token, client_id: clientId });
      expect({ token: token.slice(0, 20), status: res.status }).toEqual({ token: token.slice(0, 20), status: 200 });
    }
    expect(await oauthAnswer(await post("/api/oauth/revoke", { token: LONG_TOKEN, client_id: LONG_CLIENT }))).toEqual({ status: 401, error: "invalid_client" });
    // A real token is still revoked.
    const revoked = await post("/api/oauth/revoke", { token: oauth.saved!.access_token, client_id: clientId });
    expect(revoked.status).toBe(200);
  });
});

describe("registration refuses junk metadata (RFC 7591 §3.2.2)", () => {
  const good = "https://app.example/cb";

  it("refuses deeply nested JSON (was a 500) and a body that is not an object", async () => {
    expect(await oauthAnswer(await register({ redirect_uris: [good], jwks: nested(10_000) }))).toEqual({ status: 400, error: "invalid_client_metadata" });
    expect(await oauthAnswer(await register(`${"[".repeat(100_000)}${"]".repeat(100_000)}`))).toEqual({ status: 400, error: "invalid_client_metadata" });
    expect(await oauthAnswer(await register("{"))).toEqual({ status: 400, error: "invalid_request" });
  });

  it("redirect URIs: wildcards, fragments, controls, duplicates and too many are invalid_redirect_uri", async () => {
    const cases: [unknown, string][] = [
      [["https://*.example/cb"], "must be exact: no wildcards (*)"],
      [["https://app.example/*"], "must be exact: no wildcards (*)"],
      [["https://app.example/cb#x"], "must not carry a fragment (#)"],
      [["https://app.example/cb#"], "must not carry a fragment (#)"],
      [["https://app.example/\u0000cb"], "contains a NUL character"],
      [["https://app.example/\u0007cb"], "contains control characters"],
      [["http://evil.example/cb"], "uses http on a host that is not loopback"],
      [["http://127.evil.com/cb"], "uses http on a host that is not loopback"],
      [["http://127.0.0.1.nip.io/cb"], "uses http on a host that is not loopback"],
      [["http://localhost.evil.com/cb"], "uses http on a host that is not loopback"],
      [["http://app.localhost/cb"], "uses http on a host that is not loopback"],
      [["http://[::ffff:127.0.0.1]/cb"], "uses http on a host that is not loopback"],
      [Array.from({ length: 1000 }, () => good), `lists at most ${MAX_REDIRECT_URIS} redirect URIs`],
      [[good, good], "lists the same URI twice"],
      [Array.from({ length: MAX_REDIRECT_URIS + 1 }, (_, i) => `${good}${i}`), `lists at most ${MAX_REDIRECT_URIS} redirect URIs`],
      [[`https://app.example/${"p".repeat(2_001)}`], "is longer than 2000 characters"],
      [[], "must list at least one redirect URI"],
      ["https://app.example/cb", "must be a list of redirect URIs"],
    ];
    for (const [uris, says] of cases) {
      const res = await register({ redirect_uris: uris, client_name: "Junk" });
      const body = (await res.json()) as { error: string; error_description: string };
      expect({ uris: JSON.stringify(uris).slice(0, 60), status: res.status, error: body.error }).toEqual({ uris: JSON.stringify(uris).slice(0, 60), status: 400, error: "invalid_redirect_uri" });
      expect(body.error_description).toContain(says);
    }
  });

  it("names of 100 KB or with control characters, and other fields out of bounds, are invalid_client_metadata", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ client_name: "x".repeat(100_000) }, "client_name is longer than 200 characters."],
      [{ client_name: "Good\u0007App" }, "client_name contains control characters."],
      [{ client_name: "   " }, "client_name is empty."],
      [{ client_name: 42 }, "client_name expected string, received number."],
      [{ client_uri: "javascript:alert(1)" }, "client_uri must be an https URL."],
      [{ contacts: Array.from({ length: 11 }, (_, i) => `a${i}@example.test`) }, "contacts lists at most 10 contacts."],
      [{ grant_types: ["authorization_code", "refresh token"] }, "grant_types[1] must be a single registered value"],
    ];
    for (const [extra, says] of cases) {
      const res = await register({ redirect_uris: [good], ...extra });
      const body = (await res.json()) as { error: string; error_description: string };
      expect({ extra: Object.keys(extra)[0], status: res.status, error: body.error }).toEqual({ extra: Object.keys(extra)[0], status: 400, error: "invalid_client_metadata" });
      expect(body.error_description).toContain(says);
    }
  });

  it("registers honest metadata, keeping only the fields it understands", async () => {
    const res = await register({ redirect_uris: [good, "http://127.0.0.1:33418/callback", "cursor://anysphere.cursor-retrieval/oauth/callback"], client_name: "Honest App", token_endpoint_auth_method: "none", unknown_field: { deep: [1, 2] }, "client_name#fr": "Appli" });
    expect(res.status).toBe(201);
    // Loopback is localhost, [::1] or any IPv4 literal of 127.0.0.0/8 (the URL parser writes 0x7f.1 as 127.0.0.1).
    for (const loopback of ["http://localhost:3000/cb", "http://[::1]:8080/cb", "http://127.1.2.3/cb", "http://0x7f.1/cb"]) {
      const ok = await register({ redirect_uris: [loopback], client_name: "Loopback App" });
      expect({ loopback, status: ok.status }).toEqual({ loopback, status: 201 });
    }
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ client_name: "Honest App", token_endpoint_auth_method: "none" });
    expect(body["unknown_field"]).toBeUndefined();
    expect(body["client_name#fr"]).toBeUndefined();
  });
});
