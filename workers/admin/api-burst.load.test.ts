import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, createToken, sessionFor } from "../../test/admin";
import { makeStore, testDb } from "../../test/harness";
import { adminFetch, mcpUrl } from "../../test/oauth";
import { proxyStats, reached } from "../../test/proxy";

/**
 * Bursts, as a crowd of clients would send them (concurrency, not timing). This project runs alone,
 * after every other suite (vitest.config.ts), so the local proxy's counts are this file's own: each
 * time a Worker reaches the database it is one HTTP request or one WebSocket connection at the proxy.
 */
const db = testDb();

const proxyAddress = (env as unknown as { DB_WS_PROXY: string }).DB_WS_PROXY;

async function tokenFor(areas: string[]) {
  const store = await makeStore(db);
  const owner = await sessionFor(db, store.ownerUserId, store.id);
  return { store, owner, ...(await createToken(owner, areas)) };
}

/**
 * One workerd thread runs every request of a burst here (production spreads them over isolates), so
 * the proxy's queue wait can pass the default 5 s connect timeout on a busy machine: give it room. The
 * point is that the proxy queues instead of refusing; db-unavailable.test.ts covers the timeout's 503.
 */
const ROOM = { DB_CONNECT_TIMEOUT_MS: "30000" };

const statusCounts = (statuses: number[]) => statuses.reduce<Record<number, number>>((n, s) => ({ ...n, [s]: (n[s] ?? 0) + 1 }), {});

describe("a burst for one grant", () => {
  it("200 concurrent token-API calls: exactly 120 answered 200 and 80 answered 429, none 5xx; the 80 never reach the database", async () => {
    const { token } = await tokenFor(["products:read"]);
    const before = await proxyStats(proxyAddress);
    const answers = await Promise.all(Array.from({ length: 200 }, () => api(token, "products/list", { pageSize: 1 }, {}, ROOM)));
    const after = await proxyStats(proxyAddress);
    expect(statusCounts(answers.map((r) => r.status))).toEqual({ 200: 120, 429: 80 });
    const refused = answers.find((r) => r.status === 429)!;
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    // Each answered call is one HTTP round trip before its answer and one after it (the read folded into
    // the grant's activity), over no WebSocket; the 80 refused calls reached the database not at all.
    expect(after.httpQueries - before.httpQueries).toBe(240);
    expect(after.connections - before.connections).toBe(0);
  });

  it("a grant already at its limit: 100 more concurrent calls never reach the database", async () => {
    const { token } = await tokenFor(["products:read"]);
    for (let i = 0; i < 4; i++) await Promise.all(Array.from({ length: 30 }, () => api(token, "products/list", { pageSize: 1 }, {}, ROOM)));
    const before = await proxyStats(proxyAddress);
    const answers = await Promise.all(Array.from({ length: 100 }, () => api(token, "products/list", { pageSize: 1 }, {}, ROOM)));
    expect(statusCounts(answers.map((r) => r.status))).toEqual({ 429: 100 });
    expect(reached(await proxyStats(proxyAddress)) - reached(before)).toBe(0);
  });

  it("MCP batches count each request: a batch that does not fit is refused whole, before the database", async () => {
    const { token, store } = await tokenFor(["products:read"]);
    const call = (id: number) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "listProducts", arguments: { pageSize: 1 } } });
    const batch = (from: number, size: number) =>
      adminFetch(mcpUrl(store.slug), {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` },
        body: JSON.stringify(Array.from({ length: size }, (_, i) => call(from + i))),
      });
    const six = await Promise.all(Array.from({ length: 6 }, (_, b) => batch(b * 20, 20)));
    expect(six.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const ran = (await Promise.all(six.map((r) => r.json() as Promise<{ result?: { isError?: boolean } }[]>))).flat();
    expect(ran.filter((a) => a.result && !a.result.isError)).toHaveLength(120);
    const before = await proxyStats(proxyAddress);
    const over = await batch(200, 20);
    expect(over.status).toBe(429);
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(reached(await proxyStats(proxyAddress)) - reached(before)).toBe(0);
  });
});

describe("a crowd over several grants", () => {
  it("400 concurrent calls over 4 grants: all 200, none 5xx, upstream connections within the proxy's bound", { timeout: 90_000 }, async () => {
    const grants = await Promise.all(Array.from({ length: 4 }, () => tokenFor(["products:read"])));
    await fetch(`http://${proxyAddress}/stats/reset`, { method: "POST" });
    const answers = await Promise.all(
      grants.flatMap(({ token }) => Array.from({ length: 100 }, () => api(token, "products/list", { pageSize: 1 }, {}, ROOM))),
    );
    const stats = await proxyStats(proxyAddress);
    expect(statusCounts(answers.map((r) => r.status))).toEqual({ 200: 400 });
    expect(stats.peakActive).toBeLessThanOrEqual(stats.limits.maxUpstream);
  });
});
