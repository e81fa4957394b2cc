import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call } from "../../test/call";
import { testDb, uniqueSuffix } from "../../test/harness";
import { proxyStats, reached } from "../../test/proxy";
import { makeShop } from "../../test/storefront";
import worker from "./index";

/**
 * The storefront under a crowd (concurrency, not timing). This project runs alone, after every other
 * suite, so the local proxy's counts (HTTP requests, WebSocket connections) are this file's own.
 */
const db = testDb();
const proxyAddress = (env as unknown as { DB_WS_PROXY: string }).DB_WS_PROXY;
/** One workerd thread serves the whole burst here: give the proxy's queue room (see api-burst.load.test.ts). */
const ROOM = { DB_CONNECT_TIMEOUT_MS: "30000" };

const get = (host: string, path: string, headers: Record<string, string> = {}) =>
  call(worker, `http://storefront.test${path}`, { headers: { host, ...headers }, redirect: "manual" }, ROOM);
const counts = (xs: (number | string)[]) => xs.reduce<Record<string, number>>((n, x) => ({ ...n, [x]: (n[x] ?? 0) + 1 }), {});
const edge = (res: Response) => /edge;desc="(\w+)"/.exec(res.headers.get("server-timing") ?? "")?.[1] ?? "none";

describe("a crowd at the storefront", () => {
  it("300 concurrent shoppers on a warm product page: all 200 from the edge cache, the database never reached", async () => {
    const s = await makeShop(db);
    expect((await get(s.hostname, "/products/fixture")).status).toBe(200); // warms host, facts and page
    const before = await proxyStats(proxyAddress);
    const answers = await Promise.all(Array.from({ length: 300 }, () => get(s.hostname, "/products/fixture")));
    const after = await proxyStats(proxyAddress);
    expect(counts(answers.map((r) => r.status))).toEqual({ 200: 300 });
    expect(counts(answers.map(edge))).toEqual({ hit: 300 });
    expect(reached(after) - reached(before)).toBe(0);
  });

  it("300 concurrent requests for a made-up hostname: 404 from the negative entry, the database never reached", async () => {
    const host = `nobody-${uniqueSuffix()}.example.test`;
    expect((await get(host, "/")).status).toBe(404);
    const before = await proxyStats(proxyAddress);
    const answers = await Promise.all(Array.from({ length: 300 }, () => get(host, "/products/x")));
    expect(counts(answers.map((r) => r.status))).toEqual({ 404: 300 });
    expect(reached(await proxyStats(proxyAddress)) - reached(before)).toBe(0);
  });

  it("300 concurrent cold pages and new shoppers' cart adds: all answered, no 5xx, one round trip each", async () => {
    const s = await makeShop(db);
    await get(s.hostname, "/"); // warms host and facts
    const before = await proxyStats(proxyAddress);
    const pages = Array.from({ length: 200 }, (_, i) => get(s.hostname, `/search?q=fix&n=${i}`));
    const adds = Array.from({ length: 100 }, () =>
      call(
        worker,
        "http://storefront.test/api/cart/lines",
        { method: "POST", headers: { host: s.hostname, "content-type": "application/json" }, body: JSON.stringify({ variantId: s.variantId, quantity: 1 }) },
        ROOM,
      ),
    );
    const answers = await Promise.all([...pages, ...adds]);
    const after = await proxyStats(proxyAddress);
    // A cart reserves nothing (checkout does), so each new shopper may put one of the 5 units in theirs.
    expect(counts(answers.map((r) => r.status))).toEqual({ 200: 300 });
    expect(answers.slice(200).every((r) => (r.headers.get("set-cookie") ?? "").startsWith("wc_cart="))).toBe(true);
    expect(after.connections - before.connections).toBe(0);
    expect(after.httpQueries - before.httpQueries).toBe(300);
    expect(counts(answers.slice(0, 200).map(edge))).toEqual({ miss: 200 });
  });

  it("400 concurrent cart adds from one address: its 300 a minute answered, 100 refused with 429 and Retry-After, none 5xx; the refused never reach the database", async () => {
    const s = await makeShop(db);
    await get(s.hostname, "/"); // warms host and facts
    const before = await proxyStats(proxyAddress);
    const add = () =>
      call(
        worker,
        "http://storefront.test/api/cart/lines",
        { method: "POST", headers: { host: s.hostname, "content-type": "application/json", "cf-connecting-ip": "203.0.113.200" }, body: JSON.stringify({ variantId: s.variantId, quantity: 1 }) },
        ROOM,
      );
    const answers = await Promise.all(Array.from({ length: 400 }, add));
    const after = await proxyStats(proxyAddress);
    expect(counts(answers.map((r) => r.status))).toEqual({ 200: 300, 429: 100 });
    expect(answers.filter((r) => r.status === 429).every((r) => Number(r.headers.get("retry-after")) >= 1)).toBe(true);
    // One round trip for each answered add, over no WebSocket; nothing for the 100 refused.
    expect(after.httpQueries - before.httpQueries).toBe(300);
    expect(after.connections - before.connections).toBe(0);
  });
});
