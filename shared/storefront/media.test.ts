import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { product, productMedia, productVariant } from "../db/schema";
import { readOn, withStore } from "../db/with-store";
import { makeStore, testDb } from "../../test/harness";
import { FIRST_IMAGE_JSON, firstImagesPlan, imageOfJson, productImagesByHandlePlan } from "./media";

const db = testDb();
const row = (n: number) => ({ hash: String(n).repeat(64).slice(0, 64), originalType: "image/jpeg" as const, originalBytes: 100, width: 1000, height: 800, widths: [160, 320, 640, 960, 1000] });

describe("a product's images as the storefront reads them", () => {
  it("reads the first image by position, the gallery by handle and each variant's image; a draft's gallery is empty", async () => {
    const store = await makeStore(db);
    await withStore(db, store.id, async (tx) => {
      const [p] = await tx.insert(product).values({ storeId: store.id, title: "Silk saree", handle: "silk-saree", status: "active" }).returning({ id: product.id });
      const [draft] = await tx.insert(product).values({ storeId: store.id, title: "Draft", handle: "draft" }).returning({ id: product.id });
      const [v] = await tx.insert(productVariant).values({ storeId: store.id, productId: p!.id, title: "Red", priceMinor: 500_000 }).returning({ id: productVariant.id });
      const [back] = await tx.insert(productMedia).values({ storeId: store.id, productId: p!.id, position: 1, alt: "Back", ...row(1) }).returning({ id: productMedia.id });
      await tx.insert(productMedia).values({ storeId: store.id, productId: p!.id, position: 0, alt: "Front", ...row(2) });
      await tx.insert(productMedia).values({ storeId: store.id, productId: draft!.id, alt: "Draft", ...row(3) });
      await tx.update(productVariant).set({ mediaId: back!.id }).where(eq(productVariant.id, v!.id));

      const first = await readOn(tx, (q) => firstImagesPlan(q, [p!.id, draft!.id]));
      expect(first.get(p!.id)).toMatchObject({ alt: "Front", width: 1000, height: 800, widths: [160, 320, 640, 960, 1000] });
      expect(first.get(draft!.id)?.alt).toBe("Draft");

      const gallery = await readOn(tx, (q) => productImagesByHandlePlan(q, "silk-saree"));
      expect(gallery.images.map((i) => i.alt)).toEqual(["Front", "Back"]);
      expect(gallery.variantImage).toEqual({ [v!.id]: back!.id });
      expect((await readOn(tx, (q) => productImagesByHandlePlan(q, "draft"))).images).toEqual([]);

      const { rows } = await tx.$client.query(`select ${FIRST_IMAGE_JSON("p")} as image from product p where p.id = $1`, [p!.id]);
      expect(imageOfJson(rows[0].image)).toMatchObject({ alt: "Front", hash: row(2).hash, widths: [160, 320, 640, 960, 1000] });
    });
  });
});
