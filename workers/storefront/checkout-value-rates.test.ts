import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { taxIn } from "#shared/rules/gst";
import { testDb } from "../../test/harness";
import { makeShop, Shopper, type ShopStore } from "../../test/storefront";

/** A value-based class through the real checkout (issue 22 item 4; docs/gst.md "Value-based classes"). */
const db = testDb();
const sql = (s: ShopStore, text: string, values: unknown[] = []) => withStore(db, s.id, (tx) => tx.$client.query(text, values)).then((r) => r.rows);
const order = { email: "asha@example.test", paymentMethod: "gateway", shippingAddress: { name: "Asha Rao", line1: "12 MG Road", city: "Pune", state: "IN-MH", postalCode: "411001", country: "IN" } };

/** A shop in Maharashtra whose fixture variant is a kurta (apparel) at `price` paise, with a code of each kind. */
async function kurtaShop(price: number): Promise<ShopStore> {
  const s = await makeShop(db);
  await sql(s, "update location set state = 'IN-MH'");
  await sql(s, "update inventory_level set on_hand = 10");
  await sql(s, "update product_variant set tax_class = 'gst_apparel', price_minor = $1", [price]);
  await sql(s, "insert into discount (store_id, code, kind, value) values ($1, 'LESS7500', 'fixed_amount', 15000), ($1, 'LESS7499', 'fixed_amount', 14998)", [s.id]);
  return s;
}

/** Places an order of `quantity` kurtas with `code` (if any); answers its one parcel as the API shows it and as stored. */
async function place(s: ShopStore, quantity: number, code: string | null) {
  const buyer = new Shopper(s.hostname);
  expect((await buyer.add(s.variantId, quantity)).status).toBe(200);
  if (code) expect((await buyer.applyCode(code)).status).toBe(200);
  const res = await buyer.send("POST", "/api/checkout", order);
  expect(res.status).toBe(201);
  const o = res.body.order as { id: string; subtotal: number; discount: number; shipping: number; tax: number; parcels: { tax: number; cgst: number; sgst: number; igst: number }[] };
  const [stored] = await sql(s, "select tax, cgst, sgst, igst from fulfillment_order where order_id = $1", [o.id]);
  return { o, parcel: o.parcels[0]!, stored: { tax: Number(stored.tax), cgst: Number(stored.cgst), sgst: Number(stored.sgst), igst: Number(stored.igst) } };
}

describe("checkout with a value-based class (apparel: 5 % up to ₹2,500 a piece before GST, 18 % above)", () => {
  it("₹2,700 kurtas: 18 % at full price, 5 % with the store's 10 % off (₹2,430 each); the parcel stores that tax", async () => {
    const s = await kurtaShop(270_000);
    const full = await place(s, 2, null);
    const rate = (bp: number, o: typeof full.o) => taxIn(o.subtotal - o.discount + o.shipping, bp);
    expect(full.o.discount).toBe(0);
    expect(full.parcel.tax).toBe(rate(1800, full.o));
    const off = await place(s, 2, s.discountCode);
    expect(off.o.discount).toBe(54_000);
    expect(off.parcel.tax).toBe(rate(500, off.o));
    for (const { parcel, stored, o } of [full, off]) {
      expect(stored).toEqual({ tax: parcel.tax, cgst: parcel.cgst, sgst: parcel.sgst, igst: 0 });
      expect([stored.cgst + stored.sgst, o.tax]).toEqual([stored.tax, stored.tax]);
    }
  });

  it("a fixed amount off, on both sides of ₹2,625.00 a unit: ₹150.00 off two is 5 %, ₹149.98 off is 18 %", async () => {
    const s = await kurtaShop(270_000);
    const at = await place(s, 2, "LESS7500");
    const over = await place(s, 2, "LESS7499");
    expect(at.parcel.tax).toBe(taxIn(540_000 - 15_000 + at.o.shipping, 500));
    expect(over.parcel.tax).toBe(taxIn(540_000 - 14_998 + over.o.shipping, 1800));
  });
});
