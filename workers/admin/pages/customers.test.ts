import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { page, postForm, sessionFor } from "../../../test/admin";
import { makeStore, testDb, type TestStore } from "../../../test/harness";
import { orderShop, placeTestOrder } from "../../../test/orders";
import { addMember } from "../../../test/procedures";

/** /customers, /customers/new and /customers/<id> through the real admin routes (issue 13 item 3). */
const db = testDb();
const sql = <R,>(s: TestStore, text: string, values: unknown[] = []) => withStore(db, s.id, (tx) => tx.$client.query(text, values)).then((r) => r.rows as R[]);
const fields = { email: "Meera@Example.test", phone: "+919812345678", firstName: "Meera", lastName: "Nair", city: "Kochi", note: "Prefers calls", acceptsMarketing: "yes" };

describe("Customer pages", () => {
  it("add a customer, see consent and their orders, edit; search and page the list", async () => {
    const { s } = await orderShop(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const made = await postForm(owner, "/customers/new", { csrf: owner.csrf, action: "save", ...fields });
    expect(made.status).toBe(303);
    const location = made.headers.get("location")!;
    expect(location).toMatch(/^\/customers\/[0-9a-f-]{36}\?done=created$/);
    await placeTestOrder(db, s, { email: "meera@example.test" });
    // Another buyer whose address ends with Meera's is not one of hers.
    const other = await placeTestOrder(db, s, { email: "asmeera@example.test" });
    const detail = await (await page(owner, location)).text();
    expect(detail).not.toContain(`/orders/${other.order.id}`);
    // The orders page keeps one customer's orders by the same exact address, and names a bad one by its field.
    const hers = await (await page(owner, "/orders?email=Meera%40example.test")).text();
    expect(hers).toContain('id="f-email" name="email" type="email" value="Meera@example.test"');
    expect(hers).toMatch(/data-order="\d+"/);
    expect(hers).not.toContain("asmeera@example.test");
    const wrong = await page(owner, "/orders?email=meera");
    expect(wrong.status).toBe(400);
    expect(await wrong.text()).toContain("Enter an email address such as asha@example.com.");
    expect(detail).toContain("Customer added.");
    expect(detail).toContain("<dd>meera@example.test</dd>");
    expect(detail).toMatch(/<dd data-consent="confirmed">Subscribed since <time[^>]*>[^<]+<\/time> \(from a member, in the admin\)<\/dd>/);
    expect(detail).toMatch(/<a href="\/orders\/[0-9a-f-]{36}">#\d+<\/a>/);
    const id = location.split("/")[2]!.split("?")[0]!;
    const saved = await postForm(owner, `/customers/${id}`, { csrf: owner.csrf, action: "save", ...fields, city: "", acceptsMarketing: "" });
    expect(saved.headers.get("location")).toBe(`/customers/${id}?done=saved`);
    expect(await sql(s, "select city, accepts_marketing from customer where id = $1", [id])).toEqual([{ city: null, accepts_marketing: false }]);
    const list = await (await page(owner, "/customers?query=meera")).text();
    expect(list).toContain(`<a href="/customers/${id}">Meera Nair</a>`);
    expect(list).not.toContain("Fixture");
  });

  it("shows consent waiting for the customer's confirmation, its records, and a save that leaves it waiting (decision 0021)", async () => {
    const { s } = await orderShop(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    await placeTestOrder(db, s, { email: "tara@example.test", name: "Tara Iyer", acceptsMarketing: true });
    const [{ id }] = (await sql<{ id: string }>(s, "select id from customer where email_lower = 'tara@example.test'")) as [{ id: string }];
    const waiting = await (await page(owner, `/customers/${id}`)).text();
    expect(waiting).toMatch(/<dd data-consent="pending">Waiting for confirmation since <time[^>]*>[^<]+<\/time> \(from checkout \(box ticked\)\)<div class="muted">A confirmation email was sent; its link works until <time/);
    expect(waiting).toMatch(/<li data-state="pending" data-source="checkout"><time[^>]*>[^<]+<\/time>: Waiting for confirmation, from checkout \(box ticked\)<\/li>/);
    const list = await (await page(owner, "/customers?query=tara")).text();
    expect(list).toContain('<td data-consent="pending">Waiting for confirmation</td>');
    // The edit form's unticked box is not a withdrawal of a request it never showed as given.
    const saved = await postForm(owner, `/customers/${id}`, { csrf: owner.csrf, action: "save", ...fields, email: "tara@example.test", acceptsMarketing: "" });
    expect(saved.status).toBe(303);
    expect(await sql(s, "select marketing_consent from customer where id = $1", [id])).toEqual([{ marketing_consent: "pending" }]);
    // The customer confirms through the emailed link (workers/storefront/consent.test.ts), as the page then says.
    await sql(s, "update customer set accepts_marketing = true, marketing_consent_updated_at = now(), marketing_consent_source = 'confirmation_link' where id = $1", [id]);
    const confirmed = await (await page(owner, `/customers/${id}`)).text();
    expect(confirmed).toMatch(/<dd data-consent="confirmed">Subscribed since <time[^>]*>[^<]+<\/time> \(from the customer, through the confirmation email\)<\/dd>/);
    expect(confirmed.match(/<li data-state="(\w+)" data-source="(\w+)"/g)).toEqual([
      '<li data-state="confirmed" data-source="confirmation_link"',
      '<li data-state="pending" data-source="checkout"',
    ]);
  });

  it("the procedures' validation by its field, keeping what was typed: E.164 phones, unique emails", async () => {
    const s = await makeStore(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const bad = await postForm(owner, "/customers/new", { csrf: owner.csrf, action: "save", ...fields, phone: "98123 45678" });
    expect(bad.status).toBe(400);
    let html = await bad.text();
    expect(html).toContain('id="phone" name="phone" type="tel" value="98123 45678" aria-invalid="true"');
    expect(html).toContain("Use E.164 format with the country code");
    expect(html).toContain('value="Meera@Example.test"');
    const [fixture] = await sql<{ email: string }>(s, "select email from customer");
    const dup = await postForm(owner, "/customers/new", { csrf: owner.csrf, action: "save", ...fields, email: fixture!.email.toUpperCase() });
    expect(dup.status).toBe(409);
    html = await dup.text();
    expect(html).toContain('aria-invalid="true" aria-describedby="email-error"');
    expect(html).toContain("A customer with this email already exists.");
    expect(await sql(s, "select count(*)::int as n from customer")).toEqual([{ n: 1 }]);
  });

  it("CSRF and cross-site posts refused; another store's customer is 404 and stays as it was", async () => {
    const s = await makeStore(db);
    const other = await makeStore(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    expect((await postForm(owner, "/customers/new", { csrf: "nope", action: "save", ...fields })).status).toBe(403);
    expect((await postForm(owner, "/customers/new", { csrf: owner.csrf, action: "save", ...fields }, { origin: "https://evil.example" })).status).toBe(403);
    expect(await sql(s, "select count(*)::int as n from customer")).toEqual([{ n: 1 }]);
    const [theirs] = await sql<{ id: string }>(other, "select id from customer");
    expect((await page(owner, `/customers/${theirs!.id}`)).status).toBe(404);
    expect((await postForm(owner, `/customers/${theirs!.id}`, { csrf: owner.csrf, action: "save", ...fields })).status).toBe(404);
    expect(await sql(other, "select first_name from customer")).toEqual([{ first_name: "Fixture" }]);
  });

  it("delete only after a confirmation saying what goes and what stays, and only for roles with records.delete", async () => {
    const { s } = await orderShop(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const made = await postForm(owner, "/customers/new", { csrf: owner.csrf, action: "save", ...fields });
    const id = made.headers.get("location")!.split("/")[2]!.split("?")[0]!;
    await placeTestOrder(db, s, { email: "meera@example.test" });
    const staff = await sessionFor(db, (await addMember(db, s, "staff")).userId, s.id);
    expect(await (await page(staff, `/customers/${id}`)).text()).not.toContain("Delete customer…");
    expect((await page(staff, `/customers/${id}?confirm=delete`)).status).toBe(403);
    expect((await postForm(staff, `/customers/${id}`, { csrf: staff.csrf, action: "delete" })).status).toBe(403);
    expect(await (await page(owner, `/customers/${id}`)).text()).toContain(`<a href="/customers/${id}?confirm=delete#confirm-delete" class="danger">`);
    const confirm = await (await page(owner, `/customers/${id}?confirm=delete`)).text();
    expect(confirm).toContain("Delete Meera Nair for good?");
    expect(confirm).toContain("Their 1 order stay, with the email they were placed with.");
    expect((await postForm(owner, `/customers/${id}`, { csrf: "wrong", action: "delete" })).status).toBe(403);
    expect((await postForm(owner, `/customers/${id}`, { csrf: owner.csrf, action: "delete" }, { origin: "https://evil.example" })).status).toBe(403);
    expect(await sql(s, "select count(*)::int as n from customer where id = $1", [id])).toEqual([{ n: 1 }]);
    const deleted = await postForm(owner, `/customers/${id}`, { csrf: owner.csrf, action: "delete" });
    expect(deleted.headers.get("location")).toBe("/customers?done=deleted");
    expect(await sql(s, "select count(*)::int as n from customer where id = $1", [id])).toEqual([{ n: 0 }]);
    expect(await (await page(owner, "/customers?done=deleted")).text()).toContain("Customer deleted.");
    expect((await page(owner, `/customers/${id}`)).status).toBe(404);
  });
});
