import { describe, expect, it } from "vitest";
import { api, createToken, rpc, sessionFor, type Browser, type RpcError, ownerOf } from "../../test/admin";
import { withStore } from "#shared/db/with-store";
import { applyPaymentStatus } from "#shared/orders/routines";
import { makeStore, testDb } from "../../test/harness";
import { orderShop, placeTestOrder } from "../../test/orders";
import { addMember } from "../../test/procedures";
import { traced } from "../../test/proxy";

/**
 * Round trips of the inventory, order-action, staff, store, task and outbox changes (modelled on
 * ./round-trips.test.ts "round trips: changes"): one when nothing is read first, two when a decision
 * needs a reading; nothing after the answer. Then the guards those changes took on.
 */
const db = testDb();


/** A change through /api/rpc: its status and answer, and its round trips (`turns`, `after`). */
async function change<T = Record<string, unknown>>(browser: Browser, path: string, input: unknown) {
  const { status, body, json, trips } = await traced((h) => rpc(browser, path, input, h));
  return { status, body, json: json<T>(), turns: trips.turns, after: trips.after.turns };
}

/** What the store's own rows say, for checks that bypass the procedures. */
const rows = <R = Record<string, unknown>>(storeId: string, text: string, values: unknown[] = []) =>
  withStore(db, storeId, (tx) => tx.$client.query(text, values)).then((r) => r.rows as R[]);

const owner = () => ownerOf(db);

describe("round trips: inventory, order, staff, store, task and outbox changes", () => {
  it("locations.create, locations.update and inventory.adjust: one round trip each", async () => {
    const { store, browser } = await owner();
    const created = await change<{ id: string }>(browser, "locations/create", { name: "Round Trip Depot", city: "Pune" });
    expect(created).toMatchObject({ status: 200, turns: 1, after: 0, json: { name: "Round Trip Depot", sellsOnline: true, city: "Pune" } });
    const renamed = await change(browser, "locations/update", { id: created.json.id, name: "Renamed Depot", sellsOnline: false });
    expect(renamed).toMatchObject({ status: 200, turns: 1, after: 0, json: { name: "Renamed Depot", sellsOnline: false } });
    expect(await change(browser, "locations/update", { id: created.json.id })).toMatchObject({ status: 200, turns: 1, json: { name: "Renamed Depot" } });
    const [{ variant }] = (await rows<{ variant: string }>(store.id, "select id as variant from product_variant limit 1")) as [{ variant: string }];
    const adjusted = await change(browser, "inventory/adjust", { variantId: variant, locationId: created.json.id, delta: 4, reason: "received" });
    expect(adjusted).toMatchObject({ status: 200, turns: 1, after: 0, json: { onHand: 4, reserved: 0, available: 4, restocked: false } });
    const refused = await change<RpcError>(browser, "inventory/adjust", { variantId: variant, locationId: created.json.id, delta: -5, reason: "damaged" });
    expect(refused).toMatchObject({ status: 400, turns: 1, json: { code: "BAD_REQUEST", message: "This adjustment would take on-hand below zero (on hand 4)." } });
  });

  it("orders.setStatus (mark_paid) and orders.cancel read, then change: two round trips each, also when nothing changes", async () => {
    const { s } = await orderShop(db);
    const browser = await sessionFor(db, s.ownerUserId, s.id);
    const place = async () => (await placeTestOrder(db, s)).order.id;

    const paid = await place();
    expect(await change(browser, "orders/setStatus", { orderId: paid, action: "mark_paid" })).toMatchObject({ status: 200, turns: 2, after: 0, json: { paymentStatus: "paid" } });
    expect(await change(browser, "orders/setStatus", { orderId: paid, action: "mark_paid" })).toMatchObject({ status: 200, turns: 2, json: { paymentStatus: "paid" } });

    // Every attempt failed: a manual attempt is added and captured, still in the second trip.
    const manual = await place();
    await withStore(db, s.id, async (tx) => {
      const { rows: attempts } = await tx.$client.query<{ id: string }>("select id from payment_attempt where order_id = $1", [manual]);
      for (const a of attempts) await applyPaymentStatus(tx, a.id, "failed", "gateway", { error: "declined" });
    });
    expect(await change(browser, "orders/setStatus", { orderId: manual, action: "mark_paid" })).toMatchObject({ status: 200, turns: 2, after: 0, json: { paymentStatus: "paid" } });
    expect(await rows(s.id, "select attempt, provider, status from payment_attempt where order_id = $1 order by attempt", [manual])).toEqual([
      { attempt: 1, provider: "local", status: "failed" },
      { attempt: 2, provider: "manual", status: "captured" },
    ]);

    const cancelled = await place();
    expect(await change(browser, "orders/cancel", { orderId: cancelled, reason: "Changed their mind" })).toMatchObject({ status: 200, turns: 2, after: 0, json: { status: "cancelled" } });
    expect(await change(browser, "orders/cancel", { orderId: cancelled })).toMatchObject({ status: 200, turns: 2, json: { status: "cancelled" } });
    // A refusal is decided on the reading: one trip.
    expect(await change<RpcError>(browser, "orders/cancel", { orderId: paid })).toMatchObject({ status: 409, turns: 1, json: { data: { reason: "refund_first" } } });
  });

  it("staff.invite, staff.setRole, staff.revokeInvitation and staff.remove: one round trip each", async () => {
    const { store, browser } = await owner();
    const invited = await change<{ invitation: { id: string }; acceptPath: string }>(browser, "staff/invite", { email: `rt-${crypto.randomUUID().slice(0, 8)}@example.test`, role: "staff" });
    expect(invited).toMatchObject({ status: 200, turns: 1, after: 0, json: { invitation: { role: "staff" }, acceptPath: expect.stringMatching(/^\/invite\//) } });
    expect(await change(browser, "staff/revokeInvitation", { invitationId: invited.json.invitation.id })).toMatchObject({ status: 200, turns: 1, after: 0, json: { revoked: true } });
    const { memberId } = await addMember(db, store, "staff");
    expect(await change(browser, "staff/setRole", { memberId, role: "admin" })).toMatchObject({ status: 200, turns: 1, after: 0, json: { id: memberId, role: "admin" } });
    expect(await change(browser, "staff/setRole", { memberId, role: "admin" })).toMatchObject({ status: 200, turns: 1, json: { id: memberId, role: "admin" } });
    expect(await change(browser, "staff/remove", { memberId })).toMatchObject({ status: 200, turns: 1, after: 0, json: { id: memberId, removed: true } });
    const last = await change<RpcError>(browser, "staff/setRole", { memberId: store.memberId, role: "staff" });
    expect(last).toMatchObject({ status: 409, turns: 1, json: { data: { reason: "last_owner" } } });
    expect(await rows(store.id, "select kind, payload from outbox_event where kind like 'staff.%' order by seq")).toEqual([
      { kind: "staff.invited", payload: { invitationId: invited.json.invitation.id, role: "staff" } },
      { kind: "staff.invitation_revoked", payload: { invitationId: invited.json.invitation.id } },
      { kind: "staff.role_changed", payload: { memberId, from: "staff", to: "admin" } },
      { kind: "staff.removed", payload: { memberId } },
    ]);
  });

  it("store.update: one round trip; two with a new storefront password (hashed only for an admitted caller)", async () => {
    const { browser } = await owner();
    expect(await change(browser, "store/update", { name: "Renamed Store" })).toMatchObject({ status: 200, turns: 1, after: 0, json: { name: "Renamed Store" } });
    expect(await change(browser, "store/update", { storefrontPassword: "a long enough secret" })).toMatchObject({ status: 200, turns: 2, after: 0, json: { storefrontPasswordEnabled: true } });
    expect(await change(browser, "store/update", { storefrontPassword: null })).toMatchObject({ status: 200, turns: 1, json: { storefrontPasswordEnabled: false } });
    expect(await change(browser, "store/update", {})).toMatchObject({ status: 200, turns: 1, json: { name: "Renamed Store" } });
  });

  it("tasks.done and outbox.retry: one round trip each", async () => {
    const { store, browser } = await owner();
    const [task] = await rows<{ id: string }>(store.id, "select id from merchant_task");
    expect(await change(browser, "tasks/done", { id: task!.id })).toMatchObject({ status: 200, turns: 1, after: 0, json: { id: task!.id, status: "done" } });
    expect(await change(browser, "tasks/done", { id: task!.id })).toMatchObject({ status: 200, turns: 1, json: { status: "done" } });
    await rows(store.id, "update outbox_event set dead_at = now(), attempts = 8 where id = $1", [store.outboxEventId]);
    const retried = await change(browser, "outbox/retry", { id: store.outboxEventId });
    expect(retried).toMatchObject({ status: 200, turns: 1, after: 0, json: { id: store.outboxEventId, kind: "store.created", status: "queued" } });
    expect(await change(browser, "outbox/retry", { id: store.outboxEventId })).toMatchObject({ status: 404, turns: 1 });
  });

  it("through /api/v1 each change logs its activity in its own unit: nothing after the answer", async () => {
    const { s } = await orderShop(db);
    const browser = await sessionFor(db, s.ownerUserId, s.id);
    const { token } = await createToken(browser, ["inventory:write", "orders:write"]);
    const [loc] = await rows<{ id: string }>(s.id, "select id from location limit 1");
    const adjusted = await traced((h) => api(token, "inventory/adjust", { variantId: s.variantId, locationId: loc!.id, delta: 1, reason: "recount" }, h));
    expect([adjusted.status, adjusted.trips.turns, adjusted.trips.after.turns]).toEqual([200, 1, 0]);
    const orderId = (await placeTestOrder(db, s)).order.id;
    const paid = await traced((h) => api(token, "orders/setStatus", { orderId, action: "mark_paid" }, h));
    expect([paid.status, paid.trips.turns, paid.trips.after.turns]).toEqual([200, 2, 0]);
    expect(await rows(s.id, "select procedure, kind, via from api_activity where kind = 'write' order by procedure")).toEqual([
      { procedure: "inventory.adjust", kind: "write", via: "token" },
      { procedure: "orders.setStatus", kind: "write", via: "token" },
    ]);
  });
});

describe("guards of these changes", () => {
  it("another store's location, task, dead event, member, invitation and order are not found, and stay as they were", async () => {
    const { browser } = await owner();
    const other = await makeStore(db);
    await rows(other.id, "update outbox_event set dead_at = now() where id = $1", [other.outboxEventId]);
    const [ids] = await rows<{ location: string; task: string; invitation: string; order: string }>(
      other.id,
      `select (select id from location limit 1) as location, (select id from merchant_task limit 1) as task,
         (select id from staff_invitation limit 1) as invitation, (select id from shop_order limit 1) as "order"`,
    );
    const snapshot = () =>
      rows(
        other.id,
        `select (select json_agg(l.name) from location l) as locations, (select json_agg(t.status) from merchant_task t) as tasks,
           (select dead_at is not null from outbox_event where id = $1) as dead, (select json_agg(m.role) from member m) as roles,
           (select json_agg(i.revoked_at) from staff_invitation i) as invitations,
           (select json_agg(json_build_array(o.status, o.payment_status)) from shop_order o) as orders,
           (select count(*)::int from outbox_event) as events`,
        [other.outboxEventId],
      );
    const before = await snapshot();
    const probes: [string, unknown][] = [
      ["locations/update", { id: ids!.location, name: "Not yours" }],
      ["tasks/done", { id: ids!.task }],
      ["outbox/retry", { id: other.outboxEventId }],
      ["staff/setRole", { memberId: other.memberId, role: "staff" }],
      ["staff/remove", { memberId: other.memberId }],
      ["staff/revokeInvitation", { invitationId: ids!.invitation }],
      ["orders/setStatus", { orderId: ids!.order, action: "mark_paid" }],
      ["orders/cancel", { orderId: ids!.order }],
    ];
    for (const [path, input] of probes) {
      const answered = await change<RpcError>(browser, path, input);
      expect(`${path} ${answered.status} ${answered.json.code} ${answered.turns}`).toBe(`${path} 404 NOT_FOUND 1`);
    }
    expect(await snapshot()).toEqual(before);
  });

  it("two Owners demoting each other at once: one wins, the other is refused, and the store keeps an Owner", async () => {
    const { store, browser } = await owner();
    const second = await addMember(db, store, "owner");
    const other = await sessionFor(db, second.userId, store.id);
    const answers = await Promise.all([
      change<RpcError>(browser, "staff/setRole", { memberId: second.memberId, role: "staff" }),
      change<RpcError>(other, "staff/setRole", { memberId: store.memberId, role: "staff" }),
    ]);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    // The loser is refused as the last Owner, or, when it arrives after the winner's commit, as no longer an Owner.
    const lost = answers.find((a) => a.status !== 200)!;
    expect(["last_owner", 403]).toContain(lost.status === 409 ? lost.json.data?.reason : lost.status);
    expect(await rows(store.id, "select count(*)::int as n from member where role = 'owner'")).toEqual([{ n: 1 }]);
    expect(await rows(store.id, "select count(*)::int as n from outbox_event where kind = 'staff.role_changed'")).toEqual([{ n: 1 }]);
  });

  it("a cancel racing 'Mark as paid': one goes first, the other is refused with the words it had before", async () => {
    const { s } = await orderShop(db);
    const browser = await sessionFor(db, s.ownerUserId, s.id);
    for (let round = 0; round < 3; round++) {
      const orderId = (await placeTestOrder(db, s)).order.id;
      const [cancel, paid] = await Promise.all([
        change<RpcError>(browser, "orders/cancel", { orderId }),
        change<RpcError>(browser, "orders/setStatus", { orderId, action: "mark_paid" }),
      ]);
      const [order] = await rows<{ status: string; payment_status: string }>(s.id, "select status, payment_status from shop_order where id = $1", [orderId]);
      if (cancel.status === 200) {
        expect([paid.status, paid.json.data?.reason, order]).toEqual([409, "order_cancelled", { status: "cancelled", payment_status: "unpaid" }]);
      } else {
        expect([cancel.status, cancel.json.data?.reason, paid.status, order]).toEqual([409, "refund_first", 200, { status: "open", payment_status: "paid" }]);
      }
    }
  });
});
