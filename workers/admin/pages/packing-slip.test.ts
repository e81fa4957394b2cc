import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { providerServices } from "#shared/pipeline/providers";
import { page, sessionFor } from "../../../test/admin";
import { testDb } from "../../../test/harness";
import { orderShop, placeTestOrder } from "../../../test/orders";
import { addMember, callerFor } from "../../../test/procedures";

/** A parcel's packing slip (`/orders/<id>/parcels/<parcelId>/packing-slip`), through the real routes against real Postgres. */
const db = testDb();

const slipPath = (orderId: string, parcelId: string) => `/orders/${orderId}/parcels/${parcelId}/packing-slip`;
const lineRows = (html: string) => {
  const body = html.slice(html.indexOf('<table class="lines">'), html.indexOf("</table>", html.indexOf('<table class="lines">')));
  return [...body.matchAll(/<tr><td>([^<]*)<\/td><td>([^<]*)<\/td><td class="num">(\d+)<\/td><\/tr>/g)].map((m) => [m[1], m[2], Number(m[3])]);
};

/**
 * A shop with two locations and an order split over them: 2 of the fixture (its warehouse, no legal identity)
 * and 1 of a "Blue" variant stocked only at the Pune hub (registered: legal name and address). Paid by hand.
 */
async function splitOrder() {
  const { s, sql } = await orderShop(db);
  await sql(
    `insert into location (store_id, name, state, city, gstin, legal_name, address_line1, postal_code, priority)
     values ($1, 'Pune Hub', 'IN-MH', 'Pune', '27ABCDE1234F1Z0', 'Saanjh Crafts Private Limited', 'Unit 4, Laxmi Industrial Estate', '411028', 200)`,
    [s.id],
  );
  const [blue] = await sql<{ id: string; sku: string }>(
    `insert into product_variant (store_id, product_id, title, sku, price_minor)
     values ($1, $2, 'Blue', 'BLUE-' || substr(md5(random()::text), 1, 6), 250000) returning id, sku`,
    [s.id, s.productId],
  );
  await sql("insert into inventory_level (store_id, variant_id, location_id, on_hand) select $1, $2, id, 3 from location where name = 'Pune Hub'", [s.id, blue!.id]);
  await sql("update location set city = 'Nashik' where name = 'Fixture warehouse'");
  const { order } = await placeTestOrder(db, s, { lines: [[s.variantId, 2], [blue!.id, 1]], phone: "+919812345678", paymentMethod: "manual_transfer" });
  const [fixture] = await sql<{ sku: string }>("select sku from product_variant where id = $1", [s.variantId]);
  const parcels = await sql<{ id: string; location: string }>(
    "select f.id, l.name as location from fulfillment_order f join location l on l.id = f.location_id where f.order_id = $1 order by f.position, f.id",
    [order.id],
  );
  const parcelAt = (name: string) => parcels.find((p) => p.location === name)!.id;
  const call = callerFor(db, s.ownerUserId, s.id, providerServices(env));
  await call("orders.setStatus", { orderId: order.id, action: "mark_paid" });
  const owner = await sessionFor(db, s.ownerUserId, s.id);
  return { s, sql, order, owner, call, blueSku: blue!.sku, fixtureSku: fixture!.sku, warehouse: parcelAt("Fixture warehouse"), hub: parcelAt("Pune Hub"), parcels };
}

describe("Packing slip", () => {
  it("prints the parcel's own lines with SKU, variant and quantity, the ship-from and ship-to, the units and a note box; no prices", async () => {
    const { s, order, owner, warehouse, hub, blueSku, fixtureSku, parcels } = await splitOrder();
    expect(parcels).toHaveLength(2);

    // The order page links each parcel's slip.
    const orderHtml = await (await page(owner, `/orders/${order.id}`)).text();
    for (const p of parcels) expect(orderHtml).toContain(`<a href="${slipPath(order.id, p.id)}">Packing slip</a>`);

    const res = await page(owner, slipPath(order.id, hub));
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const html = await res.text();
    const position = parcels.findIndex((p) => p.id === hub) + 1;
    expect(html).toContain(`<title>Packing slip ${order.number}-${position}`);
    expect(html).toContain('<article class="document">');
    expect(html).toContain("<h2>Ship from</h2>");
    // The store's name, then the location's registered legal name and address.
    expect(html).toContain(`<strong>${s.name}</strong><br>Saanjh Crafts Private Limited<br>Unit 4, Laxmi Industrial Estate<br>Pune 411028<br>Maharashtra, India`);
    expect(html).toContain("<h2>Ship to</h2><address><strong>Asha Rao</strong><br>12 MG Road<br>Pune 411001<br>Maharashtra, India<br>Phone: +919812345678</address>");
    expect(html).toMatch(new RegExp(`Order: <strong>#${order.number} of \\d{2} [A-Z][a-z]{2} \\d{4}</strong>`));
    expect(html).toContain(`Parcel: <strong>${position} of 2</strong>`);
    expect(html).toContain("Units: <strong>1</strong>");
    expect(html).not.toContain("AWB");
    expect(lineRows(html)).toEqual([["Fixture — Blue", blueSku, 1]]);
    expect(html).toContain('<section class="note-area"><h2>Notes</h2><div></div></section>');
    // A packing slip goes in the box: no money on it.
    const article = html.slice(html.indexOf('<article class="document">'), html.indexOf("</article>"));
    expect(article).not.toMatch(/₹|Rs\.|2,500|Total|Taxable|GST/);
    // The Print button, shown by the registered script (the page's CSP allows it by its hash).
    expect(html).toContain('<button type="button" class="small" data-print="true" hidden="">Print</button>');
    const script = /<script>([^<]*window\.print\(\)[^<]*)<\/script>/.exec(html)![1]!;
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(script)));
    expect(res.headers.get("content-security-policy")).toContain(`'sha256-${btoa(String.fromCharCode(...digest))}'`);

    // The other parcel: its own line only; a location without a legal identity prints its name and place.
    const other = await (await page(owner, slipPath(order.id, warehouse))).text();
    expect(lineRows(other)).toEqual([["Fixture", fixtureSku, 2]]);
    expect(other).toContain(`<strong>${s.name}</strong><br>Fixture warehouse<br>Nashik Maharashtra</address>`);
    expect(other).toContain("Units: <strong>2</strong>");
  });

  it("once shipped, names the courier and the AWB", async () => {
    const { order, owner, call, hub } = await splitOrder();
    await call("orders.fulfill", { orderId: order.id, parcelId: hub, tracking: { awb: "DLV-778899", courierName: "Delhivery" } });
    const html = await (await page(owner, slipPath(order.id, hub))).text();
    expect(html).toContain("Courier: <strong>Delhivery</strong><br>AWB: <strong>DLV-778899</strong>");
  });

  it("another store's parcel, another order's parcel, unknown and malformed ids are the 404 page", async () => {
    const { s, sql, order, owner, hub } = await splitOrder();
    const stranger = await orderShop(db);
    const strangerBrowser = await sessionFor(db, stranger.s.ownerUserId, stranger.s.id);
    const theirs = await page(strangerBrowser, slipPath(order.id, hub));
    expect(theirs.status).toBe(404);
    expect(await theirs.text()).not.toContain("Asha Rao");
    // The order with a parcel of another order of the same store: not found.
    const { order: second } = await placeTestOrder(db, s, {});
    const [secondParcel] = await sql<{ id: string }>("select id from fulfillment_order where order_id = $1", [second.id]);
    expect((await page(owner, slipPath(second.id, secondParcel!.id))).status).toBe(200);
    for (const path of [
      slipPath(order.id, secondParcel!.id),
      slipPath(crypto.randomUUID(), hub),
      slipPath(order.id, crypto.randomUUID()),
      slipPath("not-a-uuid", hub),
      slipPath(order.id, "1"),
      slipPath(order.id, `${hub}x`),
    ]) {
      const res = await page(owner, path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get("location"), path).toBeNull();
    }
  });

  it("is refused as the order page refuses: signed out, or signed in to a store one is not a member of", async () => {
    const { s, order, hub } = await splitOrder();
    const outsider = await addMember(db, (await orderShop(db)).s, "staff");
    const notMember = await sessionFor(db, outsider.userId, s.id);
    for (const browser of [null, notMember]) {
      const orderPage = await page(browser, `/orders/${order.id}`);
      const slip = await page(browser, slipPath(order.id, hub));
      expect(orderPage.status).not.toBe(200);
      // The same answer; a sign-in comes back to the page asked for.
      const back = (res: Response, path: string) => res.headers.get("location")?.replace(encodeURIComponent(path), "<page>");
      expect([slip.status, back(slip, slipPath(order.id, hub))]).toEqual([orderPage.status, back(orderPage, `/orders/${order.id}`)]);
      expect(await slip.text()).not.toContain("Asha Rao");
    }
  });
});
