import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { ADMIN, page, postForm, sessionFor } from "../../../test/admin";
import { makeStore, testDb, type TestStore } from "../../../test/harness";
import { addMember } from "../../../test/procedures";

/** /team through the real admin routes (issue 13 item 6), and the link it shows accepted through /invite. */
const db = testDb();
const sql = <R,>(s: TestStore, text: string, values: unknown[] = []) => withStore(db, s.id, (tx) => tx.$client.query(text, values)).then((r) => r.rows as R[]);

describe("Team page", () => {
  it("invite: the link shown once works; change a role; never demote the last Owner; remove; revoke", async () => {
    const s = await makeStore(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const email = `colleague-${crypto.randomUUID().slice(0, 8)}@example.test`;
    const invited = await postForm(owner, "/team", { csrf: owner.csrf, action: "invite", email, role: "admin" });
    expect(invited.status).toBe(200);
    expect(invited.headers.get("cache-control")).toBe("no-store");
    const html = await invited.text();
    const link = /id="invite-link" readonly="" value="([^"]+)"/.exec(html)?.[1];
    expect(link).toMatch(new RegExp(`^${ADMIN}/invite/[A-Za-z0-9_-]{43}$`));
    const again = await (await page(owner, "/team")).text();
    expect(again).not.toContain(link!);
    expect(again).toContain(`<tr data-invitation="${email}">`);
    // The colleague accepts in another browser (no session): creates an account and joins.
    const path = new URL(link!).pathname;
    expect(await (await page(null, path)).text()).toContain("Create account and join");
    const joined = await postForm(null, path, { name: "Colleague", password: "a long enough password" });
    expect(joined.status).toBe(303);
    const [m] = await sql<{ id: string; role: string }>(s, "select m.id, m.role from member m join user_account u on u.id = m.user_id where u.email = $1", [email]);
    expect(m!.role).toBe("admin");
    // Demote them to Staff; the last Owner cannot be demoted.
    expect((await postForm(owner, "/team", { csrf: owner.csrf, action: "role", memberId: m!.id, role: "staff" })).headers.get("location")).toBe("/team?done=role");
    const last = await postForm(owner, "/team", { csrf: owner.csrf, action: "role", memberId: s.memberId, role: "staff" });
    expect(last.status).toBe(409);
    expect(await last.text()).toContain("The last Owner cannot be removed or demoted.");
    expect(await sql(s, "select role from member where id = any($1) order by role", [[m!.id, s.memberId]])).toEqual([{ role: "owner" }, { role: "staff" }]);
    // Revoke an invitation; remove the member.
    await postForm(owner, "/team", { csrf: owner.csrf, action: "invite", email: "other@example.test", role: "staff" });
    const [inv] = await sql<{ id: string }>(s, "select id from staff_invitation where email = 'other@example.test'");
    expect((await postForm(owner, "/team", { csrf: owner.csrf, action: "revoke", invitationId: inv!.id })).headers.get("location")).toBe("/team?done=revoke");
    expect((await postForm(owner, "/team", { csrf: owner.csrf, action: "remove", memberId: m!.id })).headers.get("location")).toBe("/team?done=remove");
    expect(await sql(s, "select count(*)::int as n from member where id = $1", [m!.id])).toEqual([{ n: 0 }]);
  });

  it("Staff get the 403 page; Admins see the team without actions; mistakes by the field; CSRF; another store's member is not found", async () => {
    const s = await makeStore(db);
    const other = await makeStore(db);
    const staff = await sessionFor(db, (await addMember(db, s, "staff")).userId, s.id);
    expect((await page(staff, "/team")).status).toBe(403);
    expect((await postForm(staff, "/team", { csrf: staff.csrf, action: "invite", email: "x@example.test", role: "owner" })).status).toBe(403);
    const admin = await sessionFor(db, (await addMember(db, s, "admin")).userId, s.id);
    const view = await (await page(admin, "/team")).text();
    expect(view).toContain("<h1>Team</h1>");
    expect(view).not.toContain("Invite someone");
    expect(view).not.toContain("Change role");
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const bad = await postForm(owner, "/team", { csrf: owner.csrf, action: "invite", email: "not-an-email", role: "staff" });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('id="invite-email" name="email" type="email" value="not-an-email" aria-invalid="true"');
    expect((await postForm(owner, "/team", { csrf: "nope", action: "invite", email: "y@example.test", role: "staff" })).status).toBe(403);
    expect(await sql(s, "select count(*)::int as n from staff_invitation where email in ('x@example.test', 'y@example.test')")).toEqual([{ n: 0 }]);
    expect((await postForm(owner, "/team", { csrf: owner.csrf, action: "remove", memberId: other.memberId })).status).toBe(404);
    expect(await sql(other, "select count(*)::int as n from member")).toEqual([{ n: 1 }]);
  });
});
