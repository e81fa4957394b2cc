import createClient from "openapi-fetch";
import { describe, expect, it } from "vitest";
import { AREA_SCOPES } from "#shared/auth/grants";
import { procedureKey } from "#shared/procedures/define";
import { openApiDocument, proposedAnswerSchema, tokenProcedures } from "#shared/registry/openapi";
import { PROCEDURES } from "#shared/registry/procedures";
import type { paths } from "../../test/generated/api-v1";
import { ADMIN, api, createToken, rpc, rpcJson, sessionFor } from "../../test/admin";
import { call } from "../../test/call";
import { makeStore, testDb } from "../../test/harness";
import { adminFetch, connectMcpClient, SECURE_ADMIN } from "../../test/oauth";
import worker from "./index";

const db = testDb();

/** The client openapi-typescript's types make of the document, calling this Worker's real fetch handler. */
const client = createClient<paths>({ baseUrl: ADMIN, fetch: (request) => call(worker, request) });

describe("GET /api/v1/openapi.json", () => {
  it("serves the registry's document for this admin without a bearer, cookies or not, cacheable", async () => {
    const res = await call(worker, `${ADMIN}/api/v1/openapi.json`, { headers: { cookie: "session=whatever" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("public, max-age=300");
    const doc = (await res.json()) as ReturnType<typeof openApiDocument>;
    expect(doc).toEqual(JSON.parse(JSON.stringify(openApiDocument(ADMIN))));
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.servers).toEqual([{ url: ADMIN }]);
    expect(Object.keys(doc.paths)).toContain("/api/v1/products/list");
    // The resource metadata the bearer scheme points OAuth clients at is really there.
    const metadata = /(http:\/\/admin\.test\/\.well-known\/oauth-protected-resource\/api\/v1)/.exec(doc.components.securitySchemes.bearer.description)?.[1];
    expect(metadata).toBeTruthy();
    expect((await call(worker, metadata!)).status).toBe(200);
  });

  it("leaves the token API's own answers alone: a GET of a procedure is still 405, a POST of the document 404", async () => {
    expect((await call(worker, `${ADMIN}/api/v1/products/list`)).status).toBe(405);
    expect((await call(worker, `${ADMIN}/api/v1/openapi.json`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })).status).toBe(404);
  });
});

describe("the document's claims at the door", () => {
  it("each listed operation runs for a token with just its x-required-area; each left out is refused to a token with every area", async () => {
    const store = await makeStore(db);
    const owner = await sessionFor(db, store.ownerUserId, store.id);
    const doc = openApiDocument(ADMIN);
    const tokens = new Map<string, string>();
    const tokenFor = async (areas: string[]) => {
      const key = areas.join(" ");
      if (!tokens.has(key)) tokens.set(key, (await createToken(owner, areas)).token);
      return tokens.get(key)!;
    };
    const wrong: string[] = [];
    for (const [path, { post }] of Object.entries(doc.paths)) {
      const res = await api(await tokenFor([post["x-required-area"]]), path.replace("/api/v1/", ""), {});
      // An empty input may well be a 400 or a 404; never the token's refusal (the door's other answers are
      // permission-matrix.test.ts's and the procedures' own tests' business).
      if (res.status === 401 || res.status === 403) wrong.push(`${path} with ${post["x-required-area"]}: ${res.status}`);
    }
    const listed = new Set(tokenProcedures().map(procedureKey));
    const everything = await tokenFor([...AREA_SCOPES]);
    for (const p of PROCEDURES.filter((p) => !listed.has(procedureKey(p)))) {
      const res = await api(everything, `${p.router}/${p.name}`, {});
      if (res.status !== 403) wrong.push(`${procedureKey(p)} (left out) with every area: ${res.status}`);
    }
    expect(wrong).toEqual([]);
    expect(listed.size).toBe(Object.keys(doc.paths).length);
  });
});

describe("a client generated from the document (openapi-typescript types, openapi-fetch)", () => {
  it("lists and reads a store's products with a created token, typed end to end", async () => {
    const store = await makeStore(db);
    const { token } = await createToken(await sessionFor(db, store.ownerUserId, store.id), ["products:read"]);
    const headers = { authorization: `Bearer ${token}` };
    const listed = await client.POST("/api/v1/products/list", { headers, body: { json: { page: 1, pageSize: 10 } } });
    expect(listed.response.status).toBe(200);
    expect(listed.response.headers.get("ratelimit-policy")).toMatch(/^"default";q=\d+;w=\d+$/);
    const items = listed.data!.json.items;
    expect(items.map((p) => p.title)).toEqual(["Fixture"]);
    const got = await client.POST("/api/v1/products/get", { headers, body: { json: { id: items[0]!.id } } });
    expect(got.data!.json.title).toBe("Fixture");
  });

  it("sends the Idempotency-Key the document declares, and a retried create replays its first answer", async () => {
    const store = await makeStore(db);
    const { token } = await createToken(await sessionFor(db, store.ownerUserId, store.id), ["products:write"]);
    const params = { header: { "Idempotency-Key": crypto.randomUUID() } };
    const body = { json: { title: "Typed and retried", variants: [{ priceMinor: 49_900 }] } };
    const headers = { authorization: `Bearer ${token}` };
    const first = await client.POST("/api/v1/products/create", { headers, params, body });
    expect(first.response.status).toBe(200);
    const again = await client.POST("/api/v1/products/create", { headers, params, body });
    expect(again.response.headers.get("idempotent-replayed")).toBe("true");
    const created = first.data!.json as { id: string; title: string };
    expect(again.data!.json).toMatchObject({ id: created.id, title: "Typed and retried" });
    const other = await client.POST("/api/v1/products/create", { headers, params, body: { json: { ...body.json, title: "Another body" } } });
    expect(other.response.status).toBe(422);
    expect(other.error!.json).toMatchObject({ code: "UNPROCESSABLE_CONTENT", data: { reason: "idempotency_key_reused" } });
  });

  it("answers the closed error shape the document declares", async () => {
    const refused = await client.POST("/api/v1/products/list", { body: { json: {} } });
    expect(refused.response.status).toBe(401);
    expect(refused.error!.json).toMatchObject({ code: "UNAUTHORIZED", data: { reason: "no_token" } });
    const store = await makeStore(db);
    const { token } = await createToken(await sessionFor(db, store.ownerUserId, store.id), ["products:read"]);
    const bad = await client.POST("/api/v1/products/list", { headers: { authorization: `Bearer ${token}` }, body: { json: { page: 0 } } });
    expect(bad.response.status).toBe(400);
    expect(bad.error!.json.data?.issues?.[0]?.path).toBe("page");
  });

  it("answers 202 with the document's proposal when an AI client's change needs approval", async () => {
    const connected = await connectMcpClient(db, { areas: ["products:write"] });
    const owner = connected.browser;
    expect((await rpc(owner, "mcpSettings/update", { allowChanges: true })).status).toBe(200);
    const product = (await rpcJson<{ items: { id: string }[] }>(await rpc(owner, "products/list", {}))).items[0]!;
    const oauthClient = createClient<paths>({ baseUrl: SECURE_ADMIN, fetch: (request) => adminFetch(request) });
    const proposed = await oauthClient.POST("/api/v1/products/update", {
      headers: { authorization: `Bearer ${connected.oauth.saved!.access_token}` },
      body: { json: { id: product.id, title: "Proposed through the generated client" } },
    });
    expect(proposed.response.status).toBe(202);
    const answer = proposed.data!.json;
    expect(proposedAnswerSchema.parse(answer).proposal).toMatchObject({ status: "pending", summary: expect.stringContaining("Proposed through") });
  });
});
