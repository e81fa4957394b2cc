import { describe, expect, it } from "vitest";
import { AREA_SCOPES, permissionsOfAreas } from "#shared/auth/grants";
import { sha256Hex } from "#shared/core/tokens";
import { withStore } from "#shared/db/with-store";
import { procedureKey } from "#shared/procedures/define";
import { PROCEDURES } from "#shared/registry/procedures";
import { makeStore, testDb } from "../../test/harness";
import { addMember } from "../../test/procedures";
import { api, createToken, rpc, rpcJson, sessionFor, type RpcError } from "../../test/admin";

const db = testDb();

async function ownerWithToken(areas: string[] = ["products:read"]) {
  const store = await makeStore(db);
  const browser = await sessionFor(db, store.ownerUserId, store.id);
  return { store, browser, ...(await createToken(browser, areas)) };
}

describe("token creation", () => {
  it("answers the secret once and stores only its SHA-256 hash and a 4-character hint", async () => {
    const { store, browser, token, grant } = await ownerWithToken(["orders:read", "products:write", "orders:write"]);
    expect(token).toMatch(/^wc_live_[A-Za-z0-9_-]{43}$/);
    expect(grant).toMatchObject({ status: "active", hint: token.slice(-4), areas: ["products:write", "orders:write"] });
    const rows = await withStore(db, store.id, (tx) => tx.$client.query("select * from api_grant where id = $1", [grant.id]));
    expect(rows.rows[0].secret_hash).toBe(await sha256Hex(token));
    expect(JSON.stringify(rows.rows)).not.toContain(token.slice(8));
    const listed = await (await rpc(browser, "apiGrants/list")).text();
    expect(listed).toContain(grant.id);
    expect(listed).not.toContain(token.slice(8));
  });

  it("refuses areas beyond the member's role, and bad lifetimes", async () => {
    const store = await makeStore(db);
    const staff = await addMember(db, store, "staff");
    const browser = await sessionFor(db, staff.userId, store.id);
    const res = await rpc(browser, "apiGrants/createToken", { name: "x", areas: ["analytics:read"], lifetimeDays: 30 });
    expect(res.status).toBe(403);
    expect((await rpcJson<RpcError>(res)).data?.issues?.[0]?.path).toBe("areas");
    const bad = await rpc(browser, "apiGrants/createToken", { name: "x", areas: ["products:read"], lifetimeDays: 7 });
    expect(bad.status).toBe(400);
    expect((await rpcJson<RpcError>(bad)).data?.issues?.[0]?.path).toBe("lifetimeDays");
    expect((await rpc(browser, "apiGrants/createToken", { name: "ok", areas: ["products:write"], lifetimeDays: 90 })).status).toBe(200);
  });
});

describe("POST /api/v1: the SPEC error table", () => {
  it("runs a permitted procedure for the token's store, with RateLimit headers", async () => {
    const { store, token } = await ownerWithToken();
    const res = await api(token, "products/list", { page: 1 });
    expect(res.status).toBe(200);
    const body = await rpcJson<{ items: { title: string }[]; total: number }>(res);
    expect(body.items.map((p) => p.title)).toEqual(["Fixture"]);
    expect(res.headers.get("ratelimit-policy")).toBe('"default";q=120;w=60');
    expect(res.headers.get("ratelimit")).toMatch(/^"default";r=119;t=\d+$/);
    expect(store.id).toBeTruthy();
  });

  it("no bearer → 401 with WWW-Authenticate naming the resource metadata", async () => {
    const res = await api(null, "products/list", {});
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe('Bearer resource_metadata="http://admin.test/.well-known/oauth-protected-resource/api/v1"');
    const meta = await (await import("../../test/call")).call((await import("./index")).default, "http://admin.test/.well-known/oauth-protected-resource/api/v1");
    expect(await meta.json()).toMatchObject({ resource: "http://admin.test/api/v1", authorization_servers: ["http://admin.test"] });
  });

  it("unknown, malformed, expired and revoked tokens → 401 invalid_token with the same challenge", async () => {
    const { store, browser, token, grant } = await ownerWithToken();
    for (const bad of [`wc_live_${"A".repeat(43)}`, "not-a-token", `${token}x`]) {
      const res = await api(bad, "products/list", {});
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer resource_metadata=".*", error="invalid_token"$/);
    }
    const expiring = await createToken(browser, ["products:read"], { lifetimeDays: 30 });
    await withStore(db, store.id, (tx) =>
      tx.$client.query("update api_grant set created_at = now() - interval '31 days', expires_at = now() - interval '1 second' where id = $1", [expiring.grant.id]),
    );
    const expired = await api(expiring.token, "products/list", {});
    expect(expired.status).toBe(401);
    expect((await rpcJson<RpcError>(expired)).message).toContain("expired");

    expect((await api(token, "products/list", {})).status).toBe(200);
    expect((await rpc(browser, "apiGrants/revoke", { id: grant.id })).status).toBe(200);
    const revoked = await api(token, "products/list", {});
    expect(revoked.status).toBe(401);
    expect((await rpcJson<RpcError>(revoked)).message).toContain("revoked");
    const list = await rpcJson<{ items: { id: string; status: string }[] }>(await rpc(browser, "apiGrants/list"));
    expect(list.items.find((g) => g.id === grant.id)?.status).toBe("revoked");
    expect(list.items.find((g) => g.id === expiring.grant.id)?.status).toBe("expired");
  });

  it("refuses session and none procedures for tokens (403)", async () => {
    const { token, store } = await ownerWithToken(AREA_SCOPES.filter((s) => s.endsWith(":write")));
    for (const path of ["staff/me", "store/switch", "store/list", "apiGrants/createToken", "apiGrants/list", "apiActivity/list"]) {
      const res = await api(token, path, path === "store/switch" ? { storeId: store.id } : {});
      expect({ path, status: res.status }).toEqual({ path, status: 403 });
    }
  });

  it("a permission outside the grant or outside the role → 403; a demotion bites on the next call", async () => {
    const store = await makeStore(db);
    const admin = await addMember(db, store, "admin");
    const theirs = await sessionFor(db, admin.userId, store.id);
    const { token } = await createToken(theirs, ["analytics:read", "products:read"]);
    expect((await api(token, "analytics/summary", { from: "2026-01-01", to: "2026-01-31" })).status).toBe(200);
    const outsideGrant = await api(token, "products/create", { title: "x", variants: [{ priceMinor: 1 }] });
    expect(outsideGrant.status).toBe(403);
    expect((await rpcJson<RpcError>(outsideGrant)).message).toMatch(/grant does not allow/);

    await rpc(await sessionFor(db, store.ownerUserId, store.id), "staff/setRole", { memberId: admin.memberId, role: "staff" });
    const outsideRole = await api(token, "analytics/summary", { from: "2026-01-01", to: "2026-01-31" });
    expect(outsideRole.status).toBe(403);
    expect((await rpcJson<RpcError>(outsideRole)).message).toMatch(/role does not allow/);
    expect((await api(token, "products/list", {})).status).toBe(200);

    await rpc(await sessionFor(db, store.ownerUserId, store.id), "staff/remove", { memberId: admin.memberId });
    expect((await api(token, "products/list", {})).status).toBe(401);
  });

  it("write areas never reach refunds, cancels, deletes, settings, staff or billing (checked against the whole registry)", async () => {
    const { browser, token } = await ownerWithToken([...AREA_SCOPES]);
    const granted = permissionsOfAreas(AREA_SCOPES);
    const wrong: string[] = [];
    // A grant may make 120 calls a minute and the registry holds more procedures: a fresh token every 100.
    let current = token;
    for (const [i, proc] of PROCEDURES.entries()) {
      if (i > 0 && i % 100 === 0) current = (await createToken(browser, [...AREA_SCOPES])).token;
      const res = await api(current, `${proc.router}/${proc.name}`, {});
      const reachable = proc.access !== "none" && proc.access !== "session" && granted.has(proc.access);
      if ((res.status === 403) === reachable || res.status >= 500) wrong.push(`${procedureKey(proc)}: ${res.status}`);
    }
    expect(wrong).toEqual([]);
    expect((await api(current, "products/delete", { id: crypto.randomUUID() })).status).toBe(403);
    expect((await api(current, "store/current", {})).status).toBe(403);
    expect((await api(current, "staff/list", {})).status).toBe(403);
  });

  it("ignores cookies: a signed-in browser's cookie never authenticates /api/v1", async () => {
    const { browser, token } = await ownerWithToken();
    const cookieOnly = await api(null, "products/list", {}, { cookie: browser.cookie });
    expect(cookieOnly.status).toBe(401);
    // With a token, the cookie's session (another store) changes nothing: the grant's store answers.
    const other = await makeStore(db);
    const elsewhere = await sessionFor(db, other.ownerUserId, other.id);
    const res = await api(token, "store/current", {}, { cookie: elsewhere.cookie });
    expect(res.status).toBe(403);
  });

  it("unknown procedures and versions → 404; other methods → 405; non-JSON → 415", async () => {
    const { token } = await ownerWithToken();
    expect((await api(token, "products/nothing", {})).status).toBe(404);
    const { call } = await import("../../test/call");
    const worker = (await import("./index")).default;
    const v2 = await call(worker, "http://admin.test/api/v2/products/list", {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(v2.status).toBe(404);
    const get = await call(worker, "http://admin.test/api/v1/products/list", { headers: { authorization: `Bearer ${token}` } });
    expect(get.status).toBe(405);
    expect((await api(token, "products/list", {}, { "content-type": "text/plain" })).status).toBe(415);
    const bad = await api(token, "products/list", { pageSize: 500 });
    expect(bad.status).toBe(400);
    expect((await rpcJson<RpcError>(bad)).data?.issues?.[0]?.path).toBe("pageSize");
  });
});
