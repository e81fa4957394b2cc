import { describe, expect, it } from "vitest";
import { emit } from "#shared/db/outbox";
import { withStore } from "#shared/db/with-store";
import { page, postForm, sessionFor } from "../../../test/admin";
import { makeStore, testDb } from "../../../test/harness";
import { addMember } from "../../../test/procedures";

/** The admin home's "Needs attention": failed jobs and dead outbox rows of this store, with Retry. */
const db = testDb();

describe("Home: needs attention", () => {
  it("shows the store's failed job and dead event; Retry queues it again; Staff see neither", async () => {
    const s = await makeStore(db);
    const deadId = await withStore(db, s.id, async (tx) => {
      const id = await emit(tx, "order.paid", { orderId: crypto.randomUUID() });
      await tx.$client.query("update outbox_event set dead_at = now(), attempts = 8, last_error = 'queue unavailable' where id = $1", [id]);
      return id;
    });
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const html = await (await page(owner, "/")).text();
    expect(html).toContain('data-job="{shipping}-track"'); // the fixture's failure
    expect(html).toContain("Fixture failure");
    expect(html).toContain('data-dead="order.paid"');
    expect(html).toContain("could not be delivered after 8 tries: queue unavailable");
    const retried = await postForm(owner, "/", { csrf: owner.csrf, action: "retry", id: deadId });
    expect(retried.status).toBe(303);
    const after = await (await page(owner, retried.headers.get("location")!)).text();
    expect(after).toContain("The event is queued again");
    expect(after).not.toContain('data-dead="order.paid"');
    const [row] = await withStore(db, s.id, (tx) => tx.$client.query("select dead_at, attempts from outbox_event where id = $1", [deadId])).then((r) => r.rows);
    expect(row).toEqual({ dead_at: null, attempts: 0 });
    const staff = await sessionFor(db, (await addMember(db, s, "staff")).userId, s.id);
    const staffHome = await (await page(staff, "/")).text();
    expect(staffHome).not.toContain('id="attention"');
    expect((await postForm(staff, "/", { csrf: staff.csrf, action: "retry", id: deadId })).status).toBe(403);
  });
});
