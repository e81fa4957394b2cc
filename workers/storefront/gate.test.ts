import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { hashPassword } from "#shared/auth/password";
import { storeDomain } from "#shared/db/schema";
import { withStore } from "#shared/db/with-store";
import { PASSWORD_LIMITS } from "#shared/limits/shopper";
import { HOST_CACHE_MS, writeHostEntry } from "#shared/storefront/hosts";
import { call } from "../../test/call";
import { makeStore, testDb, uniqueSuffix } from "../../test/harness";
import worker from "./index";

/** The storefront's front door: the HOSTS cache, the path rules, the password page. */
const db = testDb();
const kv = (env as unknown as { HOSTS: KVNamespace }).HOSTS;

const get = (host: string, path = "/", headers: Record<string, string> = {}) =>
  call(worker, `http://storefront.test${path}`, { headers: { host, ...headers }, redirect: "manual" });
const hostCache = (res: Response) => /host;desc="(hit|miss)"/.exec(res.headers.get("server-timing") ?? "")?.[1];

afterEach(() => {
  vi.useRealTimers();
});

describe("host → store through the HOSTS cache", () => {
  it("one database lookup for N requests to a host within 60 s (controlled clock), a fresh one after", async () => {
    const s = await makeStore(db);
    vi.useFakeTimers({ toFake: ["Date"] });
    const t0 = Date.now();
    const first = await get(s.hostname);
    expect(first.status).toBe(200);
    expect(hostCache(first)).toBe("miss");
    const within: (string | undefined)[] = [];
    for (const offset of [1, 10_000, 30_000, HOST_CACHE_MS - 1]) {
      vi.setSystemTime(t0 + offset);
      within.push(hostCache(await get(s.hostname)));
    }
    expect(within).toEqual(["hit", "hit", "hit", "hit"]);
    vi.setSystemTime(t0 + HOST_CACHE_MS);
    expect(hostCache(await get(s.hostname))).toBe("miss");
    vi.setSystemTime(t0 + HOST_CACHE_MS + 1);
    expect(hostCache(await get(s.hostname))).toBe("hit");
  });

  it("normalised hostnames share one entry: case, port and a trailing dot", async () => {
    const s = await makeStore(db);
    expect(hostCache(await get(s.hostname))).toBe("miss");
    expect(hostCache(await get(`${s.hostname.toUpperCase()}.:8788`))).toBe("hit");
  });

  it("caches unknown hostnames too (a negative entry), and a pending domain serves nothing", async () => {
    const unknown = `nobody-${uniqueSuffix()}.example.test`;
    const first = await get(unknown);
    expect(first.status).toBe(404);
    expect(hostCache(first)).toBe("miss");
    const again = await get(unknown);
    expect(again.status).toBe(404);
    expect(hostCache(again)).toBe("hit");
    const s = await makeStore(db);
    expect((await get(s.pendingHostname)).status).toBe(404);
  });

  it("an entry overwritten at once wins over the cached one (a domain verified, moved or removed)", async () => {
    const s = await makeStore(db);
    const newHost = `new-${s.slug}.shop.test`;
    expect((await get(newHost)).status).toBe(404); // cached: serves no store
    await withStore(db, s.id, (tx) => tx.insert(storeDomain).values({ storeId: s.id, hostname: newHost, status: "verified", verifiedAt: new Date() }));
    expect((await get(newHost)).status).toBe(404); // still the negative entry, for up to 60 s
    await writeHostEntry(kv, newHost, s.id); // what verifying the domain does
    const served = await get(newHost);
    expect(served.status).toBe(200);
    expect(await served.text()).toContain(s.name);
    await writeHostEntry(kv, newHost, null); // removed
    expect((await get(newHost)).status).toBe(404);
  });

  it("junk Host headers never reach the cache or the database", async () => {
    for (const host of ["bad host'--", "[::1]", "x".repeat(300), "a..b"]) {
      const res = await get(host);
      expect(res.status, host).toBe(404);
      expect(hostCache(res), host).toBeUndefined();
    }
  });
});

describe("path rules, in the SPEC's order", () => {
  it("a path that already begins with /-s or /-p is refused with 404, whatever follows: /-sale and /-pages too", async () => {
    const s = await makeStore(db);
    for (const path of ["/-s", "/-s/", `/-s/${s.id}/`, "/-p", `/-p/${s.id}`, "/-p/x?y=1", "/-S/x".toLowerCase(), "/-sale", "/-sale/", "/-pages/about", "/-p1", "/-s?x=1"]) {
      const res = await get(s.hostname, path);
      expect(res.status, path).toBe(404);
      const html = await res.text();
      expect(html, path).not.toContain(s.name);
      expect(html, path).not.toContain("in this store"); // refused by the rule, not by the store's router
    }
    // Other paths that begin with a dash are the store's own (its 404 page here).
    const gateway = await get(s.hostname, "/-gateway/pay/nothing");
    expect(gateway.status).toBe(404);
    expect(await gateway.text()).toContain(s.name);
  });

  it("/api/* passes through unchanged (and answers JSON), even while the password is on", async () => {
    const s = await makeStore(db);
    await withStore(db, s.id, (tx) => tx.$client.query("update store set storefront_password_hash = 'pbkdf2_sha256$1$x$y' where id = $1", [s.id]));
    const res = await get(s.hostname, "/api/no-such-thing");
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toMatch(/application\/json/);
  });
});

describe("the storefront password", () => {
  const setPassword = async (storeId: string, value: string | null) => {
    const hash = value === null ? null : await hashPassword(value);
    await withStore(db, storeId, (tx) => tx.$client.query("update store set storefront_password_hash = $2 where id = $1", [storeId, hash]));
  };
  const enter = (host: string, password: string, returnTo: string, headers: Record<string, string> = {}) =>
    call(worker, "http://storefront.test/api/storefront/password", {
      method: "POST",
      headers: { host, "content-type": "application/x-www-form-urlencoded", "cf-connecting-ip": `203.0.113.${Math.floor(Math.random() * 250)}`, ...headers },
      body: new URLSearchParams({ password, return: returnTo }).toString(),
      redirect: "manual",
    });
  const cookieOf = (res: Response) => res.headers.getSetCookie().find((c) => c.startsWith("wc_sf_pass="))!;

  it("while on, every page is the password page; the right password opens the store and returns the shopper", async () => {
    const s = await makeStore(db);
    await setPassword(s.id, "open sesame 42");
    for (const path of ["/", "/products", "/pages/about?x=1"]) {
      const res = await get(s.hostname, path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(res.headers.get("x-robots-tag")).toBe("noindex");
      const html = await res.text();
      expect(html).toContain('action="/api/storefront/password"');
      expect(html).toContain(`value="${path.replace("&", "&amp;")}"`);
      expect(html).not.toContain("<h2>Featured</h2>");
    }
    const wrong = await enter(s.hostname, "guess", "/");
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain("That password is not right");
    const right = await enter(s.hostname, "open sesame 42", "/?from=password");
    expect(right.status).toBe(303);
    expect(right.headers.get("location")).toBe("/?from=password");
    const cookie = cookieOf(right);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).toMatch(/Path=\//);
    const open = await get(s.hostname, "/", { cookie: cookie.split(";")[0]! });
    expect(open.status).toBe(200);
    expect(await open.text()).toContain("<h2>Featured</h2>");
  });

  it("a cookie opens only its own store, and changing the password signs everyone out", async () => {
    const a = await makeStore(db);
    const b = await makeStore(db);
    await setPassword(a.id, "same password 1");
    await setPassword(b.id, "same password 1");
    const cookie = cookieOf(await enter(a.hostname, "same password 1", "/")).split(";")[0]!;
    expect(await (await get(a.hostname, "/", { cookie })).text()).toContain("<h2>Featured</h2>");
    expect(await (await get(b.hostname, "/", { cookie })).text()).not.toContain("<h2>Featured</h2>");
    await setPassword(a.id, "a new password 2");
    expect(await (await get(a.hostname, "/", { cookie })).text()).not.toContain("<h2>Featured</h2>");
    await setPassword(a.id, null);
    expect(await (await get(a.hostname, "/")).text()).toContain("<h2>Featured</h2>");
  });

  it("returns only to a path of this site, refuses cross-site posts, and limits attempts per address", async () => {
    const s = await makeStore(db);
    await setPassword(s.id, "open sesame 42");
    for (const evil of ["//evil.example", "/\\evil.example", "https://evil.example/", "/%09/evil.example"]) {
      expect((await enter(s.hostname, "open sesame 42", evil)).headers.get("location"), evil).toBe("/");
    }
    expect((await enter(s.hostname, "open sesame 42", "/", { "sec-fetch-site": "cross-site" })).status).toBe(403);
    expect((await enter(s.hostname, "open sesame 42", "/", { origin: "https://evil.example" })).status).toBe(403);
    // Per address: past a few attempts each needs the person check (none sent here: 403), past the limit 429 (decision 0019).
    const ip = { "cf-connecting-ip": "198.51.100.77" };
    const { limit, challengeAfter = 0 } = PASSWORD_LIMITS.address;
    const statuses: number[] = [];
    for (let i = 0; i <= limit; i++) statuses.push((await enter(s.hostname, "wrong", "/", ip)).status);
    expect(statuses).toEqual([...Array(challengeAfter).fill(401), ...Array(limit - challengeAfter).fill(403), 429]);
    const limited = await enter(s.hostname, "open sesame 42", "/", ip);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  });
});
