import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { createToken, sessionFor } from "../../test/admin";
import { makeStore, testDb } from "../../test/harness";
import { adminFetch, mcpUrl, SECURE_ADMIN } from "../../test/oauth";
import { MCP_BODY_LIMIT, MCP_MAX_BATCH } from "./mcp";

/** What the MCP door refuses before any tool runs: foreign origins, oversized or malformed batches. */
const db = testDb();

async function door() {
  const store = await makeStore(db);
  const { token } = await createToken(await sessionFor(db, store.ownerUserId, store.id), ["products:read"]);
  const post = (body: string, headers: Record<string, string> = {}) =>
    adminFetch(mcpUrl(store.slug), {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}`, ...headers },
      body,
    });
  return { store, token, post };
}

const list = (id: number) => ({ jsonrpc: "2.0", id, method: "tools/list" });
const callList = (id: number) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "listProducts", arguments: { pageSize: 1 } } });
const remaining = (res: Response) => Number(/r=(\d+)/.exec(res.headers.get("ratelimit") ?? "")?.[1]);
const readCalls = (storeId: string) =>
  withStore(db, storeId, (tx) => tx.$client.query<{ n: number }>("select coalesce(sum(count), 0)::int as n from api_activity where via = 'mcp'")).then((r) => r.rows[0]!.n);

describe("MCP door", () => {
  it("validates Origin: none (a non-browser client) and the admin's own pass, a foreign one is refused", async () => {
    const { post } = await door();
    expect((await post(JSON.stringify(list(1)))).status).toBe(200);
    expect((await post(JSON.stringify(list(1)), { origin: SECURE_ADMIN })).status).toBe(200);
    for (const origin of ["https://evil.example", "http://admin.test", "null", "https://admin.test.evil.example"]) {
      const res = await post(JSON.stringify(list(1)), { origin });
      expect(res.status, origin).toBe(403);
      expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32000);
    }
  });

  it("counts each JSON-RPC request of a batch against the grant's limit", async () => {
    const { post } = await door();
    const first = await post(JSON.stringify(list(1)));
    const batch = await post(JSON.stringify(Array.from({ length: 10 }, (_, i) => list(i + 2))));
    expect(batch.status).toBe(200);
    expect(remaining(first) - remaining(batch)).toBe(10);
    // A notification is not a request: a POST of notifications alone costs one call, not zero.
    const note = await post(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
    expect(note.status).toBe(202);
    expect(remaining(batch) - remaining(note)).toBe(1);
  });

  it(`refuses batches over ${MCP_MAX_BATCH} messages, empty ones and repeated ids before anything runs (the finding: batches of 100)`, async () => {
    const { post, store } = await door();
    for (const body of [Array.from({ length: 100 }, (_, i) => callList(i)), Array.from({ length: MCP_MAX_BATCH + 1 }, (_, i) => callList(i)), [], [callList(7), callList(7)]]) {
      const res = await post(JSON.stringify(body));
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32600);
    }
    expect(await readCalls(store.id)).toBe(0);
    const full = await post(JSON.stringify(Array.from({ length: MCP_MAX_BATCH }, (_, i) => callList(i))));
    expect(full.status).toBe(200);
    expect(((await full.json()) as unknown[]).length).toBe(MCP_MAX_BATCH);
  });

  it("answers a JSON parse error, and 413 for a body over the limit (even without a content-length)", async () => {
    const { post } = await door();
    const bad = await post("{not json");
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: number } }).error.code).toBe(-32700);
    const huge = JSON.stringify({ ...list(1), padding: "x".repeat(MCP_BODY_LIMIT) });
    expect((await post(huge)).status).toBe(413);
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(huge));
        controller.close();
      },
    });
    const streamed = await post(stream as unknown as string);
    expect(streamed.status).toBe(413);
  });
});

describe("text Postgres cannot store", () => {
  it("a NUL character in a search is a client mistake: a tool error naming BAD_REQUEST over MCP, 400 over /api/v1", async () => {
    const { post, token } = await door();
    const res = await post(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "listProducts", arguments: { query: "a\u0000b" } } }));
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { result: { isError: boolean; content: { text: string }[] } };
    expect(answer.result.isError).toBe(true);
    expect(JSON.parse(answer.result.content[0]!.text)).toMatchObject({ code: "BAD_REQUEST" });
    const api = await adminFetch(`${SECURE_ADMIN}/api/v1/products/list`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ json: { query: "a\u0000b" } }),
    });
    expect(api.status).toBe(400);
  });
});
