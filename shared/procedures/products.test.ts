import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { isAppError } from "#shared/core/errors";
import { testDb } from "../../test/harness";
import { storeWithCaller } from "../../test/procedures";

const db = testDb();

interface ProductOut {
  id: string;
  handle: string;
  status: string;
  variants: { id: string; sku: string | null; priceMinor: number; taxClass: string; preorder: boolean }[];
}
interface Page {
  items: { id: string; title: string }[];
  page: number;
  pageSize: number;
  total: number;
}

const codeOf = (p: Promise<unknown>) => p.then(() => "ok", (e: unknown) => (isAppError(e) ? e.code : String(e)));

describe("products procedures", () => {
  it("creates a product with variants, derives a free handle, and emits product.created", async () => {
    const { store, call } = await storeWithCaller(db);
    const a = (await call("products.create", {
      title: "Cotton Kurta",
      variants: [{ sku: "KURTA-S", priceMinor: 129900, taxClass: "gst_5" }, { title: "M", priceMinor: 129900, preorder: true }],
    })) as ProductOut;
    expect(a.handle).toBe("cotton-kurta");
    expect(a.status).toBe("draft");
    expect(a.variants.map((v) => [v.sku, v.priceMinor, v.taxClass, v.preorder])).toEqual([
      ["KURTA-S", 129900, "gst_5", false],
      [null, 129900, "gst_18", true],
    ]);
    const b = (await call("products.create", { title: "Cotton Kurta", variants: [{ priceMinor: 1 }] })) as ProductOut;
    expect(b.handle).toBe("cotton-kurta-2");
    const listed = (await call("products.list", { query: "kurta" })) as Page;
    expect(listed.total).toBe(2);
    const events = await withStore(db, store.id, (tx) =>
      tx.$client.query<{ payload: { productId: string } }>("select payload from outbox_event where kind = 'product.created' order by created_at"),
    );
    expect(events.rows.map((r) => r.payload.productId)).toEqual([a.id, b.id]);
  });

  it("lists with paging, search by title and SKU, and status filter", async () => {
    const { call } = await storeWithCaller(db);
    for (let i = 1; i <= 5; i++) {
      await call("products.create", { title: `Saree ${i}`, status: i % 2 ? "active" : "draft", variants: [{ sku: `SAR-${i}`, priceMinor: i * 100 }] });
    }
    const first = (await call("products.list", { page: 1, pageSize: 2, query: "saree" })) as Page;
    expect(first).toMatchObject({ page: 1, pageSize: 2, total: 5 });
    expect(first.items).toHaveLength(2);
    const last = (await call("products.list", { page: 3, pageSize: 2, query: "saree" })) as Page;
    expect(last.items).toHaveLength(1);
    const beyond = (await call("products.list", { page: 9, pageSize: 2, query: "saree" })) as Page;
    expect(beyond).toMatchObject({ items: [], total: 5 });
    expect(((await call("products.list", { query: "SAR-3" })) as Page).items.map((p) => p.title)).toEqual(["Saree 3"]);
    expect(((await call("products.list", { status: "draft", query: "saree" })) as Page).total).toBe(2);
    expect(await codeOf(call("products.list", { pageSize: 101 }))).toBe("BAD_REQUEST");
  });

  it("updates fields and variants, archives, and refuses a duplicate SKU with CONFLICT naming sku", async () => {
    const { call } = await storeWithCaller(db);
    const p = (await call("products.create", { title: "Dupatta", variants: [{ sku: "DUP-1", priceMinor: 50000 }] })) as ProductOut;
    const updated = (await call("products.update", {
      id: p.id,
      status: "active",
      variants: [{ id: p.variants[0]!.id, priceMinor: 45000 }, { sku: "DUP-2", priceMinor: 47000 }],
    })) as ProductOut;
    expect(updated.status).toBe("active");
    expect(updated.variants.map((v) => [v.sku, v.priceMinor])).toEqual([
      ["DUP-1", 45000],
      ["DUP-2", 47000],
    ]);
    const dup = await call("products.update", { id: p.id, variants: [{ sku: "DUP-1", priceMinor: 1 }] }).catch((e: unknown) => e);
    expect(isAppError(dup) && dup.code === "CONFLICT" && JSON.stringify(dup.data)).toContain('"path":"sku"');
    const archived = await call("products.archive", { id: p.id });
    expect(archived).toMatchObject({ status: "archived" });
  });
});
