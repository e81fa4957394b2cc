import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { productVariant } from "#shared/db/schema";
import { withStore } from "#shared/db/with-store";
import type { StoreFacts } from "#shared/storefront/hosts";
import { rpc, sessionFor } from "../../test/admin";
import { makeStore, testDb } from "../../test/harness";

/**
 * The admin's side of the storefront's edge cache (docs/decisions/0007): a merchant's change to what the
 * storefront shows overwrites the store's facts in the HOSTS namespace right after it commits, with the
 * version its transaction bumped; a change the storefront does not show leaves them alone.
 */
const db = testDb();
const kv = (env as unknown as { HOSTS: KVNamespace }).HOSTS;
const factsOf = async (storeId: string) => ((await kv.get(`store:${storeId}`, "json")) as { value: StoreFacts; at: number } | null)?.value;

describe("a merchant's change reaches the storefront's facts at commit", () => {
  it("a price change through /api/rpc writes the bumped version; an MCP switch writes nothing", async () => {
    const store = await makeStore(db);
    const owner = await sessionFor(db, store.ownerUserId, store.id);
    const [variant] = await withStore(db, store.id, (tx) => tx.select().from(productVariant).where(eq(productVariant.storeId, tx.storeId)));
    await kv.delete(`store:${store.id}`);

    const res = await rpc(owner, "products/update", { id: variant!.productId, variants: [{ id: variant!.id, priceMinor: 123_400 }] });
    expect(res.status).toBe(200);
    const facts = await factsOf(store.id);
    const version = await withStore(db, store.id, async (tx) => Number((await tx.$client.query("select version from storefront_version")).rows[0].version));
    expect(facts).toMatchObject({ id: store.id, name: store.name, currency: "INR", passwordCookieHash: null, version });

    await kv.delete(`store:${store.id}`);
    expect((await rpc(owner, "store/update", { mcpAllowChanges: true })).status).toBe(200);
    expect(await factsOf(store.id)).toBeUndefined();
  });

  it("the store's name and password reach the facts too; the password only as a cookie digest", async () => {
    const store = await makeStore(db);
    const owner = await sessionFor(db, store.ownerUserId, store.id);
    expect((await rpc(owner, "store/update", { name: "Renamed Store", storefrontPassword: "a long password" })).status).toBe(200);
    const facts = (await factsOf(store.id))!;
    expect(facts.name).toBe("Renamed Store");
    expect(facts.passwordCookieHash).toMatch(/^[0-9a-f]{64}$/);
    const hash = await withStore(db, store.id, async (tx) => String((await tx.$client.query("select storefront_password_hash as h from store")).rows[0].h));
    expect(hash.length).toBeGreaterThan(20);
    expect(JSON.stringify(facts)).not.toContain(hash);
    expect((await rpc(owner, "store/update", { storefrontPassword: null })).status).toBe(200);
    expect((await factsOf(store.id))!.passwordCookieHash).toBeNull();
  });

  it("a failed change writes nothing", async () => {
    const store = await makeStore(db);
    const owner = await sessionFor(db, store.ownerUserId, store.id);
    await kv.delete(`store:${store.id}`);
    const res = await rpc(owner, "products/update", { id: crypto.randomUUID(), title: "Nobody" });
    expect(res.status).toBe(404);
    expect(await factsOf(store.id)).toBeUndefined();
  });
});
