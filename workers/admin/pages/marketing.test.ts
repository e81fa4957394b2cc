import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { page, postForm, sessionFor } from "../../../test/admin";
import { makeStore, testDb } from "../../../test/harness";
import { addMember } from "../../../test/procedures";

/** /marketing through the real admin routes against real Postgres (issue 12; docs/marketing.md). */
const db = testDb();

const campaignRows = (storeId: string) =>
  withStore(db, storeId, (tx) => tx.$client.query<{ name: string; status: string }>("select name, status from campaign where name <> 'Fixture' order by created_at")).then((r) => r.rows);

describe("Marketing page", () => {
  it("schedules a campaign, keeps what was typed on an error with the message by its field, cancels; saves an automation", async () => {
    const s = await makeStore(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const first = await (await page(owner, "/marketing")).text();
    expect(first).toContain('<a href="/marketing">Marketing</a>');
    expect(first).toContain("New campaign");

    const bad = await postForm(owner, "/marketing", { csrf: owner.csrf, action: "create", name: "Winter", audience: "subscribers", subject: "Hi {{nom}}", body: "Sale!" });
    expect(bad.status).toBe(400);
    const html = await bad.text();
    expect(html).toContain("Not saved: correct the fields marked below.");
    expect(html).toMatch(/id="subject" name="subject" type="text" value="Hi \{\{nom\}\}" aria-invalid="true"/);
    expect(html).toContain("{{nom}} is not a placeholder");
    expect(html).toContain('value="Winter"');
    expect(await campaignRows(s.id)).toEqual([]);

    const ok = await postForm(owner, "/marketing", { csrf: owner.csrf, action: "create", name: "Winter", audience: "buyers", subject: "Hi {{first_name}}", body: "Sale!", startsAt: "2030-01-01T09:00:00+05:30" });
    expect(ok.status).toBe(303);
    expect(ok.headers.get("location")).toBe("/marketing?done=created");
    const listed = await (await page(owner, "/marketing?done=created")).text();
    expect(listed).toContain("Campaign scheduled.");
    expect(listed).toContain('<tr data-campaign="Winter">');
    const [row] = await withStore(db, s.id, (tx) => tx.$client.query<{ id: string }>("select id from campaign where name = 'Winter'")).then((r) => r.rows);
    expect((await postForm(owner, "/marketing", { csrf: owner.csrf, action: "cancel", id: row!.id })).status).toBe(303);
    expect(await campaignRows(s.id)).toEqual([{ name: "Winter", status: "cancelled" }]);
    const again = await postForm(owner, "/marketing", { csrf: owner.csrf, action: "cancel", id: row!.id });
    expect(again.status).toBe(409);
    expect(await again.text()).toContain("This campaign is cancelled already.");

    const delay = await postForm(owner, "/marketing", { csrf: owner.csrf, action: "automation", kind: "abandoned_checkout", enabled: "yes", delayMinutes: "soon", subject: "Back?", body: "Come back" });
    expect(delay.status).toBe(400);
    expect(await delay.text()).toMatch(/id="abandoned_checkout-delay" name="delayMinutes" type="text" value="soon" aria-invalid="true"/);
    const saved = await postForm(owner, "/marketing", { csrf: owner.csrf, action: "automation", kind: "abandoned_checkout", enabled: "yes", delayMinutes: "90", subject: "Back?", body: "Come back" });
    expect(saved.status).toBe(303);
    expect(
      await withStore(db, s.id, (tx) => tx.$client.query("select enabled, delay_minutes, subject from marketing_automation where kind = 'abandoned_checkout'")).then((r) => r.rows),
    ).toEqual([{ enabled: true, delay_minutes: 90, subject: "Back?" }]);
  });

  it("CSRF is enforced; Staff see the lists without forms and are refused a post; another store's campaign is not found", async () => {
    const s = await makeStore(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    expect((await postForm(owner, "/marketing", { csrf: "wrong", action: "create", name: "x", audience: "subscribers", subject: "x", body: "x" })).status).toBe(403);
    expect((await postForm(owner, "/marketing", { csrf: owner.csrf, action: "create", name: "x", audience: "subscribers", subject: "x", body: "x" }, { origin: "https://evil.example" })).status).toBe(403);
    expect(await campaignRows(s.id)).toEqual([]);

    const staff = await addMember(db, s, "staff");
    const browser = await sessionFor(db, staff.userId, s.id);
    const seen = await page(browser, "/marketing");
    expect(seen.status).toBe(200);
    const html = await seen.text();
    expect(html).not.toContain("New campaign");
    expect(html).not.toContain('name="action" value="automation"');
    const refused = await postForm(browser, "/marketing", { csrf: browser.csrf, action: "create", name: "x", audience: "subscribers", subject: "x", body: "x" });
    expect(refused.status).toBe(403);
    expect(refused.headers.get("location")).toBeNull();

    const other = await makeStore(db);
    const [foreign] = await withStore(db, other.id, (tx) => tx.$client.query<{ id: string }>("select id from campaign")).then((r) => r.rows);
    expect((await postForm(owner, "/marketing", { csrf: owner.csrf, action: "cancel", id: foreign!.id })).status).toBe(404);
    expect(await withStore(db, other.id, (tx) => tx.$client.query("select status from campaign")).then((r) => r.rows)).toEqual([{ status: "sent" }]);
  });
});
