import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { page, postForm, sessionFor } from "../../../test/admin";
import { makeStore, testDb, type TestStore } from "../../../test/harness";
import { addMember } from "../../../test/procedures";

/** /discounts through the real admin routes (issue 13 item 4). */
const db = testDb();
const sql = <R,>(s: TestStore, text: string, values: unknown[] = []) => withStore(db, s.id, (tx) => tx.$client.query(text, values)).then((r) => r.rows as R[]);
const stateOf = (html: string, code: string) => new RegExp(`<tr data-discount="${code}">.*?data-status="(\\w+)"`, "s").exec(html)?.[1];

describe("Discounts page", () => {
  it("create (percent and rupees, dates in India's time), see each state, edit, disable", async () => {
    const s = await makeStore(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const made = await postForm(owner, "/discounts", { csrf: owner.csrf, action: "create", code: "diwali25", kind: "percentage", value: "25", startsAt: "2030-10-20T09:00", endsAt: "", usageLimit: "" });
    expect(made.headers.get("location")).toBe("/discounts?done=create");
    await postForm(owner, "/discounts", { csrf: owner.csrf, action: "create", code: "FLAT150", kind: "fixed_amount", value: "150.50", startsAt: "", endsAt: "", usageLimit: "1" });
    expect(await sql(s, "select code, kind, value::int, starts_at from discount where code in ('DIWALI25', 'FLAT150') order by code")).toEqual([
      { code: "DIWALI25", kind: "percentage", value: 25, starts_at: new Date("2030-10-20T03:30:00Z") },
      { code: "FLAT150", kind: "fixed_amount", value: 15050, starts_at: expect.any(Date) },
    ]);
    await sql(s, "update discount set usage_count = 1 where code = 'FLAT150'");
    await sql(s, "insert into discount (store_id, code, kind, value, starts_at, ends_at) values ($1, 'OLD', 'percentage', 5, now() - interval '2 days', now() - interval '1 day')", [s.id]);
    const html = await (await page(owner, "/discounts?done=create")).text();
    expect(html).toContain("Discount created.");
    expect([stateOf(html, "DIWALI25"), stateOf(html, "FLAT150"), stateOf(html, "OLD")]).toEqual(["scheduled", "used_up", "expired"]);
    const [fixture] = await sql<{ code: string }>(s, "select code from discount where code like 'FIX%'");
    expect(stateOf(html, fixture!.code)).toBe("live");
    const [diwali] = await sql<{ id: string }>(s, "select id from discount where code = 'DIWALI25'");
    const edit = await (await page(owner, `/discounts?edit=${diwali!.id}`)).text();
    expect(edit).toContain('id="edit-startsAt" name="startsAt" type="datetime-local" value="2030-10-20T09:00"');
    const saved = await postForm(owner, "/discounts", { csrf: owner.csrf, action: "update", id: diwali!.id, code: "DIWALI30", kind: "percentage", value: "30", startsAt: "2030-10-20T09:00", endsAt: "2030-10-19T09:00", usageLimit: "" });
    expect(saved.status).toBe(400);
    const refused = await saved.text();
    expect(refused).toContain("endsAt must be after startsAt.");
    expect(refused).toContain('id="edit-code" name="code" type="text" value="DIWALI30"');
    expect((await postForm(owner, "/discounts", { csrf: owner.csrf, action: "update", id: diwali!.id, code: "DIWALI30", kind: "percentage", value: "30", startsAt: "2030-10-20T09:00", endsAt: "", usageLimit: "" })).status).toBe(303);
    expect((await postForm(owner, "/discounts", { csrf: owner.csrf, action: "disable", id: diwali!.id })).headers.get("location")).toBe("/discounts?done=disable");
    expect(await sql(s, "select code, value::int, status from discount where id = $1", [diwali!.id])).toEqual([{ code: "DIWALI30", value: 30, status: "disabled" }]);
  });

  it("mistakes by their field with what was typed; Staff read only; CSRF; another store's code is not found", async () => {
    const s = await makeStore(db);
    const other = await makeStore(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const bad = await postForm(owner, "/discounts", { csrf: owner.csrf, action: "create", code: "X", kind: "fixed_amount", value: "10.999", startsAt: "", endsAt: "", usageLimit: "" });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('id="new-value" name="value" type="text" value="10.999" inputmode="decimal" aria-invalid="true"');
    const percent = await postForm(owner, "/discounts", { csrf: owner.csrf, action: "create", code: "TOOMUCH", kind: "percentage", value: "150", startsAt: "", endsAt: "", usageLimit: "" });
    expect(await percent.text()).toContain("A percentage discount is at most 100.");
    const staff = await sessionFor(db, (await addMember(db, s, "staff")).userId, s.id);
    const view = await (await page(staff, "/discounts")).text();
    expect(view).not.toContain("New discount");
    expect(view).not.toContain(">Disable<");
    const [mine] = await sql<{ id: string }>(s, "select id from discount");
    expect((await page(staff, `/discounts?edit=${mine!.id}`)).status).toBe(403);
    expect((await postForm(staff, "/discounts", { csrf: staff.csrf, action: "disable", id: mine!.id })).status).toBe(403);
    expect((await postForm(owner, "/discounts", { csrf: "x", action: "disable", id: mine!.id })).status).toBe(403);
    const [theirs] = await sql<{ id: string }>(other, "select id from discount");
    expect((await postForm(owner, "/discounts", { csrf: owner.csrf, action: "disable", id: theirs!.id })).status).toBe(404);
    expect(await sql(other, "select status from discount")).toEqual([{ status: "active" }]);
    expect(await sql(s, "select status from discount")).toEqual([{ status: "active" }]);
  });
});
