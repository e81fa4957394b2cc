import { AREA_SCOPES } from "#shared/auth/grants";
import { describe, expect, it } from "vitest";
import { appDelivery } from "#shared/db/schema";
import { withStore } from "#shared/db/with-store";
import { ADMIN, api, createToken, rpc, rpcJson, sessionFor, type Browser, type RpcError, ownerOf } from "../../test/admin";
import type { CreatedApp } from "../../test/apps";
import { call } from "../../test/call";
import { testDb } from "../../test/harness";
import { addMember } from "../../test/procedures";
import worker from "./index";

/** Apps over /api/rpc (issue 12): create, list, get, update, delete, rotate, with their validation and who may. */
const db = testDb();

const owner = () => ownerOf(db);

const create = (browser: Browser, input: Record<string, unknown>) =>
  rpc(browser, "apps/create", { name: "Books", url: "https://books.example.com/hooks", events: ["order.*"], ...input });

async function refusal(res: Response): Promise<{ status: number; paths: string[]; messages: string[] }> {
  const body = await rpcJson<RpcError>(res);
  return { status: res.status, paths: (body.data?.issues ?? []).map((i) => i.path), messages: (body.data?.issues ?? []).map((i) => i.message) };
}

describe("apps over /api/rpc", () => {
  it("creates an app and answers its secret once: list and get never show it, and the database does not hold it", async () => {
    const { store, browser } = await owner();
    const res = await create(browser, { events: ["order.paid", "refund.*", "order.paid"] });
    expect(res.status).toBe(200);
    const { app, secret } = await rpcJson<CreatedApp>(res);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(app).toMatchObject({ name: "Books", url: "https://books.example.com/hooks", events: ["order.paid", "refund.*"], active: true, secretHint: secret.slice(-4) });
    const listed = await (await rpc(browser, "apps/list", {})).text();
    const got = await (await rpc(browser, "apps/get", { id: app.id })).text();
    for (const text of [listed, got]) {
      expect(text).toContain(app.id);
      expect(text).not.toContain(secret.slice(6, 30));
      expect(text).not.toMatch(/secretSalt|secretHash/);
    }
    const row = await withStore(db, store.id, (tx) => tx.$client.query("select row_to_json(a)::text as row from store_app a where id = $1", [app.id]));
    expect(String(row.rows[0]!.row)).not.toContain(secret.slice(6, 30));
    expect(JSON.parse(got).json.deliveries).toEqual({ items: [], page: 1, pageSize: 20, total: 0 });
  });

  it.each([
    ["not a url", /Not a URL/],
    ["https://10.0.0.8/hooks", /private/],
    ["https://169.254.169.254/latest/meta-data/", /private/],
    ["https://intranet/hooks", /not a public domain/],
    ["", /Enter the URL/],
  ])("refuses the URL %j with a 400 naming url", async (url, why) => {
    const { browser } = await owner();
    const r = await refusal(await create(browser, { url }));
    expect(r.status).toBe(400);
    expect(r.paths).toEqual(["url"]);
    expect(r.messages[0]).toMatch(why);
  });

  it("in production also refuses http, a port and loopback, which development and tests allow for a local receiver", async () => {
    const { browser } = await owner();
    const production = { APP_ENV: "production", APP_WEBHOOK_ROOT_SECRET: "a-production-root-secret-of-32-characters" };
    const createIn = (env: Record<string, string>, url: string) =>
      call(worker, `${ADMIN}/api/rpc/apps/create`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: ADMIN, cookie: browser.cookie },
        body: JSON.stringify({ json: { name: `App ${url}`, url, events: ["*"] } }),
      }, env);
    for (const [url, why] of [
      ["http://books.example.com/hooks", /Only https/],
      ["https://books.example.com:8443/hooks", /port 443/],
      ["https://localhost/hooks", /loopback/],
    ] as const) {
      const r = await refusal(await createIn(production, url));
      expect(r, url).toMatchObject({ status: 400, paths: ["url"] });
      expect(r.messages[0]).toMatch(why);
      expect((await createIn({}, url)).status, url).toBe(200);
    }
    expect((await createIn(production, "https://books.example.com/hooks")).status).toBe(200);
  });

  it("refuses events apps cannot receive and an empty list, naming the entry; a second app of the same name is a 409 naming name", async () => {
    const { browser } = await owner();
    expect(await refusal(await create(browser, { events: ["order.paid", "staff.*"] }))).toMatchObject({ status: 400, paths: ["events.1"] });
    expect(await refusal(await create(browser, { events: [] }))).toMatchObject({ status: 400, paths: ["events"] });
    expect(await refusal(await create(browser, { name: " " }))).toMatchObject({ status: 400, paths: ["name"] });
    expect((await create(browser, {})).status).toBe(200);
    expect(await refusal(await create(browser, {}))).toMatchObject({ status: 409, paths: ["name"] });
  });

  it("updates name, URL (checked the same way), events and the active switch; deletes with its log", async () => {
    const { store, browser } = await owner();
    const { app } = await rpcJson<CreatedApp>(await create(browser, {}));
    expect(await refusal(await rpc(browser, "apps/update", { id: app.id, url: "https://192.168.1.4/x" }))).toMatchObject({ status: 400, paths: ["url"] });
    const updated = await rpc(browser, "apps/update", { id: app.id, url: "https://new.example.com/in", events: ["*"], active: false, name: "Ledger" });
    expect(await rpcJson(updated)).toMatchObject({ id: app.id, name: "Ledger", url: "https://new.example.com/in", events: ["*"], active: false });
    await withStore(db, store.id, (tx) =>
      tx.insert(appDelivery).values({ storeId: store.id, appId: app.id, eventId: crypto.randomUUID(), eventKind: "order.paid", eventCreatedAt: new Date() }),
    );
    expect((await rpc(browser, "apps/delete", { id: app.id })).status).toBe(200);
    expect((await rpc(browser, "apps/get", { id: app.id })).status).toBe(404);
    expect((await rpc(browser, "apps/delete", { id: app.id })).status).toBe(404);
    const left = await withStore(db, store.id, (tx) => tx.$client.query("select count(*)::int as n from app_delivery where app_id = $1", [app.id]));
    expect(left.rows[0]).toEqual({ n: 0 });
  });

  it("the delivery log is newest first, paged and filtered by status", async () => {
    const { store, browser } = await owner();
    const { app } = await rpcJson<CreatedApp>(await create(browser, {}));
    const at = (m: number) => new Date(Date.UTC(2026, 10, 1, 12, m));
    await withStore(db, store.id, (tx) =>
      tx.insert(appDelivery).values(
        (["delivered", "failed", "pending"] as const).map((status, i) => ({
          storeId: store.id,
          appId: app.id,
          eventId: crypto.randomUUID(),
          eventKind: "order.paid",
          eventCreatedAt: at(i),
          status,
          createdAt: at(i),
        })),
      ),
    );
    type Log = { deliveries: { items: { status: string }[]; total: number } };
    const first = await rpcJson<Log>(await rpc(browser, "apps/get", { id: app.id, pageSize: 2 }));
    expect(first.deliveries.items.map((d) => d.status)).toEqual(["pending", "failed"]);
    expect(first.deliveries.total).toBe(3);
    const second = await rpcJson<Log>(await rpc(browser, "apps/get", { id: app.id, pageSize: 2, page: 2 }));
    expect(second.deliveries.items.map((d) => d.status)).toEqual(["delivered"]);
    const failed = await rpcJson<Log>(await rpc(browser, "apps/get", { id: app.id, status: "failed" }));
    expect(failed.deliveries).toMatchObject({ total: 1, items: [{ status: "failed" }] });
  });

  it("Admins may do everything; Staff may do nothing; tokens never, whatever their areas", async () => {
    const { store, browser } = await owner();
    const { app } = await rpcJson<CreatedApp>(await create(browser, {}));
    const admin = await sessionFor(db, (await addMember(db, store, "admin")).userId, store.id);
    expect((await rpc(admin, "apps/rotateSecret", { id: app.id })).status).toBe(200);
    expect((await rpc(admin, "apps/list", {})).status).toBe(200);
    const staff = await sessionFor(db, (await addMember(db, store, "staff")).userId, store.id);
    for (const [path, input] of [["apps/list", {}], ["apps/get", { id: app.id }], ["apps/create", {}], ["apps/delete", { id: app.id }]] as const) {
      const res = await rpc(staff, path, input);
      expect(res.status, path).toBe(403);
      expect((await rpcJson<RpcError>(res)).message).toMatch(/^Your role does not allow/);
    }
    const { token } = await createToken(browser, [...AREA_SCOPES]);
    expect((await api(token, "apps/list", {})).status).toBe(403);
    expect((await api(token, "apps/create", { name: "T", url: "https://t.example.com/", events: ["*"] })).status).toBe(403);
  });
});
