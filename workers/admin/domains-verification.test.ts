import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { localDns } from "#shared/domains/dns-local";
import type { LocalKv } from "#shared/domains/local-kv";
import { ADMIN, page, postForm, rpc, rpcJson, sessionFor } from "../../test/admin";
import { call } from "../../test/call";
import { makeStore, testDb, uniqueSuffix } from "../../test/harness";
import { addMember } from "../../test/procedures";
import worker from "./index";

/** What Settings → Domains and domains.* show of verification (issue 12), and the local DNS's dev buttons. */
const db = testDb();
const kv = (env as unknown as { HOSTS: LocalKv }).HOSTS;

interface Listed {
  id: string;
  hostname: string;
  status: string;
  verification: { type: string; name: string; value: string };
  lastCheck: { result: string; message: string } | null;
  routing: { status: string; sslStatus: string | null } | null;
}

async function owner() {
  const store = await makeStore(db);
  const browser = await sessionFor(db, store.ownerUserId, store.id);
  const { items } = await rpcJson<{ items: Listed[] }>(await rpc(browser, "domains/list", {}));
  return { store, browser, items };
}

describe("domain verification in the admin", () => {
  it("answers each domain's TXT record, its last check in words and its edge routing", async () => {
    const { store, browser, items } = await owner();
    const pending = items.find((d) => d.hostname === store.pendingHostname)!;
    expect(pending.verification).toEqual({ type: "TXT", name: `_commerce-verify.${store.pendingHostname}`, value: expect.stringMatching(/^commerce-verify=[0-9a-f]{32}$/) });
    expect(pending.lastCheck).toMatchObject({ result: "not_found", message: "TXT record not found" });
    const added = await rpcJson<Listed>(await rpc(browser, "domains/add", { hostname: `new-${uniqueSuffix()}.example.test` }));
    expect(added).toMatchObject({ status: "pending", lastCheck: null, routing: null, verification: { name: `_commerce-verify.${added.hostname}` } });
    expect(added.verification.value).not.toBe(pending.verification.value);

    await withStore(db, store.id, async (tx) => {
      await tx.$client.query("update store_domain set status = 'failed', failed_reason = 'lapsed' where id = $1", [added.id]);
      await tx.$client.query("update store_domain set router_id = 'abc', router_status = 'pending', router_ssl_status = 'pending_validation' where hostname = $1", [store.hostname]);
    });
    const html = await (await page(browser, "/settings/domains")).text();
    expect(html).toContain(`_commerce-verify.${store.pendingHostname} TXT &quot;${pending.verification.value}&quot;`);
    expect(html).toContain("TXT record not found");
    expect(html).toContain("Verification failed");
    expect(html).toContain("The TXT record was not found within 7 days of adding the domain.");
    expect(html).toContain("edge: pending, certificate pending_validation");
    const { items: after } = await rpcJson<{ items: Listed[] }>(await rpc(browser, "domains/list", {}));
    expect(after.find((d) => d.hostname === store.hostname)?.routing).toEqual({ status: "pending", sslStatus: "pending_validation" });
    expect((await rpc(browser, "domains/setPrimary", { id: added.id })).status).toBe(409); // a failed domain is not verified
  });

  it("while the local DNS is on, a pending domain's dev buttons set what the local DNS answers for its TXT name", async () => {
    const { store, browser, items } = await owner();
    const pending = items.find((d) => d.hostname === store.pendingHostname)!;
    const html = await (await page(browser, "/settings/domains")).text();
    expect(html).toContain("Create the TXT record");
    const set = (record: string, id = pending.id) => postForm(browser, "/settings/domains", { csrf: browser.csrf, action: "dns", id, record });
    expect((await set("txt")).status).toBe(303);
    expect(await localDns(kv).txt(pending.verification.name)).toEqual({ kind: "records", values: [pending.verification.value] });
    expect((await set("servfail")).status).toBe(303);
    await expect(localDns(kv).txt(pending.verification.name)).rejects.toMatchObject({ kind: "servfail" });
    expect((await set("none")).status).toBe(303);
    expect(await localDns(kv).txt(pending.verification.name)).toEqual({ kind: "nxdomain" });
    expect((await set("everything")).status).toBe(400);

    const other = await owner();
    const theirs = other.items.find((d) => d.hostname === other.store.pendingHostname)!;
    expect((await set("txt", theirs.id)).status).toBe(400);
    expect(await localDns(kv).txt(theirs.verification.name)).toEqual({ kind: "nxdomain" });
    const staff = await addMember(db, store, "staff");
    const staffBrowser = await sessionFor(db, staff.userId, store.id);
    expect((await postForm(staffBrowser, "/settings/domains", { csrf: staffBrowser.csrf, action: "dns", id: pending.id, record: "txt" })).status).toBe(403);
  });

  it("shows no dev buttons and refuses them where DNS is real", async () => {
    const { store, browser, items } = await owner();
    const asDeployed = (path: string, init: RequestInit = {}) =>
      call(worker, `${ADMIN}${path}`, { ...init, headers: { cookie: browser.cookie, origin: ADMIN, ...(init.headers as Record<string, string>) }, redirect: "manual" }, { DOMAIN_DNS: "cloudflare" });
    const html = await (await asDeployed("/settings/domains")).text();
    expect(html).toContain(store.pendingHostname);
    expect(html).not.toContain("Create the TXT record");
    const pending = items.find((d) => d.hostname === store.pendingHostname)!;
    const refused = await asDeployed("/settings/domains", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ csrf: browser.csrf, action: "dns", id: pending.id, record: "txt" }).toString(),
    });
    expect(refused.status).toBe(400);
    expect(await localDns(kv).txt(pending.verification.name)).toEqual({ kind: "nxdomain" });
  });
});
