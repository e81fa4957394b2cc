import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { page, postForm, sessionFor } from "../../../test/admin";
import { makeStore, testDb, type TestStore } from "../../../test/harness";
import { orderShop, placeTestOrder } from "../../../test/orders";
import { addMember } from "../../../test/procedures";

/** Settings → Locations (/settings/locations) through the real admin routes, as a browser without JavaScript (issue 22 item 1). */
const db = testDb();
const sql = <R,>(s: TestStore, text: string, values: unknown[] = []) => withStore(db, s.id, (tx) => tx.$client.query(text, values)).then((r) => r.rows as R[]);

const FORM = { gstin: "", legalName: "", addressLine1: "", addressLine2: "", city: "", postalCode: "", state: "" };

describe("Settings → Locations", () => {
  it("lists each location's tax identity; the edit form saves a GSTIN (the state follows), legal name and address", async () => {
    const s = await makeStore(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const [loc] = await sql<{ id: string; name: string }>(s, "select id, name from location");
    expect(await (await page(owner, "/settings")).text()).toContain('<a href="/settings/locations">');
    const list = await (await page(owner, "/settings/locations")).text();
    expect(list).toContain(`href="/settings/locations?edit=${loc!.id}#edit"`);
    const form = await (await page(owner, `/settings/locations?edit=${loc!.id}`)).text();
    expect(form).toContain('id="gstin" name="gstin" type="text" value=""');
    expect(form).toMatch(/<p class="muted" id="e-invoicing">These invoices carry no IRN \(e-invoicing\)\..*is not a valid tax invoice for you \(CGST rule 48\(5\)\): register your B2B invoices on the Invoice\s+Registration Portal yourself\.<\/p>/s);

    const saved = await postForm(owner, "/settings/locations", {
      ...FORM,
      csrf: owner.csrf,
      action: "update",
      id: loc!.id,
      gstin: "29abcde1234f1zw",
      legalName: "Demo Retail Private Limited",
      addressLine1: "4th Floor, 80 Feet Road",
      city: "Bengaluru",
      postalCode: "560034",
      state: "IN-MH", // ignored with a GSTIN: the GSTIN sets the state
    });
    expect(saved.status).toBe(303);
    expect(saved.headers.get("location")).toBe("/settings/locations?done=updated");
    expect(await sql(s, "select gstin, state, legal_name, address_line1, address_line2, city, postal_code from location where id = $1", [loc!.id])).toEqual([
      { gstin: "29ABCDE1234F1ZW", state: "IN-KA", legal_name: "Demo Retail Private Limited", address_line1: "4th Floor, 80 Feet Road", address_line2: null, city: "Bengaluru", postal_code: "560034" },
    ]);
    const after = await (await page(owner, "/settings/locations?done=updated")).text();
    expect(after).toContain("Location saved.");
    expect(after).toContain("<code>29ABCDE1234F1ZW</code>");
    expect(after).toContain("4th Floor, 80 Feet Road, Bengaluru, Karnataka, 560034");
  });

  it("a bad GSTIN comes back by its field with what was typed; Staff see the list but cannot edit; CSRF; another store's location is not found", async () => {
    const s = await makeStore(db);
    const other = await makeStore(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const [loc] = await sql<{ id: string }>(s, "select id from location");
    const bad = await postForm(owner, "/settings/locations", { ...FORM, csrf: owner.csrf, action: "update", id: loc!.id, gstin: "27AAPFU0939F1ZO", legalName: "Typed Name" });
    expect(bad.status).toBe(400);
    const html = await bad.text();
    expect(html).toContain('id="gstin" name="gstin" type="text" value="27AAPFU0939F1ZO"');
    expect(html).toContain('aria-invalid="true" aria-describedby="gstin-error"');
    expect(html).toContain("GSTIN has a wrong check character");
    expect(html).toContain('value="Typed Name"');
    expect(await sql(s, "select gstin, legal_name from location")).toEqual([{ gstin: null, legal_name: null }]);

    const staff = await sessionFor(db, (await addMember(db, s, "staff")).userId, s.id);
    const staffList = await page(staff, "/settings/locations");
    expect(staffList.status).toBe(200);
    expect(await staffList.text()).not.toContain("?edit=");
    expect((await page(staff, `/settings/locations?edit=${loc!.id}`)).status).toBe(403);
    expect((await postForm(staff, "/settings/locations", { ...FORM, csrf: staff.csrf, action: "update", id: loc!.id, legalName: "X" })).status).toBe(403);
    expect((await postForm(owner, "/settings/locations", { ...FORM, csrf: "bad", action: "update", id: loc!.id, legalName: "X" })).status).toBe(403);
    const [theirs] = await sql<{ id: string }>(other, "select id from location");
    expect((await page(owner, `/settings/locations?edit=${theirs!.id}`)).status).toBe(404);
    expect((await postForm(owner, "/settings/locations", { ...FORM, csrf: owner.csrf, action: "update", id: theirs!.id, legalName: "X" })).status).toBe(404);
    expect(await sql(other, "select legal_name from location")).toEqual([{ legal_name: null }]);
    expect(await sql(s, "select legal_name from location")).toEqual([{ legal_name: null }]);
  });

  it("the admin order page shows a business purchase's GSTIN and legal name", async () => {
    const { s, sql: q } = await orderShop(db);
    const placed = await placeTestOrder(db, s);
    await q("update shop_order set buyer_gstin = '29ABCDE1234F1ZW', buyer_legal_name = 'Rao Traders LLP' where id = $1", [placed.order.id]);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const html = await (await page(owner, `/orders/${placed.order.id}`)).text();
    expect(html).toContain("Business purchase: GSTIN <strong>29ABCDE1234F1ZW</strong> · Rao Traders LLP");
  });
});
