import { describe, expect, it } from "vitest";
import { appDelivery } from "#shared/db/schema";
import { withStore } from "#shared/db/with-store";
import { page, postForm, rpc, rpcJson, sessionFor, ownerOf } from "../../test/admin";
import type { CreatedApp } from "../../test/apps";
import { testDb, type TestStore } from "../../test/harness";
import { addMember } from "../../test/procedures";

/** Settings → Apps and an app's delivery log (issue 12), through the real admin Worker. */
const db = testDb();

const owner = () => ownerOf(db);

const fields = (csrf: string, extra: Record<string, string>) => ({ csrf, action: "create", name: "Books", url: "https://books.example.com/hooks", kinds: "", ...extra });

/** A form with repeated `groups` values, as a browser sends ticked boxes. */
function withGroups(base: Record<string, string>, groups: string[]): URLSearchParams {
  const body = new URLSearchParams(base);
  for (const g of groups) body.append("groups", g);
  return body;
}

const post = (browser: Awaited<ReturnType<typeof owner>>["browser"], path: string, body: URLSearchParams) =>
  page(browser, path, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", origin: "http://admin.test" }, body: body.toString() });

async function failedDelivery(store: TestStore, appId: string): Promise<string> {
  const [row] = await withStore(db, store.id, (tx) =>
    tx
      .insert(appDelivery)
      .values({ storeId: store.id, appId, eventId: crypto.randomUUID(), eventKind: "order.paid", eventCreatedAt: new Date(), status: "failed", attempts: 6, lastStatus: 500, lastError: "HTTP 500 Internal Server Error" })
      .returning({ id: appDelivery.id }),
  );
  return row!.id;
}

describe("Settings → Apps", () => {
  it("creates an app and shows its secret once, then lists it without the secret", async () => {
    const { browser } = await owner();
    const settings = await (await page(browser, "/settings")).text();
    expect(settings).toContain('href="/settings/apps"');
    expect((await page(browser, "/settings/apps")).status).toBe(200);
    const created = await post(browser, "/settings/apps", withGroups(fields(browser.csrf, { kinds: "refund.failed" }), ["order.*"]));
    expect(created.status).toBe(201);
    const html = await created.text();
    const secret = /value="(whsec_[A-Za-z0-9_-]{43})"/.exec(html)?.[1];
    expect(secret).toBeDefined();
    expect(html).toContain("shown only once");
    const listed = await (await page(browser, "/settings/apps")).text();
    expect(listed).toContain("https://books.example.com/hooks");
    expect(listed).toContain("order.*, refund.failed");
    expect(listed).toContain(`secret …${secret!.slice(-4)}`);
    expect(listed).not.toContain(secret!);
  });

  it("a refused form comes back with what was typed and each error next to its field", async () => {
    const { browser } = await owner();
    const badUrl = await post(browser, "/settings/apps", withGroups(fields(browser.csrf, { url: "https://10.0.0.1/hooks" }), ["order.*"]));
    expect(badUrl.status).toBe(400);
    const html = await badUrl.text();
    expect(html).toMatch(/<input id="app-url"[^>]*value="https:\/\/10\.0\.0\.1\/hooks"[^>]*aria-invalid="true"[^>]*aria-describedby="app-url-error"/);
    expect(html).toMatch(/<p class="field-error" id="app-url-error">The host is a private/);
    expect(html).toContain('value="Books"');
    const noEvents = await (await post(browser, "/settings/apps", withGroups(fields(browser.csrf, {}), []))).text();
    expect(noEvents).toMatch(/id="app-events-error">Choose at least one event/);
    const badKind = await (await post(browser, "/settings/apps", withGroups(fields(browser.csrf, { kinds: "staff.invited" }), ["order.*"]))).text();
    expect(badKind).toMatch(/id="app-events-error">staff\.invited: Not an event apps can receive/);
    expect((await post(browser, "/settings/apps", withGroups(fields("nope", {}), ["*"]))).status).toBe(403);
    const crossSite = await page(browser, "/settings/apps", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: "https://evil.example" },
      body: withGroups(fields(browser.csrf, {}), ["*"]).toString(),
    });
    expect(crossSite.status).toBe(403);
  });

  it("edits, disables, enables, rotates the secret of and deletes an app", async () => {
    const { browser } = await owner();
    const { app, secret } = await rpcJson<CreatedApp>(await rpc(browser, "apps/create", { name: "Ledger", url: "https://ledger.example.com/in", events: ["product.*"] }));
    const edit = await (await page(browser, `/settings/apps?edit=${app.id}`)).text();
    expect(edit).toMatch(/<input id="edit-url"[^>]*value="https:\/\/ledger\.example\.com\/in"/);
    expect(edit).toMatch(/value="product\.\*" checked/);
    const saved = await post(browser, "/settings/apps", withGroups({ csrf: browser.csrf, action: "update", id: app.id, name: "Ledger 2", url: "https://ledger.example.com/v2", kinds: "order.paid", active: "on" }, []));
    expect(saved.status).toBe(303);
    expect(await rpcJson(await rpc(browser, "apps/get", { id: app.id }))).toMatchObject({ app: { name: "Ledger 2", url: "https://ledger.example.com/v2", events: ["order.paid"], active: true } });
    expect((await postForm(browser, "/settings/apps", { csrf: browser.csrf, action: "disable", id: app.id })).headers.get("location")).toBe("/settings/apps?done=disabled");
    expect(await (await page(browser, "/settings/apps?done=disabled")).text()).toContain("Disabled");
    expect((await postForm(browser, "/settings/apps", { csrf: browser.csrf, action: "enable", id: app.id })).status).toBe(303);
    const rotated = await postForm(browser, "/settings/apps", { csrf: browser.csrf, action: "rotate", id: app.id });
    expect(rotated.status).toBe(200);
    const newSecret = /value="(whsec_[A-Za-z0-9_-]{43})"/.exec(await rotated.text())?.[1];
    expect(newSecret).toBeDefined();
    expect(newSecret).not.toBe(secret);
    expect((await postForm(browser, "/settings/apps", { csrf: browser.csrf, action: "delete", id: app.id })).status).toBe(303);
    expect(await (await page(browser, "/settings/apps")).text()).not.toContain("Ledger 2");
  });

  it("the delivery log shows each delivery's state and last answer, and Redeliver queues a failed one again", async () => {
    const { store, browser } = await owner();
    const { app } = await rpcJson<CreatedApp>(await rpc(browser, "apps/create", { name: "Ledger", url: "https://ledger.example.com/in", events: ["order.*"] }));
    const deliveryId = await failedDelivery(store, app.id);
    const log = await (await page(browser, `/settings/apps/${app.id}`)).text();
    expect(log).toMatch(new RegExp(`data-delivery="${deliveryId}"[\\s\\S]*Failed[\\s\\S]*HTTP 500 Internal Server Error[\\s\\S]*Redeliver`));
    const again = await postForm(browser, `/settings/apps/${app.id}`, { csrf: browser.csrf, action: "redeliver", deliveryId });
    expect(again.status).toBe(303);
    expect(again.headers.get("location")).toBe(`/settings/apps/${app.id}?done=redelivered`);
    const after = await (await page(browser, `/settings/apps/${app.id}?done=redelivered`)).text();
    expect(after).toContain("Delivery queued again.");
    expect(after).toMatch(/Pending/);
    expect(after).not.toContain('value="redeliver"');
    const twice = await postForm(browser, `/settings/apps/${app.id}`, { csrf: browser.csrf, action: "redeliver", deliveryId });
    expect(twice.status).toBe(409);
    expect(await twice.text()).toContain("still being tried");
    expect(await (await page(browser, `/settings/apps/${app.id}?status=failed`)).text()).toContain("No deliveries failed yet.");
  });

  it("Staff get the 403 page; another store's app is the 404 page; Admins see no less than Owners", async () => {
    const { store, browser } = await owner();
    const { app } = await rpcJson<CreatedApp>(await rpc(browser, "apps/create", { name: "Ledger", url: "https://ledger.example.com/in", events: ["order.*"] }));
    const staff = await sessionFor(db, (await addMember(db, store, "staff")).userId, store.id);
    expect((await page(staff, "/settings/apps")).status).toBe(403);
    expect((await page(staff, `/settings/apps/${app.id}`)).status).toBe(403);
    expect((await postForm(staff, "/settings/apps", { csrf: staff.csrf, action: "delete", id: app.id })).status).toBe(403);
    const other = await owner();
    expect((await page(other.browser, `/settings/apps/${app.id}`)).status).toBe(404);
    expect((await postForm(other.browser, "/settings/apps", { csrf: other.browser.csrf, action: "delete", id: app.id })).status).toBe(404);
    const admin = await sessionFor(db, (await addMember(db, store, "admin")).userId, store.id);
    expect(await (await page(admin, "/settings/apps")).text()).toContain("New app");
  });
});
