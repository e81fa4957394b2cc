import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { page, postForm, sessionFor } from "../../../test/admin";
import { makeStore, testDb, type TestStore } from "../../../test/harness";
import { addMember } from "../../../test/procedures";

/** /inventory and /inventory/<variantId> through the real admin routes (issue 13 item 2). */
const db = testDb();
const sql = <R,>(s: TestStore, text: string, values: unknown[] = []) => withStore(db, s.id, (tx) => tx.$client.query(text, values)).then((r) => r.rows as R[]);

async function stocked() {
  const s = await makeStore(db);
  const [row] = await sql<{ variant_id: string; location_id: string; product_id: string }>(s, "select l.variant_id, l.location_id, v.product_id from inventory_level l join product_variant v on v.id = l.variant_id");
  return { s, variantId: row!.variant_id, locationId: row!.location_id, productId: row!.product_id };
}
const onHand = (s: TestStore) => sql<{ on_hand: number }>(s, "select on_hand from inventory_level").then((r) => r.map((x) => x.on_hand));

describe("Inventory page", () => {
  it("lists stock with search; adjusts up and down with a reason; never below zero, the typed value kept by its field; history shows each change", async () => {
    const { s, variantId, locationId } = await stocked();
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const list = await (await page(owner, "/inventory?query=FIX")).text();
    expect(list).toMatch(/<tr data-level="FIX-[^"]+@Fixture warehouse">/);
    expect((await (await page(owner, "/inventory?query=nothing-like-this")).text())).toContain("No stock matches.");
    const add = await postForm(owner, "/inventory", { csrf: owner.csrf, action: "adjust", variantId, locationId, delta: "+7", reason: "received", return: "/inventory?query=FIX" });
    expect(add.headers.get("location")).toBe("/inventory?query=FIX&done=adjusted");
    expect(await onHand(s)).toEqual([12]);
    const below = await postForm(owner, "/inventory", { csrf: owner.csrf, action: "adjust", variantId, locationId, delta: "-13", reason: "damaged" });
    expect(below.status).toBe(400);
    const html = await below.text();
    expect(html).toContain("would take on-hand below zero (on hand 12)");
    expect(html).toContain(`id="adj-${variantId}-${locationId}-delta" name="delta" type="number" step="1" value="-13"`);
    expect(await onHand(s)).toEqual([12]);
    await postForm(owner, "/inventory", { csrf: owner.csrf, action: "adjust", variantId, locationId, delta: "-2", reason: "damaged" });
    expect(await onHand(s)).toEqual([10]);
    const history = await (await page(owner, `/inventory/${variantId}`)).text();
    expect(history.match(/<tr data-change="(\w+)">/g)).toEqual(['<tr data-change="damaged">', '<tr data-change="received">', '<tr data-change="received">']);
    expect(history).toContain('<td class="num">-2</td><td class="num">10</td>');
    // An open redirect through `return` is not followed.
    const away = await postForm(owner, "/inventory", { csrf: owner.csrf, action: "adjust", variantId, locationId, delta: "1", reason: "recount", return: "//evil.example/x" });
    expect(away.headers.get("location")).toBe("/inventory?done=adjusted");
  });

  it("locations: add one, stop and start selling its stock online", async () => {
    const { s } = await stocked();
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const bad = await postForm(owner, "/inventory", { csrf: owner.csrf, action: "location", name: "", city: "Pune", sellsOnline: "yes" });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('id="location-city" name="city" type="text" value="Pune"');
    expect((await postForm(owner, "/inventory", { csrf: owner.csrf, action: "location", name: "Pune shop", city: "Pune" })).status).toBe(303);
    const [shop] = await sql<{ id: string; sells_online: boolean }>(s, "select id, sells_online from location where name = 'Pune shop'");
    expect(shop!.sells_online).toBe(false);
    await postForm(owner, "/inventory", { csrf: owner.csrf, action: "online", id: shop!.id, sellsOnline: "yes" });
    expect(await sql(s, "select sells_online from location where id = $1", [shop!.id])).toEqual([{ sells_online: true }]);
  });

  it("Staff adjust; CSRF refused; another store's variant, location and history are not found and unchanged", async () => {
    const { s, variantId, locationId } = await stocked();
    const other = await stocked();
    const staff = await sessionFor(db, (await addMember(db, s, "staff")).userId, s.id);
    expect((await postForm(staff, "/inventory", { csrf: staff.csrf, action: "adjust", variantId, locationId, delta: "1", reason: "recount" })).status).toBe(303);
    expect((await postForm(staff, "/inventory", { csrf: "nope", action: "adjust", variantId, locationId, delta: "1", reason: "recount" })).status).toBe(403);
    expect(await onHand(s)).toEqual([6]);
    const foreign = await postForm(staff, "/inventory", { csrf: staff.csrf, action: "adjust", variantId: other.variantId, locationId: other.locationId, delta: "5", reason: "received" });
    expect(foreign.status).toBe(404);
    expect((await postForm(staff, "/inventory", { csrf: staff.csrf, action: "online", id: other.locationId, sellsOnline: "no" })).status).toBe(404);
    expect(await onHand(other.s)).toEqual([5]);
    expect(await (await page(staff, `/inventory/${other.variantId}`)).text()).toContain("No changes recorded for this variant in this store.");
  });

  it("a new product's first stock, from its page, lands back on it", async () => {
    const { s, variantId, locationId, productId } = await stocked();
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const view = await (await page(owner, `/products/${productId}`)).text();
    expect(view).toContain('<form method="post" action="/inventory" class="card" id="add-stock">');
    const back = await postForm(owner, "/inventory", { csrf: owner.csrf, action: "adjust", variantId, locationId, delta: "3", reason: "received", return: `/products/${productId}` });
    expect(back.headers.get("location")).toBe(`/products/${productId}?done=adjusted`);
  });
});
