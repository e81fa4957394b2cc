import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { cart, cartLine, inventoryLevel, product, productVariant, storeDomain } from "#shared/db/schema";
import { withStore } from "#shared/db/with-store";
import { testDb } from "../../test/harness";
import { cartOf, makeShop, Shopper } from "../../test/storefront";

const db = testDb();

/** Every cart and line of a store, as plain rows (the fixture cart of makeStore included). */
const cartRows = (storeId: string) =>
  withStore(db, storeId, async (tx) => ({
    carts: await tx.select().from(cart).orderBy(cart.id),
    lines: await tx.select().from(cartLine).orderBy(cartLine.id),
  }));

describe("storefront cart: lines", () => {
  it("answers an empty cart without a cart or a cookie", async () => {
    const s = await makeShop(db);
    const shopper = new Shopper(s.hostname);
    const res = await shopper.get();
    expect(res.status).toBe(200);
    expect(res.headers.get("set-cookie")).toBeNull();
    expect(cartOf(res)).toEqual({ id: null, currency: "INR", lines: [], subtotal: 0, discount: 0, discountCode: null, total: 0 });
  });

  it("adds a line (setting the cookie), adds again to the same line, changes and removes it", async () => {
    const s = await makeShop(db);
    const before = await cartRows(s.id);
    const shopper = new Shopper(s.hostname);
    const added = await shopper.add(s.variantId, 2);
    expect(added.status).toBe(200);
    const cookie = added.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^wc_cart=[A-Za-z0-9_-]{43}; Max-Age=2592000; Path=\/; HttpOnly; Secure; SameSite=Lax$/);
    const first = cartOf(added);
    expect(first).toMatchObject({ currency: "INR", subtotal: 2000, discount: 0, discountCode: null, total: 2000 });
    expect(first.lines).toEqual([
      {
        id: expect.any(String),
        variantId: s.variantId,
        productTitle: "Fixture",
        variantTitle: "Default",
        sku: expect.stringMatching(/^FIX-/),
        quantity: 2,
        unitPrice: 1000,
        lineTotal: 2000,
        available: 5,
      },
    ]);

    const again = cartOf(await shopper.add(s.variantId, 1));
    expect(again.id).toBe(first.id);
    expect(again.lines).toHaveLength(1);
    expect(again.lines[0]).toMatchObject({ id: first.lines[0]!.id, quantity: 3, lineTotal: 3000 });
    expect(cartOf(await shopper.get())).toEqual(again);

    const lineId = first.lines[0]!.id;
    expect(cartOf(await shopper.setQuantity(lineId, 5))).toMatchObject({ subtotal: 5000, lines: [{ quantity: 5 }] });
    expect(cartOf(await shopper.setQuantity(lineId, 1))).toMatchObject({ subtotal: 1000, lines: [{ quantity: 1 }] });
    const removed = await shopper.remove(lineId);
    expect(cartOf(removed)).toMatchObject({ id: first.id, lines: [], subtotal: 0, total: 0 });

    // The database holds one cart more than the fixture, keyed by the token's hash, never the token.
    const after = await cartRows(s.id);
    expect(after.carts).toHaveLength(before.carts.length + 1);
    const mine = after.carts.find((k) => k.id === first.id)!;
    expect(mine.tokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(mine.tokenHash).not.toBe(shopper.cookie);
  });

  it("does not mark the cookie Secure on *.localhost", async () => {
    const s = await makeShop(db);
    const local = `${s.slug}.localhost`;
    await withStore(db, s.id, (tx) => tx.insert(storeDomain).values({ storeId: s.id, hostname: local, status: "verified", verifiedAt: new Date() }));
    const res = await new Shopper(local).add(s.variantId, 1);
    expect(res.status).toBe(200);
    expect(res.headers.get("set-cookie")).toMatch(/^wc_cart=[A-Za-z0-9_-]{43}; Max-Age=2592000; Path=\/; HttpOnly; SameSite=Lax$/);
  });

  it("PATCH to 0 removes the line; a line of another cart is 404 and stays", async () => {
    const s = await makeShop(db);
    const a = new Shopper(s.hostname);
    const b = new Shopper(s.hostname);
    const aLine = cartOf(await a.add(s.variantId, 1)).lines[0]!.id;
    const bLine = cartOf(await b.add(s.variantId, 2)).lines[0]!.id;

    for (const res of [await a.setQuantity(bLine, 1), await a.remove(bLine)]) {
      expect(res.status).toBe(404);
      expect(res.body.json).toMatchObject({ code: "NOT_FOUND", data: { reason: "unknown_line" } });
    }
    expect(cartOf(await b.get()).lines).toMatchObject([{ id: bLine, quantity: 2 }]);
    expect(cartOf(await a.setQuantity(aLine, 0)).lines).toEqual([]);
    // Without any cart, a line id is just as unknown.
    expect((await new Shopper(s.hostname).setQuantity(aLine, 1)).status).toBe(404);
  });

  it("refuses quantities beyond what is available with 409 naming the line", async () => {
    const s = await makeShop(db);
    const shopper = new Shopper(s.hostname);
    const over = await shopper.add(s.variantId, 6);
    expect(over.status).toBe(409);
    expect(over.body.json).toMatchObject({
      code: "CONFLICT",
      data: { reason: "insufficient_stock", issues: [{ path: "variantId", available: 5 }] },
    });
    // The refused first add made no cart and set no cookie.
    expect(over.headers.get("set-cookie")).toBeNull();
    expect(cartOf(await shopper.get()).id).toBeNull();

    const line = cartOf(await shopper.add(s.variantId, 4)).lines[0]!;
    const sum = await shopper.add(s.variantId, 2);
    expect(sum.status).toBe(409);
    expect(sum.body.json?.data).toMatchObject({ issues: [{ path: "variantId", available: 5 }] });
    const raise = await shopper.setQuantity(line.id, 6);
    expect(raise.status).toBe(409);
    expect(raise.body.json?.data).toMatchObject({ issues: [{ path: `lines.${line.id}.quantity`, available: 5 }] });
    expect(cartOf(await shopper.get()).lines).toMatchObject([{ quantity: 4 }]);

    // Stock reserved elsewhere or held at a location that does not sell online does not count.
    await withStore(db, s.id, (tx) => tx.update(inventoryLevel).set({ reserved: 3 }));
    const now = cartOf(await shopper.get());
    expect(now.lines[0]!.available).toBe(2);
    // Lowering is always allowed, even above what is now available.
    expect(cartOf(await shopper.setQuantity(line.id, 3)).lines).toMatchObject([{ quantity: 3, available: 2 }]);
  });

  it("lets a pre-order variant go beyond stock", async () => {
    const s = await makeShop(db);
    await withStore(db, s.id, (tx) => tx.update(productVariant).set({ preorder: true }));
    const shopper = new Shopper(s.hostname);
    const res = await shopper.add(s.variantId, 50);
    expect(res.status).toBe(200);
    expect(cartOf(res).lines).toMatchObject([{ quantity: 50, available: 5, lineTotal: 50_000 }]);
  });

  it("refuses an archived or draft product's variant with 404 not_for_sale", async () => {
    const s = await makeShop(db);
    const shopper = new Shopper(s.hostname);
    const line = cartOf(await shopper.add(s.variantId, 1)).lines[0]!;
    for (const status of ["archived", "draft"] as const) {
      await withStore(db, s.id, (tx) => tx.update(product).set({ status }).where(eq(product.id, s.productId)));
      const res = await shopper.add(s.variantId, 1);
      expect(res.status).toBe(404);
      expect(res.body.json).toMatchObject({ code: "NOT_FOUND", data: { reason: "not_for_sale" } });
      expect((await shopper.setQuantity(line.id, 2)).body.json?.data).toMatchObject({ reason: "not_for_sale" });
      // The line already in the cart shows nothing available, and can still be removed.
      expect(cartOf(await shopper.get()).lines).toMatchObject([{ quantity: 1, available: 0 }]);
    }
    expect(cartOf(await shopper.remove(line.id)).lines).toEqual([]);
  });

  it("an unknown variant id is 404 unknown_variant", async () => {
    const s = await makeShop(db);
    const res = await new Shopper(s.hostname).add(crypto.randomUUID(), 1);
    expect(res.status).toBe(404);
    expect(res.body.json?.data).toMatchObject({ reason: "unknown_variant" });
  });

  it("sums a burst of 20 concurrent adds to one cart exactly", async () => {
    const s = await makeShop(db);
    await withStore(db, s.id, (tx) => tx.update(inventoryLevel).set({ onHand: 100 }));
    const shopper = new Shopper(s.hostname);
    const first = cartOf(await shopper.add(s.variantId, 1));
    const results = await Promise.all(Array.from({ length: 20 }, () => shopper.add(s.variantId, 1)));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    const after = cartOf(await shopper.get());
    expect(after.id).toBe(first.id);
    expect(after.lines).toMatchObject([{ quantity: 21 }]);
    const lines = await withStore(db, s.id, (tx) => tx.select().from(cartLine).where(and(eq(cartLine.cartId, first.id!))));
    expect(lines).toHaveLength(1);
  });

  it("never lets concurrent adds to one cart pass the stock between them", async () => {
    const s = await makeShop(db);
    const shopper = new Shopper(s.hostname);
    await shopper.add(s.variantId, 1);
    const results = await Promise.all(Array.from({ length: 10 }, () => shopper.add(s.variantId, 1)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([...Array(4).fill(200), ...Array(6).fill(409)]);
    expect(cartOf(await shopper.get()).lines).toMatchObject([{ quantity: 5 }]);
  });
});

describe("storefront cart: stores never mix", () => {
  it("refuses another store's variant id with 404 and leaves that store's tables unchanged", async () => {
    const a = await makeShop(db);
    const b = await makeShop(db);
    const bBefore = await cartRows(b.id);
    const shopper = new Shopper(a.hostname);
    const res = await shopper.add(b.variantId, 1);
    expect(res.status).toBe(404);
    expect(res.body.json?.data).toMatchObject({ reason: "unknown_variant" });
    // Also when the shopper already has a cart here.
    await shopper.add(a.variantId, 1);
    expect((await shopper.add(b.variantId, 1)).status).toBe(404);
    expect(cartOf(await shopper.get()).lines.map((l) => l.variantId)).toEqual([a.variantId]);
    expect(await cartRows(b.id)).toEqual(bBefore);
  });

  it("treats another store's cart cookie as no cart, and leaves that cart alone", async () => {
    const a = await makeShop(db);
    const b = await makeShop(db);
    const atB = new Shopper(b.hostname);
    const bCart = cartOf(await atB.add(b.variantId, 2));
    const bBefore = await cartRows(b.id);

    const atA = new Shopper(a.hostname);
    atA.cookie = atB.cookie;
    expect(cartOf(await atA.get())).toMatchObject({ id: null, lines: [] });
    expect((await atA.setQuantity(bCart.lines[0]!.id, 1)).status).toBe(404);
    expect((await atA.remove(bCart.lines[0]!.id)).status).toBe(404);
    const added = await atA.add(a.variantId, 1);
    expect(cartOf(added).id).not.toBe(bCart.id);
    expect(atA.cookie).not.toBe(atB.cookie);

    expect(await cartRows(b.id)).toEqual(bBefore);
    expect(cartOf(await atB.get())).toEqual(bCart);
  });
});
