import { describe, expect, it } from "vitest";
import { makeStore, testDb } from "../../test/harness";
import { addMember } from "../../test/procedures";
import { rpc, rpcJson, sessionFor, type RpcError } from "../../test/admin";

const db = testDb();

describe("POST /api/rpc: the error table (SPEC 'Admin RPC errors')", () => {
  it("no active store → 412 PRECONDITION_FAILED with reason no_store", async () => {
    const s = await makeStore(db);
    const browser = await sessionFor(db, s.ownerUserId, null);
    const res = await rpc(browser, "staff/me");
    expect(res.status).toBe(412);
    const body = await rpcJson<RpcError>(res);
    expect(body).toMatchObject({ code: "PRECONDITION_FAILED", data: { reason: "no_store" } });
  });

  it("not a member of the store → 403 'Not a member of this store' with reason no_store", async () => {
    const a = await makeStore(db);
    const b = await makeStore(db);
    const browser = await sessionFor(db, a.ownerUserId, b.id);
    const res = await rpc(browser, "staff/me");
    expect(res.status).toBe(403);
    expect(await rpcJson<RpcError>(res)).toMatchObject({ code: "FORBIDDEN", message: "Not a member of this store", data: { reason: "no_store" } });
  });

  it("store gone → 404 NOT_FOUND with reason no_store", async () => {
    const a = await makeStore(db);
    const browser = await sessionFor(db, a.ownerUserId, a.id);
    const res = await rpc(browser, "store/switch", { storeId: crypto.randomUUID() });
    expect(res.status).toBe(404);
    expect(await rpcJson<RpcError>(res)).toMatchObject({ code: "NOT_FOUND", data: { reason: "no_store" } });
  });

  it("missing permission → 403 'Your role does not allow…' without data.reason", async () => {
    const s = await makeStore(db);
    const staff = await addMember(db, s, "staff");
    const res = await rpc(await sessionFor(db, staff.userId, s.id), "store/current");
    expect(res.status).toBe(403);
    const body = await rpcJson<RpcError>(res);
    expect(body.code).toBe("FORBIDDEN");
    expect(body.message).toMatch(/^Your role does not allow/);
    expect(body.data?.reason).toBeUndefined();
  });
});

describe("POST /api/rpc: the door itself", () => {
  it("answers {json: output} for a permitted call", async () => {
    const s = await makeStore(db);
    const res = await rpc(await sessionFor(db, s.ownerUserId, s.id), "staff/me");
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const me = await rpcJson<{ store: { id: string }; member: { role: string }; permissions: string[] }>(res);
    expect(me.store.id).toBe(s.id);
    expect(me.member.role).toBe("owner");
    expect(me.permissions).toContain("billing.write");
  });

  it("unknown router or procedure → 404", async () => {
    const s = await makeStore(db);
    const browser = await sessionFor(db, s.ownerUserId, s.id);
    for (const path of ["nothing/list", "products/nothing", "products/list/extra"]) {
      const res = await rpc(browser, path);
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
    }
  });

  it("bad input → 400 naming the field", async () => {
    const s = await makeStore(db);
    const browser = await sessionFor(db, s.ownerUserId, s.id);
    const res = await rpc(browser, "products/list", { page: 0 });
    expect(res.status).toBe(400);
    const body = await rpcJson<RpcError>(res);
    expect(body.code).toBe("BAD_REQUEST");
    expect(body.data?.issues?.[0]?.path).toBe("page");
    expect(body.message).toContain("page");
    const unknown = await rpcJson<RpcError>(await rpc(browser, "products/list", { pageSize: 10, colour: "red" }));
    expect(unknown.code).toBe("BAD_REQUEST");
    const noInput = await rpc(browser, "products/list", undefined);
    expect(noInput.status).toBe(200);
  });

  it("malformed JSON → 400; no session → 401; GET → 405", async () => {
    const s = await makeStore(db);
    const browser = await sessionFor(db, s.ownerUserId, s.id);
    const { call } = await import("../../test/call");
    const worker = (await import("./index")).default;
    const bad = await call(worker, "http://admin.test/api/rpc/products/list", {
      method: "POST",
      headers: { "content-type": "application/json", cookie: browser.cookie },
      body: "{nope",
    });
    expect(bad.status).toBe(400);
    expect((await rpc(null, "products/list", {})).status).toBe(401);
    expect((await rpc({ ...browser, cookie: "wc_session=forged" }, "products/list", {})).status).toBe(401);
    const get = await call(worker, "http://admin.test/api/rpc/products/list", { headers: { cookie: browser.cookie } });
    expect(get.status).toBe(405);
  });

  it("CSRF: a foreign Origin or a cross-site fetch is refused; so is a non-JSON body", async () => {
    const s = await makeStore(db);
    const browser = await sessionFor(db, s.ownerUserId, s.id);
    const foreign = await rpc(browser, "store/update", { name: "Hijacked" }, { origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
    expect(await rpcJson<RpcError>(foreign)).toMatchObject({ code: "FORBIDDEN", data: { reason: "csrf" } });
    const crossSite = await rpc(browser, "store/update", { name: "Hijacked" }, { "sec-fetch-site": "cross-site" });
    expect(crossSite.status).toBe(403);
    const form = await rpc(browser, "store/update", { name: "Hijacked" }, { "content-type": "text/plain" });
    expect(form.status).toBe(415);
    const current = await rpcJson<{ name: string }>(await rpc(browser, "store/current", {}));
    expect(current.name).toBe(s.name);
    // No Origin at all (a same-origin navigation or a non-browser client) is fine with the JSON type.
    const noOrigin = await rpc(browser, "store/current", {}, { origin: "" });
    expect(noOrigin.status).toBe(200);
    // Origin "null" (a page with a no-referrer policy) passes only when Sec-Fetch-Site vouches for it.
    expect((await rpc(browser, "store/current", {}, { origin: "null" })).status).toBe(403);
    expect((await rpc(browser, "store/current", {}, { origin: "null", "sec-fetch-site": "same-origin" })).status).toBe(200);
    expect((await rpc(browser, "store/current", {}, { "sec-fetch-site": "same-site" })).status).toBe(403);
  });
});
