import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { createToken, rpc, rpcJson, sessionFor, type Browser, type RpcError, ownerOf } from "../../test/admin";
import { makeStore, testDb, uniqueSuffix } from "../../test/harness";
import { adminFetch, connectMcpClient, SECURE_ADMIN } from "../../test/oauth";
import { addMember } from "../../test/procedures";
import { traced } from "../../test/proxy";

/**
 * Round trips of the changes of API grants, apps, domains and AI approvals (at most two each, counted by
 * the local proxy per traced request), and the refusals their guards make inside the change's own unit.
 */
const db = testDb();

const change = (browser: Browser, path: string, input: unknown) => traced((h) => rpc(browser, path, input, h));

/** Status, round trips on the answer's path, and after it: "200 1 0". */
const counted = (r: Awaited<ReturnType<typeof traced>>) => `${r.status} ${r.trips.turns} ${r.trips.after.turns}`;

const owner = () => ownerOf(db);

/** One value of one row, read as the application reads (inside the store). */
const valueOf = async (storeId: string, query: string, params: unknown[] = []) =>
  withStore(db, storeId, (tx) => tx.$client.query<{ v: unknown }>(query, params)).then((r) => r.rows[0]?.v);

const eventCount = (storeId: string, kind: string) => valueOf(storeId, "select count(*)::int as v from outbox_event where kind = $1", [kind]);

describe("round trips: API grants", () => {
  it("createToken and revoke are one round trip each, with nothing after the answer", async () => {
    const { browser } = await owner();
    const created = await change(browser, "apiGrants/createToken", { name: "Nightly", areas: ["products:read", "orders:write"], lifetimeDays: 30 });
    expect(counted(created), created.body).toBe("200 1 0");
    const { token, grant } = created.json() as { token: string; grant: { id: string; status: string; hint: string; areas: string[] } };
    expect(grant).toMatchObject({ status: "active", hint: token.slice(-4), areas: ["products:read", "orders:write"] });
    const revoked = await change(browser, "apiGrants/revoke", { id: grant.id });
    expect(counted(revoked), revoked.body).toBe("200 1 0");
    expect(revoked.json()).toMatchObject({ id: grant.id, status: "revoked", kind: "token" });
    // Revoking again changes nothing and answers the same grant.
    const again = await change(browser, "apiGrants/revoke", { id: grant.id });
    expect(counted(again)).toBe("200 1 0");
    expect((again.json() as { revokedAt: string }).revokedAt).toBe((revoked.json() as { revokedAt: string }).revokedAt);
  });

  it("areas beyond the role are refused in the change's unit, each named in the order given", async () => {
    const store = await makeStore(db);
    const staff = await sessionFor(db, (await addMember(db, store, "staff")).userId, store.id);
    const before = await valueOf(store.id, "select count(*)::int as v from api_grant");
    const refused = await change(staff, "apiGrants/createToken", { name: "x", areas: ["analytics:read", "products:write", "content:write", "analytics:read"], lifetimeDays: null });
    expect(counted(refused)).toBe("403 1 0");
    const body = refused.json() as RpcError;
    expect(body.message).toBe("Your role does not allow granting analytics:read, content:write, analytics:read.");
    expect(body.data?.issues).toEqual([{ path: "areas", message: "beyond your role: analytics:read, content:write, analytics:read" }]);
    expect(await valueOf(store.id, "select count(*)::int as v from api_grant")).toBe(before);
  });

  it("revoke: another store's grant is not found, a grant the caller cannot see neither, another member's needs staff.write", async () => {
    const { store, browser } = await owner();
    const other = await owner();
    const { grant } = await createToken(other.browser, ["products:read"]);
    const elsewhere = await change(browser, "apiGrants/revoke", { id: grant.id });
    expect(counted(elsewhere)).toBe("404 1 0");
    expect(await valueOf(other.store.id, "select revoked_at as v from api_grant where id = $1", [grant.id])).toBeNull();
    const ownerGrant = await createToken(browser, ["products:read"]);
    const staff = await sessionFor(db, (await addMember(db, store, "staff")).userId, store.id);
    expect(counted(await change(staff, "apiGrants/revoke", { id: ownerGrant.grant.id }))).toBe("404 1 0");
    const admin = await sessionFor(db, (await addMember(db, store, "admin")).userId, store.id);
    const forbidden = await change(admin, "apiGrants/revoke", { id: ownerGrant.grant.id });
    expect(counted(forbidden)).toBe("403 1 0");
    expect((forbidden.json() as RpcError).data).toEqual({ permission: "staff.write" });
    expect(await valueOf(store.id, "select revoked_at as v from api_grant where id = $1", [ownerGrant.grant.id])).toBeNull();
  });

  it("revoking an OAuth connection deletes its provider tokens once the revocation has committed (KV, no database trip)", async () => {
    const { oauth, browser } = await connectMcpClient(db);
    const grants = await rpcJson<{ items: { id: string; kind: string }[] }>(await rpc(browser, "apiGrants/list", {}));
    const grant = grants.items.find((g) => g.kind === "oauth")!;
    expect(counted(await change(browser, "apiGrants/revoke", { id: grant.id }))).toBe("200 1 0");
    const refresh = await adminFetch(`${SECURE_ADMIN}/api/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: oauth.saved!.refresh_token!, client_id: oauth.info!.client_id }).toString(),
    });
    expect(refresh.status).toBe(400);
  });
});

describe("round trips: domains", () => {
  const verified = (storeId: string, hostname: string) =>
    valueOf(storeId, "insert into store_domain (store_id, hostname, status, verified_at) values ($1, $2, 'verified', now()) returning id as v", [storeId, hostname]) as Promise<string>;

  it("add, remove and setPrimary are one round trip each", async () => {
    const { store, browser } = await owner();
    const added = await change(browser, "domains/add", { hostname: `rt-${uniqueSuffix()}.example.test` });
    expect(counted(added), added.body).toBe("200 1 0");
    const domain = added.json() as { id: string; hostname: string; status: string; verification: { type: string } };
    expect(domain).toMatchObject({ status: "pending", isPrimary: false, verification: { type: "TXT" }, lastCheck: null, routing: null });
    expect(await eventCount(store.id, "domain.added")).toBe(1);
    const removed = await change(browser, "domains/remove", { id: domain.id });
    expect(counted(removed), removed.body).toBe("200 1 0");
    expect(removed.json()).toEqual({ id: domain.id, hostname: domain.hostname, status: "pending", removed: true });
    // A hostname another store has verified is refused by the same unit (the privileged lookup is a statement of it).
    const other = await owner();
    const taken = await change(browser, "domains/add", { hostname: other.store.hostname });
    expect(counted(taken), taken.body).toBe("409 1 0");
    const events = await withStore(db, store.id, (tx) => tx.$client.query<{ payload: unknown }>("select payload from outbox_event where kind = 'domain.removed'"));
    expect(events.rows.map((r) => r.payload)).toEqual([{ domainId: domain.id, hostname: domain.hostname, routerId: null, status: "pending", verifiedAt: null }]);

    const hostname = `primary-${uniqueSuffix()}.example.test`;
    const id = await verified(store.id, hostname);
    const primary = await change(browser, "domains/setPrimary", { id });
    expect(counted(primary), primary.body).toBe("200 1 0");
    expect(Object.keys(primary.json() as object)).toEqual(["id", "hostname", "status", "isPrimary", "verifiedAt", "createdAt"]);
    expect(primary.json()).toMatchObject({ id, hostname, status: "verified", isPrimary: true });
    expect(await eventCount(store.id, "domain.primary_changed")).toBe(1);
    // Primary already: the same answer, nothing changed, no event.
    const again = await change(browser, "domains/setPrimary", { id });
    expect(counted(again)).toBe("200 1 0");
    expect(again.json()).toEqual(primary.json());
    expect(await eventCount(store.id, "domain.primary_changed")).toBe(1);
  });

  it("refusals: a pending domain cannot be primary, the primary stays while others exist, another store's ids are not found", async () => {
    const { store, browser } = await owner();
    const other = await owner();
    const { items } = await rpcJson<{ items: { id: string; hostname: string; isPrimary: boolean }[] }>(await rpc(browser, "domains/list", {}));
    const primary = items.find((d) => d.isPrimary)!;
    const pending = items.find((d) => d.hostname === store.pendingHostname)!;
    const notVerified = await change(browser, "domains/setPrimary", { id: pending.id });
    expect(counted(notVerified)).toBe("409 1 0");
    expect((notVerified.json() as RpcError).data?.issues).toEqual([{ path: "id", message: "not verified" }]);
    const kept = await change(browser, "domains/remove", { id: primary.id });
    expect(counted(kept)).toBe("409 1 0");
    expect((kept.json() as RpcError).data?.issues).toEqual([{ path: "id", message: "primary domain" }]);
    for (const path of ["domains/remove", "domains/setPrimary"]) expect(counted(await change(other.browser, path, { id: primary.id })), path).toBe("404 1 0");
    const left = await rpcJson<{ items: { id: string; isPrimary: boolean }[] }>(await rpc(browser, "domains/list", {}));
    expect(left.items.map((d) => [d.id, d.isPrimary])).toEqual(items.map((d) => [d.id, d.isPrimary]));
    expect(await eventCount(store.id, "domain.removed")).toBe(0);
  });

  it("setPrimary calls at once run one after the other: each succeeds, and exactly one domain is primary", async () => {
    const { store, browser } = await owner();
    const ids = await Promise.all(["a", "b", "c"].map((n) => verified(store.id, `${n}-${uniqueSuffix()}.example.test`)));
    const answers = await Promise.all(ids.map((id) => rpc(browser, "domains/setPrimary", { id })));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(await valueOf(store.id, "select count(*)::int as v from store_domain where is_primary")).toBe(1);
    expect(await eventCount(store.id, "domain.primary_changed")).toBe(3);
  });
});

describe("round trips: apps", () => {
  const appOf = (storeId: string) => valueOf(storeId, "select id as v from store_app where name = 'Fixture app'") as Promise<string>;

  it("create and update are one round trip each (the secret is made before the unit); rotateSecret two (the version is read first)", async () => {
    const { store, browser } = await owner();
    const created = await change(browser, "apps/create", { name: "Ledger", url: "https://ledger.example.com/in", events: ["order.*"] });
    expect(counted(created), created.body).toBe("200 1 0");
    const { app, secret } = created.json() as { app: { id: string; secretHint: string; secretVersion: number }; secret: string };
    expect(app).toMatchObject({ secretHint: secret.slice(-4), secretVersion: 1, pendingDeliveries: 0 });
    const updated = await change(browser, "apps/update", { id: app.id, name: "Books", active: false });
    expect(counted(updated), updated.body).toBe("200 1 0");
    expect(updated.json()).toMatchObject({ id: app.id, name: "Books", active: false });
    const rotated = await change(browser, "apps/rotateSecret", { id: app.id });
    expect(counted(rotated), rotated.body).toBe("200 2 0");
    const next = rotated.json() as { app: { secretVersion: number; secretHint: string; previousSecretExpiresAt: string | null }; secret: string };
    expect(next.app).toMatchObject({ secretVersion: 2, secretHint: next.secret.slice(-4) });
    expect(next.app.previousSecretExpiresAt).not.toBeNull();
    const events = await withStore(db, store.id, (tx) =>
      tx.$client.query<{ kind: string; payload: unknown }>("select kind, payload from outbox_event where kind like 'app.%' order by created_at, id"),
    );
    expect(events.rows).toEqual([
      { kind: "app.created", payload: { appId: app.id, events: ["order.*"] } },
      { kind: "app.updated", payload: { appId: app.id, fields: ["name", "active"] } },
      { kind: "app.secret_rotated", payload: { appId: app.id, version: 2, keptPrevious: true } },
    ]);
  });

  it("a URL the policy refuses is refused by the change's unit after the caller's checks; two rotations at once both happen, one after the other", async () => {
    const { store, browser } = await owner();
    const staff = await sessionFor(db, (await addMember(db, store, "staff")).userId, store.id);
    expect(counted(await change(staff, "apps/create", { name: "X", url: "https://10.0.0.1/in", events: ["*"] }))).toBe("403 1 0");
    const refused = await change(browser, "apps/create", { name: "X", url: "https://10.0.0.1/in", events: ["*"] });
    expect(counted(refused)).toBe("400 1 0");
    expect((refused.json() as RpcError).data?.issues?.[0]?.path).toBe("url");
    const appId = await appOf(store.id);
    const bad = await change(browser, "apps/update", { id: appId, url: "https://192.168.1.4/x", name: "Renamed" });
    expect(counted(bad)).toBe("400 1 0");
    expect(counted(await change(browser, "apps/update", { id: crypto.randomUUID(), url: "https://192.168.1.4/x" }))).toBe("404 1 0");
    expect(await valueOf(store.id, "select name as v from store_app where id = $1", [appId])).toBe("Fixture app");
    expect(await valueOf(store.id, "select count(*)::int as v from store_app")).toBe(1);
    expect(counted(await change(browser, "apps/rotateSecret", { id: crypto.randomUUID() }))).toBe("404 1 0");

    const { app } = (await rpcJson<{ app: { id: string } }>(await rpc(browser, "apps/create", { name: "Twice", url: "https://twice.example.com/in", events: ["*"] })));
    const both = await Promise.all([1, 2].map(() => rpc(browser, "apps/rotateSecret", { id: app.id })));
    expect(both.map((r) => r.status)).toEqual([200, 200]);
    const versions = await Promise.all(both.map(async (r) => (await rpcJson<{ app: { secretVersion: number } }>(r)).app.secretVersion));
    expect(versions.sort()).toEqual([2, 3]);
    expect(await valueOf(store.id, "select previous_secret_version as v from store_app where id = $1", [app.id])).toBe(2);
  });

  it("delete and redeliver are one round trip each", async () => {
    const { store, browser } = await owner();
    const appId = await appOf(store.id);
    await valueOf(store.id, "update store_app set active = true where id = $1", [appId]);
    const deliveryId = (await valueOf(
      store.id,
      "insert into app_delivery (store_id, app_id, event_id, event_kind, event_created_at, status, round, attempts) values ($1, $2, gen_random_uuid(), 'order.paid', now(), 'failed', 1, 6) returning id as v",
      [store.id, appId],
    )) as string;
    const redelivered = await change(browser, "apps/redeliver", { deliveryId });
    expect(counted(redelivered), redelivered.body).toBe("200 1 0");
    expect(redelivered.json()).toMatchObject({ id: deliveryId, status: "pending", round: 2, attempts: 0, eventKind: "order.paid" });
    expect(redelivered.json()).not.toHaveProperty("appId");
    const deleted = await change(browser, "apps/delete", { id: appId });
    expect(counted(deleted), deleted.body).toBe("200 1 0");
    expect(deleted.json()).toEqual({ id: appId, deleted: true });
    const events = await withStore(db, store.id, (tx) => tx.$client.query<{ payload: unknown }>("select payload from outbox_event where kind = 'app.deleted'"));
    expect(events.rows.map((r) => r.payload)).toEqual([{ appId }]);
  });

  it("refusals change nothing: another store's app or delivery is not found; a disabled app's delivery waits", async () => {
    const { store, browser } = await owner();
    const other = await owner();
    const appId = await appOf(store.id);
    const deliveryId = (await valueOf(
      store.id,
      "insert into app_delivery (store_id, app_id, event_id, event_kind, event_created_at, status) values ($1, $2, gen_random_uuid(), 'order.paid', now(), 'failed') returning id as v",
      [store.id, appId],
    )) as string;
    expect(counted(await change(other.browser, "apps/delete", { id: appId }))).toBe("404 1 0");
    expect(counted(await change(other.browser, "apps/redeliver", { deliveryId }))).toBe("404 1 0");
    const disabled = await change(browser, "apps/redeliver", { deliveryId });
    expect(counted(disabled)).toBe("409 1 0");
    expect((disabled.json() as RpcError).data?.issues).toEqual([{ path: "deliveryId", message: "The app is disabled: enable it first." }]);
    expect(await valueOf(store.id, "select round || ' ' || status as v from app_delivery where id = $1", [deliveryId])).toBe("1 failed");
    expect(await valueOf(store.id, "select count(*)::int as v from store_app where id = $1", [appId])).toBe(1);
    expect(await eventCount(store.id, "app.deleted")).toBe(0);
  });

  it("two redeliveries at once: one starts a round, the other is told the delivery is being tried; two deletes: one finds nothing", async () => {
    const { store, browser } = await owner();
    const appId = await appOf(store.id);
    await valueOf(store.id, "update store_app set active = true where id = $1", [appId]);
    const deliveryId = (await valueOf(
      store.id,
      "insert into app_delivery (store_id, app_id, event_id, event_kind, event_created_at, status) values ($1, $2, gen_random_uuid(), 'order.paid', now(), 'failed') returning id as v",
      [store.id, appId],
    )) as string;
    const twice = await Promise.all([1, 2].map(() => rpc(browser, "apps/redeliver", { deliveryId })));
    expect(twice.map((r) => r.status).sort()).toEqual([200, 409]);
    const lost = await rpcJson<RpcError>(twice.find((r) => r.status === 409)!);
    expect(lost.message).toBe("This delivery is still being tried; wait for it to finish or fail.");
    expect(await eventCount(store.id, "app.redelivery_requested")).toBe(1);
    const deletes = await Promise.all([1, 2].map(() => rpc(browser, "apps/delete", { id: appId })));
    expect(deletes.map((r) => r.status).sort()).toEqual([200, 404]);
    expect(await eventCount(store.id, "app.deleted")).toBe(1);
  });
});

describe("round trips: AI approvals", () => {
  const proposalOf = (storeId: string) => valueOf(storeId, "select id as v from ai_approval where summary = 'Fixture proposal'") as Promise<string>;

  it("reject is one round trip and answers the proposal as rejected", async () => {
    const { store, browser } = await owner();
    const id = await proposalOf(store.id);
    const rejected = await change(browser, "aiApprovals/reject", { id, reason: "Not now" });
    expect(counted(rejected), rejected.body).toBe("200 1 0");
    expect(rejected.json()).toMatchObject({ id, status: "rejected", state: "rejected", error: "Not now", procedure: "content.update", diff: [] });
    const twice = await change(browser, "aiApprovals/reject", { id });
    expect(counted(twice)).toBe("409 1 0");
    expect(twice.json()).toMatchObject({ message: "This proposal is rejected; it can be decided only once, while pending.", data: { state: "rejected" } });
  });

  it("refusals change nothing: another store's proposal, an expired one, and another Admin's decision", async () => {
    const { store, browser } = await owner();
    const other = await owner();
    const id = await proposalOf(store.id);
    expect(counted(await change(other.browser, "aiApprovals/reject", { id }))).toBe("404 1 0");
    const admin = await sessionFor(db, (await addMember(db, store, "admin")).userId, store.id);
    const forbidden = await change(admin, "aiApprovals/reject", { id });
    expect(counted(forbidden)).toBe("403 1 0");
    expect(await valueOf(store.id, "select status as v from ai_approval where id = $1", [id])).toBe("pending");
    await valueOf(store.id, "update ai_approval set expires_at = now() - interval '1 minute' where id = $1", [id]);
    const expired = await change(browser, "aiApprovals/reject", { id });
    expect(counted(expired)).toBe("409 1 0");
    expect((expired.json() as RpcError & { data: { state: string } }).data.state).toBe("expired");
    expect(await valueOf(store.id, "select status as v from ai_approval where id = $1", [id])).toBe("pending");
  });

  it("two rejections at once: one decides, the other is told it is decided", async () => {
    const { store, browser } = await owner();
    const id = await proposalOf(store.id);
    const answers = await Promise.all([1, 2].map(() => rpc(browser, "aiApprovals/reject", { id })));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 409]);
    expect((await rpcJson<RpcError>(answers.find((r) => r.status === 409)!)).message).toMatch(/^This proposal is rejected;/);
  });
});
