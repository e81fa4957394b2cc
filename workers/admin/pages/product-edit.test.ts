import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { page, postForm, sessionFor } from "../../../test/admin";
import { call } from "../../../test/call";
import { makeStore, testDb, type TestStore } from "../../../test/harness";
import { addMember } from "../../../test/procedures";
import storefront from "../../storefront/index";
import { minorUnitsOf } from "./money";

/** /products/new and /products/<id> through the real admin routes against real Postgres (issue 13 item 1). */
const db = testDb();
const sql = <R,>(s: TestStore, text: string, values: unknown[] = []) => withStore(db, s.id, (tx) => tx.$client.query(text, values)).then((r) => r.rows as R[]);

const twoVariants = {
  title: "Block Print Kurta",
  description: "Hand block printed.",
  status: "active",
  vendor: "Jaipur Looms",
  rows: "3",
  "v0.title": "M",
  "v0.sku": "BPK-M",
  "v0.price": "1,250.50",
  "v0.taxClass": "gst_5",
  "v1.title": "L",
  "v1.sku": "BPK-L",
  "v1.price": "1299",
  "v1.compareAt": "1499.9",
  "v1.taxClass": "gst_5",
  // Row 3 left blank: skipped.
};

describe("money typed in rupees", () => {
  it("becomes exact minor units, or a message", () => {
    expect(minorUnitsOf("1250.50", "INR")).toEqual({ minor: 125050 });
    expect(minorUnitsOf("0.1", "INR")).toEqual({ minor: 10 });
    expect(minorUnitsOf("₹ 1,00,000", "INR")).toEqual({ minor: 10_000_000 });
    expect(minorUnitsOf("  ", "INR")).toEqual({ minor: null });
    expect(minorUnitsOf("12.345", "INR")).toEqual({ error: "Use at most 2 decimal places." });
    expect(minorUnitsOf("-5", "INR")).toHaveProperty("error");
    expect(minorUnitsOf("1e3", "INR")).toHaveProperty("error");
  });
});

describe("Product pages", () => {
  it("create with two variants, then change a price and see it on the storefront", async () => {
    const s = await makeStore(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const form = await (await page(owner, "/products/new")).text();
    expect(form).toContain('<label for="v0-price">Price (₹)</label>');
    const created = await postForm(owner, "/products/new", { csrf: owner.csrf, action: "save", ...twoVariants });
    expect(created.status).toBe(303);
    const location = created.headers.get("location")!;
    expect(location).toMatch(/^\/products\/[0-9a-f-]{36}\?done=created$/);
    expect(await sql(s, "select v.title, v.sku, v.price_minor::int as price, v.compare_at_minor::int as compare, v.tax_class from product_variant v join product p on p.id = v.product_id where p.handle = 'block-print-kurta' order by v.position")).toEqual([
      { title: "M", sku: "BPK-M", price: 125050, compare: null, tax_class: "gst_5" },
      { title: "L", sku: "BPK-L", price: 129900, compare: 149990, tax_class: "gst_5" },
    ]);
    const edit = await (await page(owner, location)).text();
    expect(edit).toContain("Product created.");
    expect(edit).toContain('id="v0-price" name="v0.price" type="text" value="1250.50"');
    const id = location.split("/")[2]!.split("?")[0]!;
    const variantIds = (await sql<{ id: string }>(s, "select id from product_variant where product_id = $1 order by position", [id])).map((r) => r.id);

    const saved = await postForm(owner, `/products/${id}`, {
      csrf: owner.csrf,
      action: "save",
      ...twoVariants,
      "v0.id": variantIds[0]!,
      "v1.id": variantIds[1]!,
      "v0.price": "999",
    });
    expect(saved.status).toBe(303);
    const shop = await call(storefront, "http://storefront.test/products/block-print-kurta", { headers: { host: s.hostname } });
    const html = await shop.text();
    expect(html).toContain("₹999.00");
    expect(html).not.toContain("₹1,250.50");
  });

  it("a mistake keeps every typed value and puts each message by its field; nothing is written", async () => {
    const s = await makeStore(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const bad = await postForm(owner, "/products/new", { csrf: owner.csrf, action: "save", ...twoVariants, "v1.price": "12.345", "v0.sku": "bad sku!" });
    expect(bad.status).toBe(400);
    let html = await bad.text();
    expect(html).toContain('id="v1-price" name="v1.price" type="text" value="12.345" inputmode="decimal" aria-invalid="true"');
    expect(html).toContain("Use at most 2 decimal places.");
    expect(html).toContain('value="Block Print Kurta"');
    // The procedure's own refusal (the SKU), by its row's field.
    const skuBad = await postForm(owner, "/products/new", { csrf: owner.csrf, action: "save", ...twoVariants, "v0.sku": "bad sku!" });
    expect(skuBad.status).toBe(400);
    html = await skuBad.text();
    expect(html).toMatch(/id="v0-sku" name="v0.sku" type="text" value="bad sku!" maxlength="64" aria-invalid="true"/);
    expect(html).toContain("Use letters, digits and . _ / - (at most 64)");
    expect(await sql(s, "select count(*)::int as n from product where title = 'Block Print Kurta'")).toEqual([{ n: 0 }]);
    // "Add another variant" posts back with one more row and what was typed.
    const more = await postForm(owner, "/products/new", { csrf: owner.csrf, action: "more", ...twoVariants });
    html = await more.text();
    expect(more.status).toBe(200);
    expect(html).toContain('name="v3.price"');
    expect(html).toContain('value="BPK-L"');
  });

  it("archive; delete only after a confirmation naming what goes, and only for roles with records.delete", async () => {
    const s = await makeStore(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const [fixture] = await sql<{ id: string }>(s, "select id from product where handle = 'fixture'");
    const id = fixture!.id;
    const staff = await sessionFor(db, (await addMember(db, s, "staff")).userId, s.id);
    const staffView = await (await page(staff, `/products/${id}`)).text();
    expect(staffView).toContain("Archive");
    expect(staffView).not.toContain("Delete…");
    expect((await page(staff, `/products/${id}?confirm=delete`)).status).toBe(403);
    const refused = await postForm(staff, `/products/${id}`, { csrf: staff.csrf, action: "delete" });
    expect(refused.status).toBe(403);
    expect(refused.headers.get("location")).toBeNull();

    const ownerView = await (await page(owner, `/products/${id}`)).text();
    expect(ownerView).toMatch(/<tr data-stock="FIX-[^"]+@Fixture warehouse">/);
    const confirm = await (await page(owner, `/products/${id}?confirm=delete`)).text();
    expect(confirm).toContain("This deletes the product, its 1 variant and 1 stock record.");
    expect((await postForm(owner, `/products/${id}`, { csrf: owner.csrf, action: "archive" })).headers.get("location")).toBe(`/products/${id}?done=archived`);
    expect(await sql(s, "select status from product where id = $1", [id])).toEqual([{ status: "archived" }]);
    expect((await postForm(owner, `/products/${id}`, { csrf: "wrong", action: "delete" })).status).toBe(403);
    expect((await postForm(owner, `/products/${id}`, { csrf: owner.csrf, action: "delete" }, { origin: "https://evil.example" })).status).toBe(403);
    expect(await sql(s, "select count(*)::int as n from product where id = $1", [id])).toEqual([{ n: 1 }]);
    const deleted = await postForm(owner, `/products/${id}`, { csrf: owner.csrf, action: "delete" });
    expect(deleted.headers.get("location")).toBe("/products?done=deleted");
    expect(await sql(s, "select count(*)::int as n from product where id = $1", [id])).toEqual([{ n: 0 }]);
    expect(await (await page(owner, "/products?done=deleted")).text()).toContain("Product deleted.");
  });

  it("a variant is removed after a confirmation naming it, never the last, and only for roles with records.delete", async () => {
    const s = await makeStore(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const created = await postForm(owner, "/products/new", { csrf: owner.csrf, action: "save", ...twoVariants });
    const id = created.headers.get("location")!.split("/")[2]!.split("?")[0]!;
    const [m, l] = (await sql<{ id: string }>(s, "select id from product_variant where product_id = $1 order by position", [id])).map((r) => r.id);
    const ownerView = await (await page(owner, `/products/${id}`)).text();
    expect(ownerView).toContain(`<a href="/products/${id}?confirm=remove&amp;variant=${l}#confirm-remove" class="danger" aria-label="Remove this variant: L…">`);

    const staff = await sessionFor(db, (await addMember(db, s, "staff")).userId, s.id);
    expect(await (await page(staff, `/products/${id}`)).text()).not.toContain("Remove this variant");
    expect((await page(staff, `/products/${id}?confirm=remove&variant=${l}`)).status).toBe(403);
    expect((await postForm(staff, `/products/${id}`, { csrf: staff.csrf, action: "removeVariant", variantId: l! })).status).toBe(403);

    const confirm = await (await page(owner, `/products/${id}?confirm=remove&variant=${l}`)).text();
    expect(confirm).toContain("Remove the variant “L” (BPK-L) for good?");
    expect(confirm).toContain("This deletes the variant and its 0 stock records (0 on hand).");
    expect((await postForm(owner, `/products/${id}`, { csrf: "wrong", action: "removeVariant", variantId: l! })).status).toBe(403);
    expect(await sql(s, "select count(*)::int as n from product_variant where product_id = $1", [id])).toEqual([{ n: 2 }]);
    const removed = await postForm(owner, `/products/${id}`, { csrf: owner.csrf, action: "removeVariant", variantId: l! });
    expect(removed.headers.get("location")).toBe(`/products/${id}?done=variant-removed`);
    const after = await (await page(owner, `/products/${id}?done=variant-removed`)).text();
    expect(after).toContain("Variant removed, with its stock records.");
    expect(after).not.toContain("Remove this variant");
    expect(await sql(s, "select sku from product_variant where product_id = $1", [id])).toEqual([{ sku: "BPK-M" }]);

    // The last one is refused with the procedure's reason on the page; a bad id is named, not a 500.
    const last = await postForm(owner, `/products/${id}`, { csrf: owner.csrf, action: "removeVariant", variantId: m! });
    expect(last.status).toBe(409);
    expect(await last.text()).toContain("A product keeps at least one variant: delete the product instead");
    expect((await postForm(owner, `/products/${id}`, { csrf: owner.csrf, action: "removeVariant", variantId: "x" })).status).toBe(400);
    expect((await postForm(owner, `/products/${id}`, { csrf: owner.csrf, action: "removeVariant", variantId: l! })).status).toBe(404);
    expect(await sql(s, "select count(*)::int as n from product_variant where product_id = $1", [id])).toEqual([{ n: 1 }]);
  });

  it("another store's product is the 404 page and stays as it was", async () => {
    const s = await makeStore(db);
    const other = await makeStore(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const [foreign] = await sql<{ id: string }>(other, "select id from product");
    expect((await page(owner, `/products/${foreign!.id}`)).status).toBe(404);
    expect((await postForm(owner, `/products/${foreign!.id}`, { csrf: owner.csrf, action: "archive" })).status).toBe(404);
    expect((await page(owner, "/products/not-an-id")).status).toBe(404);
    expect(await sql(other, "select status from product")).toEqual([{ status: "draft" }]);
  });
});
