import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { page, postForm, sessionFor } from "../../../test/admin";
import { makeStore, testDb } from "../../../test/harness";

/** The product form's GST classes, the value-based and special ones included (issue 22 item 4; docs/gst.md). */
const db = testDb();

describe("product form: GST classes", () => {
  it("offers the new classes by plain name and saves a variant in one", async () => {
    const s = await makeStore(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const form = await (await page(owner, "/products/new")).text();
    for (const label of [
      "GST 3 % (gold, silver, jewellery)",
      "GST 1.5 % (cut and polished diamonds)",
      "GST 0.25 % (rough diamonds, precious stones)",
      "Apparel: GST 5 % up to ₹2,500 a piece, 18 % above",
      "Footwear: GST 5 % up to ₹2,500 a pair, 18 % above",
    ]) expect(form).toContain(label);
    expect(form).toContain('value="gst_apparel"');
    const created = await postForm(owner, "/products/new", {
      csrf: owner.csrf, action: "save", title: "Chikan Kurta", status: "active", rows: "2",
      "v0.title": "M", "v0.price": "2700", "v0.taxClass": "gst_apparel",
      "v1.title": "Ring", "v1.price": "51500", "v1.taxClass": "gst_3",
    });
    expect(created.status).toBe(303);
    const rows = await withStore(db, s.id, (tx) => tx.$client.query("select v.tax_class from product_variant v join product p on p.id = v.product_id where p.handle = 'chikan-kurta' order by v.position"));
    expect(rows.rows.map((r) => r.tax_class)).toEqual(["gst_apparel", "gst_3"]);
  });
});
