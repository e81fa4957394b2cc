import fc from "fast-check";
import { beforeAll, describe, it } from "vitest";
import { AREA_SCOPES } from "#shared/auth/grants";
import { isSessionProcedure, procedureKey, type Procedure } from "#shared/procedures/define";
import { PROCEDURES } from "#shared/registry/procedures";
import { ADMIN, createToken, ownerOf, type Browser } from "../../test/admin";
import {
  answered,
  classExamples,
  controlText,
  expectNoServerError,
  fuzzRuns,
  hostileObject,
  hostileValue,
  hugeText,
  nested,
  nulText,
  propertiesOf,
  wellFormed,
  wrongType,
} from "../../test/fuzz";
import { testDb, type TestStore } from "../../test/harness";
import { call } from "../../test/call";
import { adminFetch, mcpUrl, SECURE_ADMIN } from "../../test/oauth";
import worker from "./index";

/**
 * Generated hostile input at every admin door (issue 20 item 22; docs/decisions/0023-inputs-at-the-door.md):
 * every procedure of the registry through the RPC (a signed-in Owner) and the token API (a token with every
 * area), the raw bodies both doors read, every OAuth endpoint and the MCP door. The property, for each
 * answer: never a 5xx, a 4xx says why, no SQL, file path or stack in the body. Seeded (test/fuzz.ts).
 */
const db = testDb();

/** Runs per procedure and door: about 650 requests in all. */
const RUNS_PER_PROCEDURE = { rpc: 4, v1: 3 };
/** The token API allows 120 calls a minute per grant: a fresh token for each 100. */
const CALLS_PER_TOKEN = 100;

let store: TestStore;
let browser: Browser;
const tokens: string[] = [];
let tokenCalls = 0;

async function nextToken(): Promise<string> {
  if (tokens.length === 0 || tokenCalls >= CALLS_PER_TOKEN) {
    tokens.unshift((await createToken(browser, [...AREA_SCOPES], { name: `Fuzz ${tokens.length + 1}` })).token);
    tokenCalls = 0;
  }
  tokenCalls++;
  return tokens[0]!;
}

const pathOf = (p: Procedure) => `${p.router}/${p.name}`;
const ip = () => `10.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;

beforeAll(async () => {
  ({ store, browser } = await ownerOf(db));
});

/** Bodies no serializer of ours would write: a door must refuse them as they come. */
const RAW_BODIES = ["{", '{"json":', "null", "[]", '"json"', '{"json": "\\u0000"}', `{"json": ${"[".repeat(50_000)}${"]".repeat(50_000)}}`, `{"json": {"a": ${'{"a":'.repeat(20_000)}1${"}".repeat(20_000)}}}`, "\u0000"];

type Door = keyof typeof RUNS_PER_PROCEDURE;

/** Every procedure with its class examples and generated input, then the raw bodies, through one door. */
async function eachProcedure(door: Door, procs: readonly Procedure[], send: (path: string, body: string) => Promise<Response>): Promise<void> {
  for (const proc of procs) {
    const properties = propertiesOf(proc.input);
    await fc.assert(
      fc.asyncProperty(hostileObject(properties), async (input) => {
        expectNoServerError(`${door} ${procedureKey(proc)}`, input, await answered(await send(pathOf(proc), JSON.stringify({ json: input }))));
      }),
      fuzzRuns(RUNS_PER_PROCEDURE[door], classExamples(properties)),
    );
  }
  for (const body of RAW_BODIES) expectNoServerError(`${door} raw`, body.slice(0, 40), await answered(await send("products/list", body)));
}

describe("every procedure, generated input", () => {
  it("through the admin RPC, as a signed-in Owner; raw bodies too", async () => {
    await eachProcedure("rpc", PROCEDURES, (path, body) =>
      call(worker, `${ADMIN}/api/rpc/${path}`, { method: "POST", headers: { "content-type": "application/json", origin: ADMIN, cookie: browser.cookie }, body }),
    );
  });

  it("through the token API, with a token of every area; raw bodies too", async () => {
    const forTokens = PROCEDURES.filter((p) => !isSessionProcedure(p) && p.access !== "none");
    await eachProcedure("v1", forTokens, async (path, body) =>
      call(worker, `${ADMIN}/api/v1/${path}`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${await nextToken()}` }, body }),
    );
  });
});

// A code or token shaped as the provider's, `<user>:<grant>:<secret>`, with parts of any length.
const threeParts = fc
  .tuple(fc.integer({ min: 1, max: 400 }), fc.integer({ min: 1, max: 300 }), fc.integer({ min: 1, max: 300 }))
  .map(([a, b, c]) => `s.${"m".repeat(a)}:${"g".repeat(b)}:${"s".repeat(c)}`);
const longId = fc.integer({ min: 500, max: 2_000 }).map((n) => "c".repeat(n));
const hostileText = fc.oneof(controlText, nulText, hugeText.map((s) => s.slice(0, 10_000)), threeParts, longId, fc.string({ maxLength: 20 }));
/** HTTP Basic credentials of any text (UTF-8, form-encoded as RFC 6749 §2.3.1 asks; a lone surrogate as it is). */
const formEncoded = (s: string) => (wellFormed(s) === s ? encodeURIComponent(s) : s);
const basicOf = (id: string, secret: string) => `Basic ${btoa(String.fromCharCode(...new TextEncoder().encode(`${formEncoded(id)}:${formEncoded(secret)}`)))}`;
const withPrefix = fc.tuple(fc.constantFrom("", "wcat_", "wcrt_"), threeParts).map(([p, t]) => `${p}${t}`);

/** A form of some of these fields, each hostile or plausible. */
const hostileForm = (fields: Record<string, fc.Arbitrary<string>>) =>
  fc.record(Object.fromEntries(Object.entries(fields).map(([k, plausible]) => [k, fc.oneof(plausible, hostileText)])), { requiredKeys: [] });

const form = (path: string, fields: Record<string, string | undefined>, headers: Record<string, string> = {}) =>
  adminFetch(`${SECURE_ADMIN}${path}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", "cf-connecting-ip": ip(), ...headers },
    body: new URLSearchParams(Object.entries(fields).flatMap(([k, v]) => (v === undefined ? [] : [[k, v]]))).toString(),
  });

const uri = fc.oneof(
  fc.constantFrom("https://app.example/cb", "http://127.0.0.1:33418/callback", "cursor://cb", "https://*.example/cb", "https://app.example/cb#frag", "http://evil.example/cb", "javascript:alert(1)", "https://app.example/c b"),
  hostileText,
);

describe("every OAuth endpoint, generated input", () => {
  it("registration: junk metadata, wrong types, nesting past any stack", async () => {
    const metadata = fc.oneof(
      fc.record(
        {
          redirect_uris: fc.oneof(fc.array(uri, { maxLength: 12 }), uri.map((u) => Array.from({ length: 1000 }, () => u)), hostileValue),
          client_name: fc.oneof(hostileText, hostileValue),
          client_uri: fc.oneof(uri, hostileValue),
          logo_uri: uri,
          contacts: fc.oneof(fc.array(hostileText, { maxLength: 12 }), hostileValue),
          grant_types: fc.oneof(fc.constant(["authorization_code", "refresh_token"]), fc.array(hostileText, { maxLength: 8 }), hostileValue),
          token_endpoint_auth_method: fc.oneof(fc.constantFrom("none", "client_secret_basic", "private_key_jwt"), hostileText),
          scope: hostileText,
          [`client_name#${"x".repeat(3)}`]: hostileText,
        },
        { requiredKeys: [] },
      ),
      wrongType,
      fc.integer({ min: 33, max: 5_000 }).map((d) => ({ redirect_uris: ["https://app.example/cb"], jwks: nested(d) })),
    );
    await fc.assert(
      fc.asyncProperty(metadata, async (m) => {
        const res = await adminFetch(`${SECURE_ADMIN}/api/oauth/register`, {
          method: "POST",
          headers: { "content-type": "application/json", "cf-connecting-ip": ip() },
          body: JSON.stringify(m),
        });
        expectNoServerError("register", m, await answered(res));
      }),
      fuzzRuns(60),
    );
    for (const body of ["{", `${"[".repeat(100_000)}${"]".repeat(100_000)}`, `{"redirect_uris": ${"[".repeat(10_000)}${"]".repeat(10_000)}}`]) {
      const res = await adminFetch(`${SECURE_ADMIN}/api/oauth/register`, { method: "POST", headers: { "content-type": "application/json", "cf-connecting-ip": ip() }, body });
      expectNoServerError("register raw", body.slice(0, 40), await answered(res));
    }
  });

  it("token and revocation: client ids, codes and tokens of any length and shape, Basic credentials", async () => {
    const tokenForm = hostileForm({
      grant_type: fc.constantFrom("authorization_code", "refresh_token", "client_credentials"),
      client_id: fc.constant("AbCdEfGhIjKlMnOp"),
      client_secret: fc.string({ maxLength: 40 }),
      code: withPrefix,
      refresh_token: withPrefix,
      code_verifier: fc.string({ minLength: 43, maxLength: 60 }),
      redirect_uri: fc.constant("http://127.0.0.1:33418/callback"),
      resource: fc.constant(mcpUrl("fuzz-store")),
    });
    const basic = fc.option(
      fc.tuple(fc.oneof(longId, hostileText.map((t) => t.slice(0, 2_000))), fc.string({ maxLength: 20 })).map(([id, secret]) => basicOf(id, secret)),
      { nil: undefined },
    );
    await fc.assert(
      fc.asyncProperty(tokenForm, basic, async (fields, authorization) => {
        const headers: Record<string, string> = authorization ? { authorization } : {};
        expectNoServerError("token", fields, await answered(await form("/api/oauth/token", fields, headers)));
      }),
      fuzzRuns(60),
    );
    const revokeForm = hostileForm({
      token: withPrefix,
      token_type_hint: fc.constantFrom("access_token", "refresh_token"),
      client_id: fc.constant("AbCdEfGhIjKlMnOp"),
    });
    await fc.assert(
      fc.asyncProperty(revokeForm, async (fields) => {
        expectNoServerError("revoke", fields, await answered(await form("/api/oauth/revoke", fields)));
      }),
      fuzzRuns(40),
    );
  });

  it("authorization: the request's query, the consent form, the metadata addresses", async () => {
    const query = hostileForm({
      response_type: fc.constant("code"),
      client_id: fc.oneof(fc.constant("AbCdEfGhIjKlMnOp"), longId),
      redirect_uri: uri,
      code_challenge: fc.string({ minLength: 43, maxLength: 43 }),
      code_challenge_method: fc.constantFrom("S256", "plain"),
      state: fc.string({ maxLength: 20 }),
      scope: fc.constantFrom("products:read", "nope"),
      resource: fc.constantFrom(mcpUrl(`fuzz`), "https://elsewhere.example/api/mcp/x"),
    });
    await fc.assert(
      fc.asyncProperty(query, async (q) => {
        const url = `${SECURE_ADMIN}/oauth/authorize?${new URLSearchParams(q as Record<string, string>)}`.slice(0, 16_000);
        expectNoServerError("authorize", q, await answered(await call(worker, url, { headers: { cookie: browser.cookie }, redirect: "manual" })));
      }),
      fuzzRuns(40),
    );
    const consent = hostileForm({ handle: fc.string({ maxLength: 60 }), csrf: fc.constant(browser.csrf), resource: fc.constant(mcpUrl(store.slug)), decision: fc.constantFrom("approve", "deny"), areas: fc.constantFrom(...AREA_SCOPES) });
    await fc.assert(
      fc.asyncProperty(consent, async (fields) => {
        expectNoServerError("consent", fields, await answered(await form("/oauth/authorize", fields, { origin: SECURE_ADMIN, cookie: browser.cookie })));
      }),
      fuzzRuns(20),
    );
    await fc.assert(
      fc.asyncProperty(hostileText, async (slug) => {
        const path = `${SECURE_ADMIN}/.well-known/oauth-protected-resource/api/mcp/${encodeURIComponent(slug)}`.slice(0, 16_000);
        expectNoServerError("resource metadata", slug, await answered(await adminFetch(path)));
      }),
      fuzzRuns(15),
    );
  });
});

describe("the MCP door, generated messages", () => {
  it("tools/call and tools/list with params and arguments of every class; bearer tokens of any shape", async () => {
    const message = fc.record(
      {
        jsonrpc: fc.oneof(fc.constant("2.0"), wrongType),
        id: fc.oneof(fc.integer({ min: 1, max: 1_000 }), fc.string({ maxLength: 8 }), wrongType),
        method: fc.oneof(fc.constantFrom("tools/call", "tools/list", "initialize", "ping"), hostileText),
        params: fc.oneof(
          fc.record({ name: fc.oneof(fc.constantFrom("listProducts", "listOrders", "getAnalyticsSummary"), hostileText), arguments: fc.oneof(hostileObject({ query: "string", page: "number", placedFrom: "date" }), hostileValue) }, { requiredKeys: [] }),
          hostileValue,
        ),
      },
      { requiredKeys: ["jsonrpc", "method"] },
    );
    const body = fc.oneof({ weight: 4, arbitrary: message }, { weight: 1, arbitrary: fc.array(message, { minLength: 1, maxLength: 4 }) });
    await fc.assert(
      fc.asyncProperty(body, async (b) => {
        const res = await adminFetch(mcpUrl(store.slug), {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${await nextToken()}` },
          body: JSON.stringify(b),
        });
        expectNoServerError("mcp", b, await answered(res));
      }),
      fuzzRuns(60),
    );
    await fc.assert(
      fc.asyncProperty(fc.oneof(withPrefix, hostileText.filter((t) => !/[\r\n\u0000-\u001f\u007f-\uffff]/.test(t))), async (bearer) => {
        const res = await adminFetch(mcpUrl(store.slug), {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${bearer}` },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
        });
        expectNoServerError("mcp bearer", bearer.slice(0, 60), await answered(res));
      }),
      fuzzRuns(20),
    );
  });
});
