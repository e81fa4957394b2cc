import { describe, expect, it } from "vitest";
import { testDb } from "../../test/harness";
import { orderShop, placeTestOrder } from "../../test/orders";
import { addMember, callerFor, failureMessage, failureText, outboxPayloads } from "../../test/procedures";

/** products.removeVariant through the real executor against real Postgres. */
const db = testDb();

interface ProductOut {
  id: string;
  variants: { id: string; sku: string | null; title: string; inventory: unknown[] }[];
}

/** The order fixture's shop (one variant, 5 in stock) with a second variant sold in an order. */
async function shopWithTwoVariants() {
  const { s, sql } = await orderShop(db);
  const call = callerFor(db, s.ownerUserId, s.id);
  const p = (await call("products.update", { id: s.productId, variants: [{ title: "Large", sku: "GONE-L", priceMinor: 1500 }] })) as ProductOut;
  const large = p.variants.find((v) => v.sku === "GONE-L")!;
  const [loc] = await sql<{ id: string }>("select id from location order by created_at limit 1");
  await call("inventory.adjust", { variantId: large.id, locationId: loc!.id, delta: 3, reason: "received" });
  const placed = await placeTestOrder(db, s, { lines: [[large.id, 1]] });
  return { s, sql, call, large, orderId: placed.order.id };
}

describe("products.removeVariant", () => {
  it("deletes the variant with its stock records; the product keeps its other variant and the order keeps its line", async () => {
    const { s, sql, call, large, orderId } = await shopWithTwoVariants();
    const after = (await call("products.removeVariant", { productId: s.productId, variantId: large.id })) as ProductOut;
    expect(after.variants.map((v) => v.id)).toEqual([s.variantId]);
    expect(await sql("select count(*)::int as n from product_variant where id = $1", [large.id])).toEqual([{ n: 0 }]);
    expect(await sql("select count(*)::int as n from inventory_level where variant_id = $1", [large.id])).toEqual([{ n: 0 }]);
    expect(await sql("select variant_id, sku, variant_title from order_line where order_id = $1", [orderId])).toEqual([{ variant_id: null, sku: "GONE-L", variant_title: "Large" }]);
    expect((await outboxPayloads(db, s.id, "product.updated")).at(-1)).toMatchObject({ productId: s.productId, removedVariant: { id: large.id, title: "Large", sku: "GONE-L" } });
    // The order is still read whole.
    expect(await call("orders.get", { id: orderId })).toMatchObject({ lines: [{ sku: "GONE-L" }] });
  });

  it("refuses the product's last variant, a variant of another product, and a role without records.delete", async () => {
    const { s, call, large } = await shopWithTwoVariants();
    const other = (await call("products.create", { title: "Other", variants: [{ priceMinor: 100 }, { title: "B", priceMinor: 200 }] })) as ProductOut;
    expect(await failureText(call("products.removeVariant", { productId: s.productId, variantId: other.variants[0]!.id }))).toBe("NOT_FOUND");
    expect(await failureText(call("products.removeVariant", { productId: other.id, variantId: large.id }))).toBe("NOT_FOUND");
    const staff = callerFor(db, (await addMember(db, s, "staff")).userId, s.id);
    expect(await failureText(staff("products.removeVariant", { productId: s.productId, variantId: large.id }))).toBe("FORBIDDEN");
    const admin = callerFor(db, (await addMember(db, s, "admin")).userId, s.id);
    await admin("products.removeVariant", { productId: s.productId, variantId: large.id });
    expect(await failureMessage(call("products.removeVariant", { productId: s.productId, variantId: s.variantId }))).toContain(
      "A product keeps at least one variant: delete the product instead",
    );
    expect(await failureText(call("products.removeVariant", { productId: s.productId, variantId: s.variantId }))).toBe("CONFLICT variantId");
    expect(await failureText(call("products.removeVariant", { productId: s.productId }))).toBe("BAD_REQUEST variantId");
  });

  it("two removals racing for a product's last two variants: one wins, the product keeps one", async () => {
    const { s, sql, call, large } = await shopWithTwoVariants();
    const results = await Promise.all([
      failureText(call("products.removeVariant", { productId: s.productId, variantId: large.id })),
      failureText(call("products.removeVariant", { productId: s.productId, variantId: s.variantId })),
    ]);
    expect(results.filter((r) => r === "ok")).toHaveLength(1);
    expect(await sql("select count(*)::int as n from product_variant where product_id = $1", [s.productId])).toEqual([{ n: 1 }]);
  });
});
