import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { hashPassword } from "#shared/auth/password";
import { sendStoreUnit } from "#shared/db/unit";
import { SHOPPER_LIMITS } from "#shared/limits/shopper";
import { businessProfile } from "#shared/ucp/profile";
import { KEY_GRACE_DAYS, newStoreKey, publishedKeysPlan, rotateKeyPlan, ucpSigningFromEnv } from "#shared/ucp/store-keys";
import worker from "./index";
import { call } from "../../test/call";
import { makeShop } from "../../test/storefront";
import { newTrace, tripsOf } from "../../test/proxy";
import { db, ip, shop, sql, type Json } from "../../test/ucp";
import type { TestStore } from "../../test/harness";

/**
 * The store's UCP profile at `/.well-known/ucp` (issue 26 item 2; docs/ucp.md) through the real Worker and
 * Postgres: the switch, the store's own keys on its own domain, rotation's grace, caching (ETag, 304), the
 * password, the limit before any database work, one round trip. The specification's JSON Schema is checked in
 * Node (workerd refuses the validator's generated code) on an answer recorded from this door
 * (shared/ucp/profile-door.node.test.ts); here a live answer must be that answer for its own hostname and keys.
 */
const proxy = (env as unknown as { DB_WS_PROXY: string }).DB_WS_PROXY;
const PATH = "/.well-known/ucp";
const config = ucpSigningFromEnv(env as unknown as Record<string, unknown>);

async function get(host: string, headers: Record<string, string> = {}, method = "GET") {
  const res = await call(worker, `http://storefront.test${PATH}`, { method, headers: { host, "cf-connecting-ip": ip(), ...headers } });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: (text ? JSON.parse(text) : null) as Json | null };
}

const rotate = async (s: TestStore) => {
  const key = await newStoreKey(config, s.id);
  await sendStoreUnit(db, s.id, (q) => rotateKeyPlan(q, key), { readOnly: false });
  return key.publicJwk;
};

const publishedKeys = (s: TestStore) => sendStoreUnit(db, s.id, publishedKeysPlan);

/**
 * The answer shared/ucp/profile-door.node.test.ts validates against the specification's schema (workerd cannot
 * compile it), recorded from this Worker: a live answer must be it, with this store's hostname and keys.
 */
const recorded = JSON.parse(Object.values(import.meta.glob("../../test/fixtures/ucp/recorded/profile.json", { query: "?raw", import: "default", eager: true }))[0] as string) as {
  host: string;
  body: Json;
};
const asRecorded = (host: string, keys: unknown[]) => ({ ...(JSON.parse(JSON.stringify(recorded.body).replaceAll(recorded.host, host)) as Json), keys });

describe("the store's UCP profile at /.well-known/ucp", () => {
  it("answers 404 while agentic checkout is off, not cached, in the protocol's shape", async () => {
    const s = await makeShop(db);
    await rotate(s);
    const off = await get(s.hostname);
    expect(off.status).toBe(404);
    expect(off.body).toEqual({ code: "not_found", content: expect.any(String) });
    expect(off.headers.get("cache-control")).toBe("no-store");
    expect(off.text).not.toContain("keys");
    // An unknown hostname answers the same way (JSON, not the storefront's error page).
    const unknown = await get(`nobody-${crypto.randomUUID().slice(0, 8)}.shop.test`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("content-type")).toMatch(/^application\/json/);
    expect(Object.keys(unknown.body!).sort()).toEqual(["code", "content"]);
  });

  it("while on: the store's profile for the hostname asked, with its published keys, cacheable and open to any origin", async () => {
    const s = await shop();
    const key = await rotate(s);
    const r = await get(s.hostname);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^application\/json/);
    expect(r.body).toEqual(JSON.parse(JSON.stringify(businessProfile(`https://${s.hostname}`, [key]))));
    expect(r.body!["keys"]).toEqual([key]);
    expect(r.text).not.toMatch(/"d":/);
    expect(r.body!["ucp"]["services"]["dev.ucp.shopping"].map((x: Json) => x["endpoint"])).toEqual([`https://${s.hostname}/api/ucp`, `https://${s.hostname}/api/mcp`]);
    const maxAge = Number(/max-age=(\d+)/.exec(r.headers.get("cache-control") ?? "")?.[1]);
    expect(r.headers.get("cache-control")).toMatch(/^public, /);
    expect(maxAge).toBeGreaterThanOrEqual(60);
    expect(r.headers.get("access-control-allow-origin")).toBe("*");

    // HEAD: the same headers, no body.
    const head = await get(s.hostname, {}, "HEAD");
    expect(head.status).toBe(200);
    expect(head.text).toBe("");
    expect(head.headers.get("etag")).toBe(r.headers.get("etag"));
  });

  it("a strong ETag of the body: If-None-Match answers 304 with no body; a changed profile another tag", async () => {
    const s = await shop();
    await rotate(s);
    const first = await get(s.hostname);
    const etag = first.headers.get("etag")!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    expect((await get(s.hostname)).headers.get("etag")).toBe(etag);
    for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, "*"]) {
      const again = await get(s.hostname, { "if-none-match": ifNoneMatch });
      expect(again.status, ifNoneMatch).toBe(304);
      expect(again.text).toBe("");
      expect(again.headers.get("etag")).toBe(etag);
      expect(again.headers.get("cache-control")).toMatch(/^public, max-age=/);
    }
    expect((await get(s.hostname, { "if-none-match": '"other"' })).status).toBe(200);
    await rotate(s);
    const rotated = await get(s.hostname, { "if-none-match": etag });
    expect(rotated.status).toBe(200);
    expect(rotated.headers.get("etag")).not.toBe(etag);
  });

  it("another store's domain shows only that store's keys", async () => {
    const [a, b] = [await shop(), await shop()];
    const [keyA, keyB] = [await rotate(a), await rotate(b)];
    expect((await get(a.hostname)).body!["keys"]).toEqual([keyA]);
    expect((await get(b.hostname)).body!["keys"]).toEqual([keyB]);
  });

  it("rotation: the new key first, the replaced key published through its grace, then gone", async () => {
    const s = await shop();
    const old = await rotate(s);
    const fresh = await rotate(s);
    const during = await get(s.hostname);
    expect(during.body!["keys"]).toEqual([fresh, old]);
    // The recorded (and schema-checked) profile, with this store's hostname and keys.
    expect(during.body).toEqual(asRecorded(s.hostname, [fresh, old]));
    const [{ days }] = (await sql(s, "select extract(epoch from retires_at - now()) / 86400 as days from ucp_signing_key where kid = $1", [old.kid])) as [{ days: number }];
    expect(Number(days)).toBeCloseTo(KEY_GRACE_DAYS, 1);
    await sql(s, "update ucp_signing_key set retires_at = now() - interval '1 second' where kid = $1", [old.kid]);
    expect((await get(s.hostname)).body!["keys"]).toEqual([fresh]);
  });

  it("a store on with no key yet still publishes its services (no keys), logging nothing secret", async () => {
    const s = await shop();
    const logged = vi.spyOn(console, "log").mockImplementation(() => undefined);
    const warned = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    try {
      const r = await get(s.hostname);
      expect(r.status).toBe(200);
      expect(r.body!["keys"]).toEqual([]);
      expect(r.body!["ucp"]["services"]).toBeTruthy();
      const lines = [...logged.mock.calls, ...warned.mock.calls].map((c) => c.join(" ")).join("\n");
      expect(lines).not.toMatch(/v1\.|"d"/);
    } finally {
      logged.mockRestore();
      warned.mockRestore();
    }
    expect(await publishedKeys(s)).toEqual([]);
  });

  it("behind the storefront password: 403 password_protected, on or off alike, not cached", async () => {
    for (const on of [true, false]) {
      const s = on ? await shop() : await makeShop(db);
      await rotate(s);
      await sql(s, "update store set storefront_password_hash = $2 where id = $1", [s.id, await hashPassword("open sesame 42")]);
      const r = await get(s.hostname);
      expect(r.status, `on ${on}`).toBe(403);
      expect(r.body).toEqual({ code: "password_protected", content: expect.any(String) });
      expect(r.headers.get("cache-control")).toBe("no-store");
    }
  });

  it("one round trip (the switch and the keys together); past the door's limit, 429 before any database work", async () => {
    const s = await shop();
    await rotate(s);
    const from = ip();
    await get(s.hostname, { "cf-connecting-ip": from }); // the host and its facts held
    const trace = newTrace();
    expect((await get(s.hostname, { "cf-connecting-ip": from, "x-commerce-trace": trace })).status).toBe(200);
    expect((await tripsOf(proxy, trace)).turns).toBe(1);

    const limit = SHOPPER_LIMITS.ucpProfile.address.limit;
    for (let i = 2; i < limit; i++) await get(s.hostname, { "cf-connecting-ip": from, "if-none-match": "*" });
    const refusedTrace = newTrace();
    const refused = await get(s.hostname, { "cf-connecting-ip": from, "x-commerce-trace": refusedTrace });
    expect(refused.status).toBe(429);
    expect((await tripsOf(proxy, refusedTrace)).turns).toBe(0);
    expect(refused.body).toEqual({ code: "rate_limited", content: expect.any(String) });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});
