import { describe, expect, it } from "vitest";
import { api, createToken, page, rpc, rpcJson, sessionFor, ownerOf } from "../../test/admin";
import { withStore } from "#shared/db/with-store";
import { testDb } from "../../test/harness";
import { adminFetch, mcpUrl } from "../../test/oauth";
import { addMember } from "../../test/procedures";
import { traced } from "../../test/proxy";
import { TOOLS } from "#shared/assistant/tools";
import { isSessionProcedure, procedureKey, type StoreProcedure } from "#shared/procedures/define";
import { PROCEDURES } from "#shared/registry/procedures";

/**
 * Round trips to the database on the answer's path, counted by the local proxy for each traced request
 * (issue 19's goal table): a count, never a timing. Work after the answer is counted apart.
 */
const db = testDb();


const owner = () => ownerOf(db);

const READS = PROCEDURES.filter((p): p is StoreProcedure => !isSessionProcedure(p) && !p.mutates);

/** A valid input for a read: ids that name nothing (a 404 is still one round trip), a range for analytics. */
function inputFor(proc: StoreProcedure): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  const parsed = proc.input.safeParse({});
  if (parsed.success) return input;
  for (const issue of parsed.error.issues) {
    const field = String(issue.path[0]);
    input[field] = field === "from" || field === "to" ? "2026-01-01" : crypto.randomUUID();
  }
  return input;
}

describe("round trips: every read of the registry", () => {
  it("each read procedure has a plan, so every door sends it in one round trip", () => {
    expect(READS.filter((p) => !p.read).map(procedureKey)).toEqual([]);
  });

  it("each change is a write plan (at most two round trips), but approving an AI proposal", () => {
    // aiApprovals.approve runs the stored proposal's own procedure: it sends its own units, the change's
    // (shared/assistant/approval-units.ts; docs/decisions/0018-paths-above-the-goal.md).
    const changes = PROCEDURES.filter((p): p is StoreProcedure => !isSessionProcedure(p) && p.mutates);
    expect(changes.filter((p) => !p.write).map(procedureKey)).toEqual(["aiApprovals.approve"]);
  });

  it("each read is one round trip through /api/rpc as the Owner, whatever it answers", async () => {
    const { browser } = await owner();
    const counted: Record<string, number> = {};
    for (const proc of READS) {
      const { res, trips, body } = await traced((h) => rpc(browser, `${proc.router}/${proc.name}`, inputFor(proc), h));
      expect(res.status, `${procedureKey(proc)}: ${body}`).toBeLessThan(500);
      counted[procedureKey(proc)] = trips.turns;
    }
    expect(counted).toEqual(Object.fromEntries(READS.map((p) => [procedureKey(p), 1])));
  });

  it("searches are one round trip too: by words, by number, beside a filter, and for customers", async () => {
    const { browser } = await owner();
    const searches: [string, Record<string, unknown>][] = [
      ["orders/list", { query: "buyer example" }],
      ["orders/list", { query: "1001" }],
      ["orders/list", { query: "buy", status: "open" }],
      ["customers/list", { query: "shopper fixture" }],
    ];
    for (const [path, input] of searches) {
      const { res, trips, body } = await traced((h) => rpc(browser, path, input, h));
      expect({ path, input, status: res.status, trips: trips.turns }, body).toEqual({ path, input, status: 200, trips: 1 });
    }
  });

  it("each read tool is one round trip over MCP tools/call, with every area granted", async () => {
    const { store, browser } = await owner();
    const { token } = await createToken(browser, ["products:read", "orders:read", "customers:read", "inventory:read", "discounts:read", "content:read", "analytics:read"]);
    const counted: Record<string, number> = {};
    for (const tool of TOOLS.filter((t) => t.kind === "read")) {
      const { res, trips } = await traced((h) =>
        adminFetch(mcpUrl(store.slug), {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}`, ...h },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: tool.name, arguments: inputFor(tool.procedure) } }),
        }),
      );
      expect(res.status, tool.name).toBe(200);
      counted[tool.name] = trips.turns;
    }
    expect(Object.values(counted).every((n) => n === 1), JSON.stringify(counted)).toBe(true);
  });
});

describe("round trips: reads through the doors", () => {
  it("/api/rpc: a read is one round trip (session, member, permission and the page's statements together)", async () => {
    const { browser } = await owner();
    for (const [path, input] of [
      ["products/list", { pageSize: 5 }],
      ["staff/me", {}],
    ] as const) {
      const { res, trips, body } = await traced((h) => rpc(browser, path, input, h));
      expect(res.status, `${path}: ${body}`).toBe(200);
      expect(trips, path).toMatchObject({ turns: 1, httpQueries: 1, wsTurns: 0, connections: 0 });
    }
  });

  it("/api/rpc: refusals cost what they cost before, at most the one round trip", async () => {
    const { store, browser } = await owner();
    const signedOut = await traced((h) => rpc(null, "products/list", {}, h));
    expect(signedOut.res.status).toBe(401);
    expect(signedOut.trips.turns).toBe(0);
    const staff = await sessionFor(db, (await addMember(db, store, "staff")).userId, store.id);
    const denied = await traced((h) => rpc(staff, "analytics/summary", {}, h));
    expect(denied.res.status).toBe(403);
    expect(denied.trips.turns).toBe(1);
    const invalid = await traced((h) => rpc(browser, "products/list", { pageSize: 1000 }, h));
    expect(invalid.res.status).toBe(400);
    expect(invalid.trips.turns).toBe(1);
  });

  it("/api/v1: a read is one round trip; the activity fold runs after the answer", async () => {
    const { browser } = await owner();
    const { token } = await createToken(browser, ["products:read"]);
    const { res, trips, body } = await traced((h) => api(token, "products/list", { pageSize: 5 }, h));
    expect(res.status, body).toBe(200);
    expect(trips).toMatchObject({ turns: 1, httpQueries: 1, connections: 0 });
    expect(trips.after.turns).toBe(1);
    const badToken = await traced((h) => api("wc_live_" + "x".repeat(43), "products/list", {}, h));
    expect(badToken.res.status).toBe(401);
    expect(badToken.trips.turns).toBe(1);
  });

  it("MCP: tools/call of a read is one round trip, tools/list is one", async () => {
    const { store, browser } = await owner();
    const { token } = await createToken(browser, ["products:read"]);
    const post = (message: unknown) => (h: Record<string, string>) =>
      adminFetch(mcpUrl(store.slug), {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}`, ...h },
        body: JSON.stringify(message),
      });
    const called = await traced(post({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "listProducts", arguments: { pageSize: 2 } } }));
    expect(called.res.status).toBe(200);
    expect(called.body).not.toContain("isError");
    expect(called.trips.turns).toBe(1);
    const listed = await traced(post({ jsonrpc: "2.0", id: 2, method: "tools/list" }));
    expect(listed.res.status).toBe(200);
    expect(listed.trips.turns).toBe(1);
    const hidden = await traced(post({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "listCustomers", arguments: {} } }));
    expect(hidden.body).toMatch(/Tool listCustomers not found/);
    expect(hidden.trips.turns).toBe(1);
  });

  it("answers the same as the step-by-step path: the rpc read of a page matches products.list's contract", async () => {
    const { browser } = await owner();
    const res = await rpc(browser, "products/list", { pageSize: 1, page: 9 });
    expect(await rpcJson(res)).toMatchObject({ items: [], page: 9, pageSize: 1 });
  });
});

describe("round trips: admin pages", () => {
  /** Every page a member opens (the ids name fixture rows of a fresh store, or nothing: a 404 page is one trip too). */
  async function pagesOf(storeId: string) {
    const ids = await withStore(db, storeId, (tx) =>
      tx.$client.query<{ product: string; variant: string; customer: string; page: string; order: string; app: string | null }>(
        `select (select id from product limit 1) as product, (select id from product_variant limit 1) as variant,
           (select id from customer limit 1) as customer, (select id from page limit 1) as page,
           (select id from shop_order limit 1) as "order", (select id from store_app limit 1) as app`,
      ),
    ).then((r) => r.rows[0]!);
    return [
      "/", "/ai/approvals", "/assistant", "/customers", `/customers/${ids.customer}`, "/customers/new", "/discounts", "/inventory", `/inventory/${ids.variant}`,
      "/links", "/mailbox", "/marketing", "/notifications", "/orders", `/orders/${ids.order}`, "/pages", `/pages/${ids.page}`, "/products",
      `/products/${ids.product}`, "/products/new", "/settings", "/settings/api", "/settings/apps", `/settings/apps/${ids.app ?? crypto.randomUUID()}`,
      "/settings/domains", "/settings/sales-channels", "/team", "/select-store",
    ];
  }

  it("every store page is one round trip: session, member, chrome and every list it shows", async () => {
    const { store, browser } = await owner();
    const counted: Record<string, string> = {};
    for (const path of await pagesOf(store.id)) {
      const { res, trips } = await traced((h) => page(browser, path, { headers: h }));
      counted[path] = `${res.status} ${trips.turns}`;
    }
    expect(Object.entries(counted).filter(([, v]) => !/^(200|404) 1$/.test(v))).toEqual([]);
  });

  it("a Staff member's pages too (sections their role may not see answer nothing), and the 403 page", async () => {
    const { store } = await owner();
    const staff = await sessionFor(db, (await addMember(db, store, "staff")).userId, store.id);
    for (const path of ["/", "/orders", "/customers", "/inventory"]) {
      const { res, trips } = await traced((h) => page(staff, path, { headers: h }));
      expect(`${path} ${res.status} ${trips.turns}`).toBe(`${path} 200 1`);
    }
    const refused = await traced((h) => page(staff, "/settings", { headers: h }));
    expect(`${refused.res.status} ${refused.trips.turns}`).toBe("403 1");
  });
});

describe("round trips: changes", () => {
  it("products' changes through /api/rpc: at most two round trips each (one when nothing needs reading first)", async () => {
    const { browser } = await owner();
    const trips = async (path: string, input: unknown) => {
      const { res, trips: t, body } = await traced((h) => rpc(browser, path, input, h));
      expect(res.status, `${path}: ${body}`).toBe(200);
      return { turns: t.turns, body: JSON.parse(body) as { json: { id: string; variants: { id: string }[] } } };
    };
    const created = await trips("products/create", { title: "Round Trip Kurta", variants: [{ priceMinor: 1000 }, { title: "M", priceMinor: 1200 }] });
    expect(created.turns).toBe(2); // the free handle is read first
    const id = created.body.json.id;
    const [first, second] = created.body.json.variants;
    // A handle given needs nothing read first: one trip.
    expect((await trips("products/create", { title: "Given Handle", handle: `given-${crypto.randomUUID().slice(0, 8)}`, variants: [{ priceMinor: 1 }] })).turns).toBe(1);
    expect((await trips("products/update", { id, title: "Renamed", variants: [{ id: first!.id, priceMinor: 1100 }, { priceMinor: 1300 }] })).turns).toBe(1);
    expect((await trips("products/removeVariant", { productId: id, variantId: second!.id })).turns).toBe(1);
    expect((await trips("products/archive", { id })).turns).toBe(1);
    expect((await trips("products/delete", { id })).turns).toBe(1);
  });

  it("a change through /api/v1 is logged in its own unit: nothing after the answer", async () => {
    const { browser } = await owner();
    const { token } = await createToken(browser, ["products:write"]);
    const { res, trips, body } = await traced((h) => api(token, "products/create", { title: "Scripted", handle: `s-${crypto.randomUUID().slice(0, 8)}`, variants: [{ priceMinor: 5 }] }, h));
    expect(res.status, body).toBe(200);
    expect(trips.turns).toBeLessThanOrEqual(2);
    expect(trips.after.turns).toBe(0);
  });
});
