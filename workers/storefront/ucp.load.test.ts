import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sendStoreUnit } from "#shared/db/unit";
import { newStoreKey, rotateKeyPlan, ucpSigningFromEnv } from "#shared/ucp/store-keys";
import { SHOPPER_LIMITS } from "#shared/limits/shopper";
import { call } from "../../test/call";
import { AGENT, BASE, db, ready, shop, sql } from "../../test/ucp";
import { UCP_VERSION } from "#shared/ucp/profile";
import worker from "./index";

/**
 * UCP's doors under a crowd (concurrency, not timing; this project runs alone, after every other suite):
 * 300 concurrent session creates from three addresses and 200 concurrent profile reads. No 5xx; each address
 * gets exactly its limit, the rest 429 before any database work.
 */
/** One workerd thread serves the whole burst here: give the proxy's queue room (see crowd.load.test.ts). */
const ROOM = { DB_CONNECT_TIMEOUT_MS: "30000" };
const counts = (xs: number[]) => xs.reduce<Record<string, number>>((n, x) => ({ ...n, [x]: (n[x] ?? 0) + 1 }), {});
const platforms = { fetch: async () => Response.json({ ucp: { version: UCP_VERSION, services: {}, capabilities: {}, payment_handlers: {} }, keys: [] }) };

describe("a crowd of agents at UCP's doors", () => {
  it("300 concurrent session creates from 3 addresses: each address gets its limit (201, or a busy database's 503 to retry), the rest 429; never another 5xx", async () => {
    const s = await shop();
    const create = (i: number) =>
      call(
        worker,
        `http://storefront.test${BASE}`,
        {
          method: "POST",
          headers: { host: s.hostname, "cf-connecting-ip": `198.18.77.${(i % 3) + 1}`, "ucp-agent": AGENT, "content-type": "application/json" },
          body: JSON.stringify(ready(s.variantId, 1)),
        },
        { ...ROOM, UCP_AGENT_FETCH: platforms },
      );
    const statuses = (await Promise.all(Array.from({ length: 300 }, (_, i) => create(i)))).map((r) => r.status);
    const seen = counts(statuses);
    const limit = SHOPPER_LIMITS.ucp.address.limit;
    expect(Object.keys(seen).filter((k) => !["201", "429", "503"].includes(k))).toEqual([]);
    expect(seen[429]).toBe(300 - 3 * limit);
    expect((seen[201] ?? 0) + (seen[503] ?? 0)).toBe(3 * limit);
    expect(seen[201]).toBeGreaterThanOrEqual(3 * limit - 10);
    // One session per 201; a 503 may have come after its commit (a connection lost on the way back), which is
    // why agents send an Idempotency-Key; a refused request (429) wrote nothing.
    const [{ n }] = await sql(s, "select count(*)::int as n from ucp_checkout_session where agent_profile = 'https://agent.example.com/.well-known/ucp'");
    expect(n).toBeGreaterThanOrEqual(seen[201]!);
    expect(n).toBeLessThanOrEqual(seen[201]! + (seen[503] ?? 0));
  });

  it("200 concurrent reads of the store's profile from 200 addresses: all 200, one profile", async () => {
    const s = await shop();
    // Its signing key, as turning agentic checkout on makes one.
    const key = await newStoreKey(ucpSigningFromEnv(env as unknown as Record<string, unknown>), s.id);
    await sendStoreUnit(db, s.id, (q) => rotateKeyPlan(q, key), { readOnly: false });
    const read = (i: number) => call(worker, "http://storefront.test/.well-known/ucp", { headers: { host: s.hostname, "cf-connecting-ip": `198.18.${78 + (i % 2)}.${Math.floor(i / 2) + 1}` } }, ROOM);
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => read(i)));
    expect(counts(answers.map((r) => r.status))).toEqual({ 200: 200 });
    expect(new Set(answers.map((r) => r.headers.get("etag"))).size).toBe(1);
  });
});
