import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { resolveHost, writeHostEntry } from "#shared/storefront/hosts";
import { page, postForm, rpc, rpcJson, sessionFor, type RpcError, ownerOf } from "../../test/admin";
import { testDb, uniqueSuffix } from "../../test/harness";
import { addMember } from "../../test/procedures";

/** Custom domains in the admin (issue 10 part 6), through /api/rpc against real Postgres and the HOSTS KV. */
const db = testDb();
const hosts = (env as unknown as { HOSTS: KVNamespace }).HOSTS;
const neverLooked = async (): Promise<string | null> => {
  throw new Error("the cache should have answered");
};

const owner = () => ownerOf(db);

describe("domains", () => {
  it("adds a pending domain (normalised) and lists it; another store may claim it too while nobody has verified it; a store lists it once", async () => {
    const { browser } = await owner();
    const host = `Shop-${uniqueSuffix()}.Example.test.`;
    const added = await rpc(browser, "domains/add", { hostname: host });
    expect(added.status).toBe(200);
    expect(await rpcJson(added)).toMatchObject({ hostname: host.toLowerCase().replace(/\.$/, ""), status: "pending", isPrimary: false, failure: null });
    const listed = await rpcJson<{ items: { hostname: string; status: string }[] }>(await rpc(browser, "domains/list", {}));
    expect(listed.items.map((d) => d.hostname)).toContain(host.toLowerCase().replace(/\.$/, ""));
    // A pending claim blocks nobody: a squatter's claim cannot keep the real owner out.
    const other = await owner();
    expect(await rpcJson(await rpc(other.browser, "domains/add", { hostname: host }))).toMatchObject({ status: "pending" });
    const twice = await rpc(browser, "domains/add", { hostname: host.toUpperCase() });
    expect(twice.status).toBe(409);
    expect(await rpcJson<RpcError>(twice)).toMatchObject({ message: "This hostname is already one of this store's domains.", data: { issues: [{ path: "hostname" }] } });
    for (const bad of ["https://shop.example.test/", "shop example.test", "localhost", "shop.example.test/path", ""]) {
      const res = await rpc(browser, "domains/add", { hostname: bad });
      expect(res.status, bad).toBe(400);
      expect((await rpcJson<RpcError>(res)).data?.issues?.[0]?.path, bad).toBe("hostname");
    }
  });

  it("removing a domain overwrites its HOSTS entry at once: it stops serving on the next request", async () => {
    const { store, browser } = await owner();
    await writeHostEntry(hosts, store.hostname, store.id); // as cached by the storefront a moment ago
    expect((await resolveHost(hosts, store.hostname, neverLooked)).storeId).toBe(store.id);
    const { items } = await rpcJson<{ items: { id: string; hostname: string; isPrimary: boolean }[] }>(await rpc(browser, "domains/list", {}));
    const primary = items.find((d) => d.hostname === store.hostname)!;
    const pending = items.find((d) => d.hostname === store.pendingHostname)!;
    const refused = await rpc(browser, "domains/remove", { id: primary.id });
    expect(refused.status).toBe(409); // the primary, while another domain exists
    expect((await rpc(browser, "domains/remove", { id: pending.id })).status).toBe(200);
    expect((await rpc(browser, "domains/remove", { id: primary.id })).status).toBe(200);
    expect(await resolveHost(hosts, store.hostname, neverLooked)).toEqual({ storeId: null, cached: true });
  });

  it("adding a claim leaves the HOSTS entry alone: a store that verified the hostname as the claim was added keeps serving", async () => {
    const a = await owner();
    const b = await owner();
    const host = `contested-${uniqueSuffix()}.example.test`;
    // A's claim of the hostname verifies as B's add commits, and the storefront names A in the entry; an
    // entry of "no store" written after B's add would blank A's storefront for 60 s.
    await writeHostEntry(hosts, host, a.store.id);
    expect((await rpc(b.browser, "domains/add", { hostname: host })).status).toBe(200);
    expect(await resolveHost(hosts, host, neverLooked)).toEqual({ storeId: a.store.id, cached: true });
  });

  it("refuses a hostname another store has verified (409 with the reason), in the RPC and on the page", async () => {
    const a = await owner();
    const b = await owner();
    const refused = await rpc(b.browser, "domains/add", { hostname: a.store.hostname });
    expect(refused.status).toBe(409);
    const body = await rpcJson<RpcError>(refused);
    expect(body).toMatchObject({ code: "CONFLICT", data: { reason: "hostname_taken", issues: [{ path: "hostname", message: "verified by another store" }] } });
    expect(body.message).toContain("verified by another store");
    const form = await postForm(b.browser, "/settings/domains", { csrf: b.browser.csrf, action: "add", hostname: a.store.hostname });
    expect(form.status).toBe(409);
    expect(await form.text()).toContain("This hostname is verified by another store and serves it.");
    const { items } = await rpcJson<{ items: { hostname: string }[] }>(await rpc(b.browser, "domains/list", {}));
    expect(items.map((d) => d.hostname)).not.toContain(a.store.hostname);
  });

  it("removing a claim that never verified leaves alone the HOSTS entry of the store that serves the hostname", async () => {
    const a = await owner();
    const b = await owner();
    const host = `contested-${uniqueSuffix()}.example.test`;
    const claim = await rpcJson<{ id: string }>(await rpc(b.browser, "domains/add", { hostname: host }));
    // Meanwhile A's claim is verified, and the edge points the hostname at A.
    await withStore(db, a.store.id, (tx) =>
      tx.$client.query("insert into store_domain (store_id, hostname, status, verified_at) values ($1, $2, 'verified', now())", [a.store.id, host]),
    );
    await writeHostEntry(hosts, host, a.store.id);
    await withStore(db, b.store.id, (tx) => tx.$client.query("update store_domain set status = 'failed', failed_reason = 'taken' where id = $1", [claim.id]));
    const page_ = await (await page(b.browser, "/settings/domains")).text();
    expect(page_).toContain("Taken by another store");
    expect(page_).toContain("Another store verified this hostname first");
    expect(await rpcJson(await rpc(b.browser, "domains/remove", { id: claim.id }))).toMatchObject({ id: claim.id, status: "failed", removed: true });
    expect(await resolveHost(hosts, host, neverLooked)).toEqual({ storeId: a.store.id, cached: true });
  });

  it("setPrimary takes a verified domain only, and leaves exactly one primary", async () => {
    const { store, browser } = await owner();
    const second = `second-${store.slug}.shop.test`;
    await withStore(db, store.id, (tx) =>
      tx.$client.query("insert into store_domain (store_id, hostname, status, verified_at) values ($1, $2, 'verified', now())", [store.id, second]),
    );
    const { items } = await rpcJson<{ items: { id: string; hostname: string }[] }>(await rpc(browser, "domains/list", {}));
    const pending = items.find((d) => d.hostname === store.pendingHostname)!;
    expect((await rpc(browser, "domains/setPrimary", { id: pending.id })).status).toBe(409);
    const target = items.find((d) => d.hostname === second)!;
    expect((await rpc(browser, "domains/setPrimary", { id: target.id })).status).toBe(200);
    const after = await rpcJson<{ items: { hostname: string; isPrimary: boolean }[] }>(await rpc(browser, "domains/list", {}));
    expect(after.items.filter((d) => d.isPrimary).map((d) => d.hostname)).toEqual([second]);
  });

  it("Staff cannot see or change domains; another store's domain ids are not found", async () => {
    const { store, browser } = await owner();
    const staff = await addMember(db, store, "staff");
    const staffBrowser = await sessionFor(db, staff.userId, store.id);
    expect((await rpc(staffBrowser, "domains/list", {})).status).toBe(403);
    expect((await rpc(staffBrowser, "domains/add", { hostname: `x-${uniqueSuffix()}.example.test` })).status).toBe(403);
    const other = await owner();
    const { items } = await rpcJson<{ items: { id: string }[] }>(await rpc(other.browser, "domains/list", {}));
    for (const op of ["domains/remove", "domains/setPrimary"]) {
      const res = await rpc(browser, op, { id: items[0]!.id });
      expect(res.status, op).toBe(404);
    }
    const still = await rpcJson<{ items: { id: string }[] }>(await rpc(other.browser, "domains/list", {}));
    expect(still.items).toHaveLength(items.length);
  });
});

describe("Settings → Domains page", () => {
  it("shows each domain's state and DNS record, adds through the form, and keeps Staff out", async () => {
    const { store, browser } = await owner();
    const pageRes = await page(browser, "/settings/domains");
    expect(pageRes.status).toBe(200);
    const html = await pageRes.text();
    expect(html).toContain(store.hostname);
    expect(html).toContain("Pending DNS");
    expect(html).toContain(`${store.pendingHostname} CNAME`);
    const host = `form-${uniqueSuffix()}.example.test`;
    const added = await postForm(browser, "/settings/domains", { csrf: browser.csrf, action: "add", hostname: host });
    expect(added.status).toBe(303);
    expect(await (await page(browser, "/settings/domains")).text()).toContain(host);
    const bad = await postForm(browser, "/settings/domains", { csrf: browser.csrf, action: "add", hostname: "not a host" });
    expect(bad.status).toBe(400);
    expect((await postForm(browser, "/settings/domains", { csrf: "nope", action: "add", hostname: host })).status).toBe(403);
    const staff = await addMember(db, store, "staff");
    expect((await page(await sessionFor(db, staff.userId, store.id), "/settings/domains")).status).toBe(403);
  });
});
