import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { testDb } from "../../test/harness";
import { offerBankTransfer } from "../../test/orders";
import { newTrace, tripsOf } from "../../test/proxy";
import { makeShop, Shopper, type ShopStore } from "../../test/storefront";

/**
 * Round trips to the database on the answer's path of the shopper's doors (issue 19's goal table),
 * counted by the local proxy per traced request: a page or cart read the edge cache cannot answer is
 * one; checkout is at most three (read, place, the attempt's move to pending; the gateway is not one).
 */
const db = testDb();
const proxy = (env as unknown as { DB_WS_PROXY: string }).DB_WS_PROXY;

async function shop(): Promise<ShopStore> {
  const s = await makeShop(db);
  await withStore(db, s.id, (tx) => tx.$client.query("update location set state = 'IN-MH'; update inventory_level set on_hand = 50"));
  return s;
}

async function traced(buyer: Shopper, method: string, path: string, body?: unknown) {
  const trace = newTrace();
  const answer = await buyer.send(method, path, body, { "x-commerce-trace": trace });
  return { answer, trips: await tripsOf(proxy, trace) };
}

const order = { email: "trips@example.test", shippingAddress: { name: "Trip Buyer", line1: "1 Road", city: "Pune", state: "IN-MH", postalCode: "411001", country: "IN" }, paymentMethod: "gateway" };

describe("round trips: the storefront", () => {
  it("a page the edge cache has not seen is one round trip (the host and the store's facts held in KV)", async () => {
    const s = await shop();
    const buyer = new Shopper(s.hostname);
    await buyer.send("GET", "/"); // warms the host and the store's facts
    const handle = await withStore(db, s.id, (tx) => tx.$client.query<{ handle: string }>("select handle from product limit 1")).then((r) => r.rows[0]!.handle);
    for (const path of [`/products/${handle}?c=${crypto.randomUUID()}`, `/search?q=${crypto.randomUUID().slice(0, 6)}`, `/products?c=${crypto.randomUUID()}`, "/sitemap.xml"]) {
      const { answer, trips } = await traced(buyer, "GET", path);
      expect(`${path} ${answer.status} ${trips.turns}`).toMatch(/ 200 1$/);
    }
  });

  it("a host the HOSTS cache does not hold yet costs one more: the host and its store's facts together", async () => {
    const s = await shop();
    const buyer = new Shopper(s.hostname);
    const first = await traced(buyer, "GET", `/products?c=${crypto.randomUUID()}`);
    expect(`${first.answer.status} ${first.trips.turns}`).toBe("200 2");
  });

  it("the cart: read in one round trip, page and API", async () => {
    const s = await shop();
    const buyer = new Shopper(s.hostname);
    await buyer.add(s.variantId, 1);
    expect((await traced(buyer, "GET", "/api/cart")).trips.turns).toBe(1);
    expect((await traced(buyer, "GET", "/cart")).trips.turns).toBe(1);
  });

  it("checkout: three round trips with the gateway's payment; a replay is one", async () => {
    const s = await shop();
    const buyer = new Shopper(s.hostname);
    await buyer.add(s.variantId, 2);
    const placed = await traced(buyer, "POST", "/api/checkout", order);
    expect(placed.answer.status).toBe(201);
    expect(placed.answer.body).toMatchObject({ payment: { status: "pending" } });
    expect(placed.trips.turns).toBe(3);
    const replay = await traced(buyer, "POST", "/api/checkout", order);
    expect(replay.answer.status).toBe(200);
    expect(replay.trips.turns).toBe(1);
  });

  it("checkout by bank transfer: two round trips (no gateway, no move to pending)", async () => {
    const s = await shop();
    await withStore(db, s.id, offerBankTransfer);
    const buyer = new Shopper(s.hostname);
    await buyer.add(s.variantId, 1);
    const placed = await traced(buyer, "POST", "/api/checkout", { ...order, paymentMethod: "manual_transfer" });
    expect(placed.answer.status).toBe(201);
    expect(placed.trips.turns).toBe(2);
  });
});
