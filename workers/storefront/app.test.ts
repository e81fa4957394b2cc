import { describe, expect, it } from "vitest";
import { call } from "../../test/call";
import { makeStore, testDb } from "../../test/harness";
import { withStore } from "#shared/db/with-store";
import { store } from "#shared/db/schema";
import worker from "./index";
import { normaliseHostname } from "#shared/storefront/hosts";

const db = testDb();
const get = (host: string, path = "/") => call(worker, `http://storefront.test${path}`, { headers: { host } });

describe("storefront store resolution by hostname", () => {
  it("serves a page naming the store of a verified hostname", async () => {
    const s = await makeStore(db);
    const res = await get(s.hostname);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/text\/html/);
    const body = await res.text();
    expect(body).toContain(`<h1>${s.name}</h1>`);
  });

  it("ignores case, port and a trailing dot in the Host header", async () => {
    const s = await makeStore(db);
    const res = await get(`${s.hostname.toUpperCase()}.:8788`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain(s.name);
  });

  it("serves the demo seed at demo.localhost and shop.demo.test", async () => {
    for (const host of ["demo.localhost", "shop.demo.test"]) {
      const res = await get(host);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain("Demo Store");
    }
    expect(await (await get("other.localhost")).text()).toContain("Other Store");
  });

  it("answers an unknown hostname with a 404 page", async () => {
    const res = await get("nobody.example.test");
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toMatch(/text\/html/);
    expect(await res.text()).toContain("No store is served at nobody.example.test");
  });

  it("does not serve a pending (unverified) domain", async () => {
    const s = await makeStore(db);
    const res = await get(s.pendingHostname);
    expect(res.status).toBe(404);
    expect(await res.text()).not.toContain(s.name);
  });

  it("escapes the store name", async () => {
    const s = await makeStore(db);
    await withStore(db, s.id, (tx) => tx.update(store).set({ name: `<script>alert(1)</script> & Co` }));
    const body = await (await get(s.hostname)).text();
    expect(body).toContain("&lt;script&gt;alert(1)&lt;/script&gt; &amp; Co");
    expect(body).not.toContain("<script>alert(1)");
  });

  it("refuses junk Host headers without a database lookup", async () => {
    const res = await get("bad host'--");
    expect(res.status).toBe(404);
  });

  it("serves 404 for unknown paths of a known store", async () => {
    const s = await makeStore(db);
    const res = await get(s.hostname, "/no-such-page");
    expect(res.status).toBe(404);
  });
});

describe("normaliseHostname", () => {
  it.each([
    ["Shop.Example.COM", "shop.example.com"],
    ["shop.example.com:443", "shop.example.com"],
    ["shop.example.com.", "shop.example.com"],
    ["SHOP.example.com.:8443", "shop.example.com"],
    ["localhost:8788", "localhost"],
    ["", null],
    ["a b.com", null],
    ["évil.com", null],
    ["[::1]:8788", null],
    ["x".repeat(254), null],
  ])("%s -> %s", (input, expected) => {
    expect(normaliseHostname(input)).toBe(expected);
  });
});
