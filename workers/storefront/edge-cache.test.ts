import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { Database } from "#shared/db/database";
import { withStore } from "#shared/db/with-store";
import { HOST_CACHE_MS } from "#shared/storefront/hosts";
import { call } from "../../test/call";
import { testDb } from "../../test/harness";
import { makeShop, type ShopStore } from "../../test/storefront";
import { BROWSER_CACHE_CONTROL } from "./edge-cache";
import worker from "./index";

/**
 * The edge cache of anonymous catalogue pages (issue 10 part 7): hit, miss, the catalogue version's bump
 * in the same transaction, what is never cached, and no database work at all when warm.
 */
const db = testDb();
const bindings = env as unknown as { DATABASE_URL: string; DB_WS_PROXY?: string };
/** The database out of reach: any request that needs it answers 503. */
const NO_DATABASE = { DATABASE_URL: "postgres://app_user:x@127.0.0.1:19/none", DB_WS_PROXY: "127.0.0.1:19" };

const get = (host: string, path: string, headers: Record<string, string> = {}, overrides: Record<string, unknown> = {}) =>
  call(worker, `http://storefront.test${path}`, { headers: { host, ...headers }, redirect: "manual" }, overrides);
const verdict = (res: Response, name: "edge" | "host" | "store") => new RegExp(`${name};desc="(\\w+)"`).exec(res.headers.get("server-timing") ?? "")?.[1];

const run = (s: ShopStore, text: string, values: unknown[] = [], on: Database = db) => withStore(on, s.id, (tx) => tx.$client.query(text, values));
const version = async (s: ShopStore) => Number((await run(s, "select coalesce((select version from storefront_version), 0) as v")).rows[0].v);
const setPrice = (s: ShopStore, minor: number, on: Database = db) => run(s, "update product_variant set price_minor = $2 where id = $1", [s.variantId, minor], on);

afterEach(() => {
  vi.useRealTimers();
});

describe("the edge cache of catalogue pages", () => {
  it("a miss renders and stores the page; the next request is a hit with no database at all", async () => {
    const s = await makeShop(db);
    const first = await get(s.hostname, "/products/fixture");
    expect(first.status).toBe(200);
    expect(verdict(first, "edge")).toBe("miss");
    expect(first.headers.get("cache-control")).toBe(BROWSER_CACHE_CONTROL);
    const html = await first.text();
    expect(html).toContain("₹10.00");
    for (let i = 0; i < 3; i++) {
      const warm = await get(s.hostname, "/products/fixture", {}, NO_DATABASE);
      expect(warm.status).toBe(200);
      expect([verdict(warm, "host"), verdict(warm, "store"), verdict(warm, "edge")]).toEqual(["hit", "hit", "hit"]);
      expect(warm.headers.get("cache-control")).toBe(BROWSER_CACHE_CONTROL);
      expect(warm.headers.get("x-request-id")).not.toBe(first.headers.get("x-request-id"));
      expect(await warm.text()).toBe(html);
    }
    // Every catalogue page is kept, the store's own 404 page too; each by its path and query.
    for (const path of ["/", "/products", "/products?sort=title", "/search?q=fix", "/pages/about", "/robots.txt", "/sitemap.xml", "/products/nope"]) {
      const cold = await get(s.hostname, path);
      expect(verdict(cold, "edge"), path).toBe("miss");
      const warm = await get(s.hostname, path, {}, NO_DATABASE);
      expect([warm.status, verdict(warm, "edge")], path).toEqual([cold.status, "hit"]);
    }
  });

  it("a price change is on the next request: the version is bumped in the change's transaction and pushed at commit", async () => {
    const s = await makeShop(db);
    expect(await (await get(s.hostname, "/products/fixture")).text()).toContain("₹10.00");
    expect(verdict(await get(s.hostname, "/products/fixture"), "edge")).toBe("hit");
    const before = await version(s);
    await setPrice(s, 2500);
    expect(await version(s)).toBe(before + 1);
    const next = await get(s.hostname, "/products/fixture");
    expect(verdict(next, "edge")).toBe("miss");
    expect(verdict(next, "store")).toBe("hit"); // the pushed facts, not a database read
    const html = await next.text();
    expect(html).toContain("₹25.00");
    expect(html).not.toContain("₹10.00");
    expect(verdict(await get(s.hostname, "/products/fixture", {}, NO_DATABASE), "edge")).toBe("hit");
  });

  it("stock, a location, a page, a domain and the store's name each bump the version; one transaction bumps once", async () => {
    const s = await makeShop(db);
    const bumps = async (text: string, values: unknown[] = []) => {
      const before = await version(s);
      await run(s, text, values);
      return (await version(s)) - before;
    };
    expect(await bumps("update inventory_level set on_hand = on_hand + 1")).toBe(1);
    expect(await bumps("update location set sells_online = false")).toBe(1);
    expect(await bumps("update page set status = 'published', published_at = now()")).toBe(1);
    expect(await bumps("update store_domain set is_primary = false")).toBe(1);
    expect(await bumps("update store set name = name || '!'")).toBe(1);
    expect(await bumps("update product set title = title || ' v2'")).toBe(1);
    // Many rows of several tables in one transaction: one bump.
    const before = await version(s);
    await withStore(db, s.id, async (tx) => {
      await tx.$client.query("update product_variant set price_minor = price_minor + 1");
      await tx.$client.query("update inventory_level set on_hand = on_hand + 1");
      await tx.$client.query("insert into page (store_id, title, handle) select $1, 'Page ' || n, 'page-' || n from generate_series(1, 20) n", [s.id]);
    });
    expect(await version(s)).toBe(before + 1);
    // What the storefront does not show leaves the version alone: the MCP switches, a cart, a customer.
    const steady = await version(s);
    await run(s, "update store set mcp_allow_changes = not mcp_allow_changes");
    await run(s, "insert into cart (store_id, token_hash, currency) values ($1, $2, 'INR')", [s.id, "a".repeat(64)]);
    await run(s, "update customer set note = 'VIP'");
    expect(await version(s)).toBe(steady);
  });

  it("a change the storefront was not told of shows once the store's facts are older than 60 s (controlled clock)", async () => {
    const s = await makeShop(db);
    // A writer whose runtime binds no HOSTS namespace: its commits bump the version but push nothing.
    const quiet = new Database({ url: bindings.DATABASE_URL, wsProxy: bindings.DB_WS_PROXY || undefined });
    try {
      vi.useFakeTimers({ toFake: ["Date"] });
      const t0 = Date.now();
      await run(s, "update product set title = title"); // the facts as pushed at t0
      expect(await (await get(s.hostname, "/products/fixture")).text()).toContain("₹10.00");
      await setPrice(s, 4200, quiet);
      vi.setSystemTime(t0 + HOST_CACHE_MS - 1);
      const stale = await get(s.hostname, "/products/fixture");
      expect([verdict(stale, "store"), verdict(stale, "edge")]).toEqual(["hit", "hit"]);
      expect(await stale.text()).toContain("₹10.00");
      vi.setSystemTime(t0 + HOST_CACHE_MS);
      const fresh = await get(s.hostname, "/products/fixture");
      expect([verdict(fresh, "store"), verdict(fresh, "edge")]).toEqual(["miss", "miss"]);
      expect(await fresh.text()).toContain("₹42.00");
    } finally {
      await quiet.close();
    }
  });

  it("never cached: a cart or password cookie, the cart page, short links, the password page, other methods", async () => {
    const s = await makeShop(db);
    await get(s.hostname, "/products/fixture"); // warm
    // The short-link cookie alone keeps the shopper anonymous; a third party's cookie changes nothing.
    expect(verdict(await get(s.hostname, "/products/fixture", { cookie: "wc_lk=00000000-0000-4000-8000-000000000000; _ga=1" }), "edge")).toBe("hit");
    for (const cookie of ["wc_cart=abc", "wc_sf_pass=0123", "wc_lk=x; wc_cart=abc"]) {
      const res = await get(s.hostname, "/products/fixture", { cookie });
      expect(verdict(res, "edge"), cookie).toBe("bypass");
    }
    expect(verdict(await get(s.hostname, "/products/fixture", { authorization: "Bearer x" }), "edge")).toBe("bypass");
    for (const path of ["/cart", "/cart"]) expect(verdict(await get(s.hostname, path), "edge")).toBe("bypass");
    await run(s, "insert into short_link (store_id, slug, target, utm_source, utm_medium, utm_campaign) values ($1, 'sale', '/products', 'ig', 'social', 'diwali')", [s.id]);
    for (let i = 0; i < 2; i++) {
      const click = await get(s.hostname, "/l/sale");
      expect(click.status).toBe(302);
      expect(verdict(click, "edge")).toBe("bypass");
    }
    expect(Number((await run(s, "select clicks from short_link where slug = 'sale'")).rows[0].clicks)).toBe(2);
    const head = await call(worker, "http://storefront.test/products/fixture", { method: "HEAD", headers: { host: s.hostname } });
    expect(verdict(head, "edge")).toBe("bypass");
    // While the password is on, every page is the password page, and none of it is cached.
    await run(s, "update store set storefront_password_hash = 'x'");
    const locked = await get(s.hostname, "/products/fixture");
    expect(verdict(locked, "edge")).toBe("bypass");
    expect(locked.headers.get("cache-control")).toBe("no-store");
    expect(await locked.text()).toContain('action="/api/storefront/password"');
  });

  it("one store's pages never answer for another: the key holds the store and the hostname", async () => {
    const [a, b] = [await makeShop(db), await makeShop(db)];
    await setPrice(b, 7700);
    expect(await (await get(a.hostname, "/products/fixture")).text()).toContain("₹10.00");
    const other = await get(b.hostname, "/products/fixture");
    expect(verdict(other, "edge")).toBe("miss");
    expect(await other.text()).toContain("₹77.00");
  });
});
