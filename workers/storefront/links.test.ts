import { and, eq } from "drizzle-orm";
import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { hashPassword } from "#shared/auth/password";
import { pageView, shortLink, store as storeTable, storeDomain } from "#shared/db/schema";
import { withStore } from "#shared/db/with-store";
import { clientAddress } from "#shared/limits/address";
import { hit } from "#shared/limits/limit";
import type { RateLimiter } from "#shared/limits/rate-limiter";
import { call } from "../../test/call";
import { makeStore, testDb, type TestStore } from "../../test/harness";
import worker from "./index";
import { BEACON_POLICY } from "./links";

/** Short links (`/l/<slug>`) and the page beacon, through the real storefront Worker. */
const db = testDb();

const send = (host: string, path: string, init: RequestInit = {}) =>
  call(worker, `https://${host}${path}`, { ...init, headers: { host, ...(init.headers as Record<string, string> | undefined) }, redirect: "manual" });

const utm = { utmSource: "insta", utmMedium: "social", utmCampaign: "diwali" };

async function addLink(s: TestStore, slug: string, target: string, extra: Partial<typeof shortLink.$inferInsert> = {}): Promise<string> {
  return withStore(db, s.id, async (tx) => {
    const [row] = await tx.insert(shortLink).values({ storeId: s.id, slug, target, ...utm, ...extra }).returning({ id: shortLink.id });
    return row!.id;
  });
}

const clicksOf = (s: TestStore, id: string) =>
  withStore(db, s.id, async (tx) => (await tx.select({ n: shortLink.clicks }).from(shortLink).where(eq(shortLink.id, id)))[0]?.n);

const viewsOf = (s: TestStore, path: string) =>
  withStore(db, s.id, (tx) => tx.select({ linkId: pageView.linkId }).from(pageView).where(and(eq(pageView.storeId, s.id), eq(pageView.path, path))));

const beacon = (host: string, body: string, headers: Record<string, string> = {}, env: Record<string, unknown> = {}) =>
  call(worker, `https://${host}/api/beacon`, { method: "POST", body, headers: { host, "content-type": "application/json", ...headers } }, env);

describe("short links", () => {
  it("302 to the target with the UTM tags merged into its query, and the wc_lk cookie", async () => {
    const s = await makeStore(db);
    const id = await addLink(s, "diwali", "https://example.com/sale?color=red&utm_source=old&utm_term=keep#top", { utmContent: "hero" });
    const res = await send(s.hostname, "/l/diwali");
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get("location")!);
    expect(location.origin + location.pathname + location.hash).toBe("https://example.com/sale#top");
    // The target's own keys stay; the link's tags replace the same keys; an unset tag (term) keeps the target's.
    expect(Object.fromEntries(location.searchParams)).toEqual({
      color: "red",
      utm_source: "insta",
      utm_medium: "social",
      utm_campaign: "diwali",
      utm_term: "keep",
      utm_content: "hero",
    });
    expect(location.searchParams.getAll("utm_source")).toEqual(["insta"]);
    expect(res.headers.get("set-cookie")).toBe(`wc_lk=${id}; Max-Age=2592000; Path=/; HttpOnly; Secure; SameSite=Lax`);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await clicksOf(s, id)).toBe(1);
  });

  it("a path target resolves against the request's origin; no Secure on *.localhost", async () => {
    const s = await makeStore(db);
    await addLink(s, "kurta", "/products/kurta?size=m", { utmTerm: "cotton" });
    const res = await send(s.hostname, "/l/kurta");
    expect(res.headers.get("location")).toBe(`https://${s.hostname}/products/kurta?size=m&utm_source=insta&utm_medium=social&utm_campaign=diwali&utm_term=cotton`);
    const local = `${s.slug}.localhost`;
    await withStore(db, s.id, (tx) => tx.insert(storeDomain).values({ storeId: s.id, hostname: local, status: "verified" }));
    const dev = await send(local, "/l/kurta");
    expect(dev.status).toBe(302);
    expect(dev.headers.get("set-cookie")).not.toMatch(/Secure/);
  });

  it("50 concurrent clicks add exactly 50", async () => {
    const s = await makeStore(db);
    const id = await addLink(s, "burst", "/");
    const answers = await Promise.all(Array.from({ length: 50 }, () => send(s.hostname, "/l/burst")));
    expect(answers.map((r) => r.status)).toEqual(Array(50).fill(302));
    expect(await clicksOf(s, id)).toBe(50);
  });

  it("an unknown slug, and store A's slug under store B's host, are the store's 404; A's count is unchanged", async () => {
    const a = await makeStore(db);
    const b = await makeStore(db);
    const id = await addLink(a, "only-a", "/");
    for (const path of ["/l/nope", "/l/Only-A", "/l/only-a/x"]) expect((await send(a.hostname, path)).status).toBe(404);
    const cross = await send(b.hostname, "/l/only-a");
    expect(cross.status).toBe(404);
    expect(cross.headers.get("content-type")).toMatch(/text\/html/);
    expect(cross.headers.get("set-cookie")).toBeNull();
    expect(await clicksOf(a, id)).toBe(0);
  });

  it("while the storefront password is on, a short link shows the password page and counts nothing", async () => {
    const s = await makeStore(db);
    const id = await addLink(s, "locked", "/");
    const hash = await hashPassword("open sesame");
    await withStore(db, s.id, (tx) => tx.update(storeTable).set({ storefrontPasswordHash: hash }).where(eq(storeTable.id, s.id)));
    const res = await send(s.hostname, "/l/locked");
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/Store password/);
    expect(await clicksOf(s, id)).toBe(0);
  });
});

describe("the page beacon", () => {
  it("records a view, credited to the wc_lk link of this store only", async () => {
    const a = await makeStore(db);
    const b = await makeStore(db);
    const linkA = await addLink(a, "promo", "/");
    const linkB = await addLink(b, "promo", "/");
    expect((await beacon(a.hostname, JSON.stringify({ path: "/plain" }))).status).toBe(204);
    expect(await viewsOf(a, "/plain")).toEqual([{ linkId: null }]);
    expect((await beacon(a.hostname, JSON.stringify({ path: "/credited" }), { cookie: `wc_lk=${linkA}` })).status).toBe(204);
    expect(await viewsOf(a, "/credited")).toEqual([{ linkId: linkA }]);
    // Another store's link id, a deleted link, junk: recorded without credit.
    expect((await beacon(a.hostname, JSON.stringify({ path: "/foreign" }), { cookie: `wc_lk=${linkB}` })).status).toBe(204);
    expect(await viewsOf(a, "/foreign")).toEqual([{ linkId: null }]);
    expect(await viewsOf(b, "/foreign")).toEqual([]);
    expect((await beacon(a.hostname, JSON.stringify({ path: "/junk-cookie" }), { cookie: "wc_lk=not-a-uuid" })).status).toBe(204);
    expect(await viewsOf(a, "/junk-cookie")).toEqual([{ linkId: null }]);
    // Deleting the link keeps its views, uncredited (the FK nulls link_id only).
    await withStore(db, a.id, (tx) => tx.delete(shortLink).where(eq(shortLink.id, linkA)));
    expect(await viewsOf(a, "/credited")).toEqual([{ linkId: null }]);
    expect((await beacon(a.hostname, JSON.stringify({ path: "/after" }), { cookie: `wc_lk=${linkA}` })).status).toBe(204);
    expect(await viewsOf(a, "/after")).toEqual([{ linkId: null }]);
  });

  it("a click then a beacon with the cookie it set credits the link", async () => {
    const s = await makeStore(db);
    const id = await addLink(s, "flow", "/landing");
    const click = await send(s.hostname, "/l/flow");
    const cookie = click.headers.get("set-cookie")!.split(";")[0]!;
    expect((await beacon(s.hostname, JSON.stringify({ path: "/landing" }), { cookie, "content-type": "text/plain" })).status).toBe(204);
    expect(await viewsOf(s, "/landing")).toEqual([{ linkId: id }]);
  });

  it("junk bodies are 4xx naming the problem, never a 500", async () => {
    const s = await makeStore(db);
    const cases: [string, number][] = [
      ["", 400],
      ["not json", 400],
      ["null", 400],
      ["[]", 400],
      ['{"path": 5}', 400],
      ['{"path": "relative"}', 400],
      ['{"path": "/a\\u0000b"}', 400],
      [JSON.stringify({ path: `/${"x".repeat(2048)}` }), 400],
      [JSON.stringify({ path: `/${"x".repeat(5000)}` }), 413],
    ];
    for (const [body, status] of cases) {
      const res = await beacon(s.hostname, body);
      expect([body.slice(0, 20), res.status]).toEqual([body.slice(0, 20), status]);
    }
    const named = (await (await beacon(s.hostname, '{"path": 5}')).json()) as { error: { data?: { issues?: { path: string }[] } } };
    expect(JSON.stringify(named)).toMatch(/"path":"path"/);
    expect((await beacon(s.hostname, JSON.stringify({ path: "/" }), { "sec-fetch-site": "cross-site" })).status).toBe(403);
    expect((await send(s.hostname, "/api/beacon")).status).toBe(404);
    expect(await viewsOf(s, "relative")).toEqual([]);
  });

  it(`limits page views to ${BEACON_POLICY.limit} per ${BEACON_POLICY.windowMs / 1000} s per IP per store: then 429 before any database work, nothing written`, async () => {
    const s = await makeStore(db);
    const other = await makeStore(db);
    const ip = { "cf-connecting-ip": "198.51.100.23" };
    const view = (path: string) => JSON.stringify({ path });
    const statuses: number[] = [];
    for (let sent = 0; sent < BEACON_POLICY.limit; sent += 20) {
      const batch = await Promise.all(Array.from({ length: 20 }, () => beacon(s.hostname, view("/counted"), ip)));
      statuses.push(...batch.map((r) => r.status));
    }
    expect(statuses).toEqual(Array(BEACON_POLICY.limit).fill(204));
    const over = await beacon(s.hostname, view("/over"), ip);
    expect(over.status).toBe(429);
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(over.headers.get("ratelimit-policy")).toBe(`"default";q=${BEACON_POLICY.limit};w=${BEACON_POLICY.windowMs / 1000}`);
    expect(over.headers.get("ratelimit")).toMatch(/^"default";r=0;t=\d+$/);
    expect(((await over.json()) as { json: { code: string } }).json.code).toBe("TOO_MANY_REQUESTS");
    // With no database to reach at all, the refusal is still a 429 (the host comes from the HOSTS cache): it never touched the database.
    expect((await beacon(s.hostname, view("/over"), ip, { DATABASE_URL: inject("noSlotsDatabaseUrl") })).status).toBe(429);
    expect(await viewsOf(s, "/over")).toEqual([]);
    expect(await viewsOf(s, "/counted")).toHaveLength(BEACON_POLICY.limit);
    // Another address at the same store, and the same address at another store, still count.
    const next = await beacon(s.hostname, view("/other-ip"), { "cf-connecting-ip": "198.51.100.24" });
    expect(next.status).toBe(204);
    expect(next.headers.get("ratelimit")).toMatch(/^"default";r=119;t=\d+$/);
    expect(await viewsOf(s, "/other-ip")).toEqual([{ linkId: null }]);
    expect((await beacon(other.hostname, view("/same-ip"), ip)).status).toBe(204);
    expect(await viewsOf(other, "/same-ip")).toEqual([{ linkId: null }]);
  });

  it("an IPv6 line is one address (its /64), and its /48 one network with 4 times the number", async () => {
    const s = await makeStore(db);
    const view = JSON.stringify({ path: "/v6" });
    const limiter = (env as unknown as { RATE_LIMITER: DurableObjectNamespace<RateLimiter> }).RATE_LIMITER;
    // A /64 that sent its views in the minute, from whichever of its addresses.
    await hit(limiter, `storefront-beacon:${s.id}:${clientAddress("2001:db8:77:1::1")}`, BEACON_POLICY, BEACON_POLICY.limit);
    const sameLine = await beacon(s.hostname, view, { "cf-connecting-ip": "2001:db8:77:1:abcd::9" });
    expect(sameLine.status).toBe(429);
    // A /48 whose /64s sent 4 times that: a new /64 of it is refused as the network.
    await hit(limiter, `storefront-beacon:${s.id}:2001:db8:77::/48`, { ...BEACON_POLICY, limit: BEACON_POLICY.limit * 4 }, BEACON_POLICY.limit * 4);
    const sameNetwork = await beacon(s.hostname, view, { "cf-connecting-ip": "2001:db8:77:2::1" });
    expect(sameNetwork.status).toBe(429);
    expect(((await sameNetwork.json()) as { json: { message: string } }).json.message).toMatch(/^At most 480 page views per 60 s from one IPv6 \/48 network\./);
    expect((await beacon(s.hostname, view, { "cf-connecting-ip": "2001:db8:78:2::1" })).status).toBe(204);
  });
});
