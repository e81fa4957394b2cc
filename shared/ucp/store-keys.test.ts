import { describe, expect, it } from "vitest";
import { sendStoreUnit } from "#shared/db/unit";
import { withStore } from "#shared/db/with-store";
import { makeStore, testDb } from "../../test/harness";
import { signMessage, verifyMessage, type HttpMessage } from "./signatures";
import { KEY_GRACE_DAYS, newStoreKey, openStoreKey, publishedKeysPlan, rotateKeyPlan, signingKeyPlan, ucpSigningFromEnv } from "./store-keys";

/** A store's UCP signing keys in Postgres (migration 0052): rotation with a published grace, RLS, one signing key at a time. */
const db = testDb();
const config = { rootSecret: "local-ucp-test-root-secret-000000000" };

const published = (storeId: string) => sendStoreUnit(db, storeId, publishedKeysPlan);
const rotate = async (storeId: string) => {
  const key = await newStoreKey(config, storeId);
  return sendStoreUnit(db, storeId, (q) => rotateKeyPlan(q, key), { readOnly: false });
};

async function signedBy(storeId: string): Promise<HttpMessage> {
  const sealed = (await sendStoreUnit(db, storeId, signingKeyPlan))!;
  const key = await openStoreKey(config, storeId, sealed);
  const m: HttpMessage = { url: "https://agent.example/webhooks/orders", method: "POST", headers: new Headers({ "content-type": "application/json" }), body: new TextEncoder().encode('{"id":"o-1"}') };
  const added = await signMessage(m, key);
  const headers = new Headers(m.headers);
  for (const [k, v] of Object.entries(added)) headers.set(k, v);
  return { ...m, headers };
}

const verifiedWith = async (m: HttpMessage, storeId: string) => {
  const keys = await published(storeId);
  return verifyMessage(m, async (kid) => keys.find((k) => k.kid === kid) as Record<string, unknown> | undefined);
};

describe("a store's UCP signing keys", () => {
  it("none until made; rotating keeps the replaced key published for the grace, signing with the new one", async () => {
    const store = await makeStore(db);
    expect(await sendStoreUnit(db, store.id, signingKeyPlan)).toBeUndefined();
    expect(await published(store.id)).toEqual([]);
    const first = await rotate(store.id);
    expect((await published(store.id)).map((k) => k.kid)).toEqual([first.kid]);
    const byFirst = await signedBy(store.id);
    expect(await verifiedWith(byFirst, store.id)).toMatchObject({ ok: true, keyid: first.kid });

    const second = await rotate(store.id);
    expect((await published(store.id)).map((k) => k.kid)).toEqual([second.kid, first.kid]);
    expect((await sendStoreUnit(db, store.id, signingKeyPlan))?.kid).toBe(second.kid);
    // What the first key signed still verifies during the grace.
    expect(await verifiedWith(byFirst, store.id)).toMatchObject({ ok: true, keyid: first.kid });
    const retires = await withStore(db, store.id, (tx) =>
      tx.$client.query<{ days: number }>("select extract(epoch from retires_at - now()) / 86400 as days from ucp_signing_key where kid = $1", [first.kid]),
    );
    expect(Number(retires.rows[0]!.days)).toBeCloseTo(KEY_GRACE_DAYS, 1);

    // Once retired, the old key is gone from the profile and its signatures no longer verify.
    await withStore(db, store.id, (tx) => tx.$client.query("update ucp_signing_key set retires_at = now() - interval '1 second' where kid = $1", [first.kid]));
    expect((await published(store.id)).map((k) => k.kid)).toEqual([second.kid]);
    expect(await verifiedWith(byFirst, store.id)).toMatchObject({ ok: false, code: "key_not_found" });
    expect(await verifiedWith(await signedBy(store.id), store.id)).toMatchObject({ ok: true, keyid: second.kid });
  });

  it("a store never sees or uses another store's keys; a key sealed for one store does not open for another", async () => {
    const a = await makeStore(db);
    const b = await makeStore(db);
    const key = await rotate(a.id);
    expect(await published(b.id)).toEqual([]);
    const sealed = (await sendStoreUnit(db, a.id, signingKeyPlan))!;
    await expect(openStoreKey(config, b.id, sealed)).rejects.toThrow();
    expect(await verifiedWith(await signedBy(a.id), b.id)).toMatchObject({ ok: false, code: "key_not_found" });
    expect(key.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it("two rotations at once leave exactly one signing key", async () => {
    const store = await makeStore(db);
    await rotate(store.id);
    const results = await Promise.allSettled([rotate(store.id), rotate(store.id), rotate(store.id)]);
    expect(results.filter((r) => r.status === "fulfilled").length).toBeGreaterThanOrEqual(1);
    const current = await withStore(db, store.id, (tx) => tx.$client.query("select kid from ucp_signing_key where retires_at is null"));
    expect(current.rows).toHaveLength(1);
  });

  it("the root secret is required, 32 characters or more, and the development value is refused in production", () => {
    expect(() => ucpSigningFromEnv({ APP_ENV: "production" })).toThrow(/UCP_SIGNING_ROOT_SECRET: is required/);
    expect(() => ucpSigningFromEnv({ UCP_SIGNING_ROOT_SECRET: "short" })).toThrow(/at least 32/);
    expect(() => ucpSigningFromEnv({ APP_ENV: "production", UCP_SIGNING_ROOT_SECRET: config.rootSecret })).toThrow(/development value/);
    expect(ucpSigningFromEnv({ APP_ENV: "test", UCP_SIGNING_ROOT_SECRET: config.rootSecret })).toEqual(config);
  });
});
