import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { call } from "../../test/call";
import { testDb } from "../../test/harness";
import { makeShop } from "../../test/storefront";
import worker from "./index";

/**
 * The Storefront MCP under a crowd of agents (concurrency, not timing; this project runs alone, after every
 * other suite): 200 concurrent searches from 200 addresses, each one unit of the store. All answered, no 5xx.
 */
const db = testDb();
/** One workerd thread serves the whole burst here: give the proxy's queue room (see crowd.load.test.ts). */
const ROOM = { DB_CONNECT_TIMEOUT_MS: "30000" };
const counts = (xs: (number | string)[]) => xs.reduce<Record<string, number>>((n, x) => ({ ...n, [x]: (n[x] ?? 0) + 1 }), {});

describe("a crowd of agents at the Storefront MCP", () => {
  it("200 concurrent search_catalog calls from 200 addresses: all 200, each finding the product (or, past the proxy's connections, a busy database to retry)", async () => {
    const s = await makeShop(db);
    await withStore(db, s.id, (tx) => tx.$client.query("update product set title = 'Indigo Kurta'"));
    const search = (i: number) =>
      call(
        worker,
        "http://storefront.test/api/mcp",
        {
          method: "POST",
          headers: { host: s.hostname, "cf-connecting-ip": `198.18.${i % 250}.${Math.floor(i / 250) + 1}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
          body: JSON.stringify({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "search_catalog", arguments: { query: i % 2 ? "kurta" : "indigo" } } }),
        },
        ROOM,
      );
    expect((await search(999)).status).toBe(200); // warms the host and the store's facts
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => search(i)));
    expect(counts(answers.map((r) => r.status))).toEqual({ 200: 200 });
    type Answer = { result?: { isError?: boolean; structuredContent?: { products: { title: string }[] }; content: { text: string }[] } };
    const bodies = await Promise.all(answers.map((r) => r.json() as Promise<Answer>));
    // Each finds the product, or (a dev machine's proxy past its 40 connections) says the database is busy:
    // a tool error the agent can retry, never a 5xx nor an error of ours.
    const outcome = (b: Answer) => (b.result?.structuredContent?.products[0]?.title === "Indigo Kurta" ? "found" : b.result?.isError ? JSON.parse(b.result.content[0]!.text).error.code : "other");
    const outcomes = counts(bodies.map(outcome));
    expect(Object.keys(outcomes).filter((k) => k !== "found" && k !== "SERVICE_UNAVAILABLE")).toEqual([]);
    expect(outcomes["found"]).toBeGreaterThanOrEqual(190);
  });
});
