import { describe, expect, it } from "vitest";
import { MAX_INPUT_DEPTH } from "#shared/core/storable";
import { createToken, ownerOf, page, postForm, rpc, rpcJson, type RpcError } from "../../test/admin";
import { nested } from "../../test/fuzz";
import { testDb } from "../../test/harness";
import { adminFetch, mcpUrl } from "../../test/oauth";

/**
 * Issue 20 items 18, 19 and 21 at the admin's doors (docs/decisions/0023-inputs-at-the-door.md): one date
 * type for every input, text Postgres cannot hold and nesting refused with the field named, MCP params
 * errors as -32602.
 */
const db = testDb();

async function refusal(res: Response): Promise<{ status: number; path: string | undefined; message: string | undefined }> {
  const body = await rpcJson<RpcError>(res);
  return { status: res.status, path: body.data?.issues?.[0]?.path, message: body.data?.issues?.[0]?.message };
}

describe("dates: one type, years 0001-9999 once the offset is applied", () => {
  it("refuses year 0000 and offsets that leave the range with a 400 naming the field (was a 500 from Postgres)", async () => {
    const { browser } = await ownerOf(db);
    const cases: [string, Record<string, unknown>, string][] = [
      ["orders/list", { placedFrom: "0000-01-01T00:00:00Z" }, "placedFrom"],
      ["orders/list", { placedTo: "0001-01-01T00:30:00+01:00" }, "placedTo"],
      ["orders/list", { placedFrom: "9999-12-31T23:00:00-05:00" }, "placedFrom"],
      ["jobs/failures", { since: "0000-06-01T00:00:00Z" }, "since"],
      ["discounts/create", { code: "RANGE1", kind: "percentage", value: 5, endsAt: "9999-12-31T23:59:59-00:01" }, "endsAt"],
      ["campaigns/create", { name: "Far", subject: "Far", body: "Far", audience: "subscribers", startsAt: "0000-12-31T23:59:59Z" }, "startsAt"],
      ["analytics/summary", { from: "0000-01-01", to: "0000-01-02" }, "from"],
      ["analytics/summary", { from: "0001-01-01", to: "0001-01-01", utcOffset: "+05:30" }, "from"],
      ["analytics/summary", { from: "9999-12-31", to: "9999-12-31", utcOffset: "-05:30" }, "to"],
    ];
    for (const [procedure, input, field] of cases) {
      const answer = await refusal(await rpc(browser, procedure, input));
      expect({ procedure, input, ...answer }).toMatchObject({ procedure, input, status: 400, path: field });
    }
    const edge = await refusal(await rpc(browser, "orders/list", { placedFrom: "9999-12-31T23:00:00-05:00" }));
    expect(edge.message).toBe("must fall between the years 0001 and 9999 (UTC, after its offset)");
  });

  it("keeps the years 0001-0099 as written, in and out of Postgres (was moved to 1901-1999)", async () => {
    const { browser } = await ownerOf(db);
    const created = await rpc(browser, "discounts/create", { code: "ANCIENT", kind: "percentage", value: 5, startsAt: "0050-06-15T12:00:00Z", endsAt: "0099-12-31T23:59:59.999Z" });
    expect(created.status).toBe(200);
    expect(await rpcJson(created)).toMatchObject({ startsAt: "0050-06-15T12:00:00.000Z", endsAt: "0099-12-31T23:59:59.999Z" });
    const listed = await rpcJson<{ items: { code: string; startsAt: string; endsAt: string }[] }>(await rpc(browser, "discounts/list", { query: "ANCIENT" }));
    expect(listed.items.find((d) => d.code === "ANCIENT")).toMatchObject({ startsAt: "0050-06-15T12:00:00.000Z", endsAt: "0099-12-31T23:59:59.999Z" });
    // The first and last instants an input may name are accepted.
    expect((await rpc(browser, "orders/list", { placedFrom: "0001-01-01T00:00:00Z", placedTo: "9999-12-31T23:59:59.999Z" })).status).toBe(200);
    expect((await rpc(browser, "analytics/summary", { from: "0001-01-01", to: "0001-01-01" })).status).toBe(200);
  });

  it("the orders page shows a day out of range next to its field, never a server error", async () => {
    const { browser } = await ownerOf(db);
    // India's day 0001-01-01 begins in the year 0000 (UTC); the day after 9999-12-31 is past the range.
    for (const query of ["from=0000-01-01", "to=9999-12-31", "from=0001-01-01"]) {
      const res = await page(browser, `/orders?${query}`);
      expect({ query, status: res.status }).toEqual({ query, status: 400 });
      expect(await res.text()).toMatch(/id="(from|to)-error"[^>]*>[^<]+/);
    }
  });
});

describe("what no input may carry, at every procedure door", () => {
  it("a NUL anywhere is a 400 naming the field, at the RPC and the token API", async () => {
    const { browser } = await ownerOf(db);
    const { token } = await createToken(browser, ["products:read", "customers:write"]);
    const viaRpc = await refusal(await rpc(browser, "products/list", { query: "a\u0000b" }));
    expect(viaRpc).toEqual({ status: 400, path: "query", message: "contains a NUL character (\\u0000), which cannot be stored; remove it" });
    const viaApi = await adminFetch("http://admin.test/api/v1/customers/create", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ json: { email: "nul@example.test", note: "x\u0000" } }),
    });
    expect(await refusal(viaApi)).toMatchObject({ status: 400, path: "note" });
  });

  it("a page's read and the sign-in form refuse a NUL before Postgres sees it (sign-in was a 500)", async () => {
    const { browser } = await ownerOf(db);
    const list = await page(browser, "/products?query=a%00b");
    expect(list.status).toBe(400);
    expect(await list.text()).toContain("contains a NUL character");
    const signIn = await postForm(null, "/login", { email: "owner\u0000@example.test", password: "correct horse battery" });
    expect(signIn.status).toBe(400);
    expect(await signIn.text()).toContain("holds a character no address has");
  });

  it(`nesting deeper than ${MAX_INPUT_DEPTH} levels is a 400 naming where (JSON.stringify on the way to jsonb would overflow the stack)`, async () => {
    const { browser } = await ownerOf(db);
    const answer = await refusal(await rpc(browser, "products/create", { title: "Deep", variants: nested(5_000) }));
    expect(answer.status).toBe(400);
    expect(answer.path).toMatch(/^variants(\.(a|0))+$/);
    expect(answer.message).toBe(`is nested deeper than ${MAX_INPUT_DEPTH} levels`);
  });
});

describe("MCP params", () => {
  async function door() {
    const { store, browser } = await ownerOf(db);
    const { token } = await createToken(browser, ["products:read"]);
    return (body: unknown) =>
      adminFetch(mcpUrl(store.slug), {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
      }).then(async (res) => ({ status: res.status, body: (await res.json()) as unknown }));
  }

  it("tools/call with arguments of the wrong type or no params is -32602 with a readable message (was -32603 and zod's issues)", async () => {
    const post = await door();
    for (const [params, says] of [
      [{ name: "listProducts", arguments: "pageSize=1" }, "params.arguments: expected record, received string"],
      [{ name: "listProducts", arguments: [1] }, "params.arguments: expected record, received array"],
      [undefined, "params: expected object, received undefined"],
      [{ arguments: {} }, "params.name: expected string, received undefined"],
    ] as const) {
      const { status, body } = await post({ jsonrpc: "2.0", id: 7, method: "tools/call", ...(params ? { params } : {}) });
      expect(status).toBe(200);
      const error = (body as { error: { code: number; message: string } }).error;
      expect(error.code).toBe(-32602);
      expect(error.message).toBe(`Invalid params: ${says}. tools/call takes params {"name": "<tool>", "arguments": {<the tool's fields>}} (arguments an object, or left out).`);
    }
  });

  it("in a batch, only the request with bad params is refused; the others are answered", async () => {
    const post = await door();
    const { body } = await post([
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "listProducts", arguments: { pageSize: 1 } } },
      { jsonrpc: "2.0", id: 2, method: "tools/list", params: 5 },
      { jsonrpc: "2.0", id: 3, method: "tools/call" },
    ]);
    const byId = new Map((body as { id: number; error?: { code: number }; result?: unknown }[]).map((m) => [m.id, m]));
    expect(byId.get(1)?.result).toBeDefined();
    expect(byId.get(2)?.error?.code).toBe(-32602);
    expect(byId.get(3)?.error?.code).toBe(-32602);
  });
});
