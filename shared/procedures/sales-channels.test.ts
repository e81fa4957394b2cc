import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sendStoreUnit } from "#shared/db/unit";
import { withStore } from "#shared/db/with-store";
import { providerServices } from "#shared/pipeline/providers";
import { KEY_GRACE_DAYS, openStoreKey, signingKeyPlan, ucpSigningFromEnv } from "#shared/ucp/store-keys";
import { agentOrder } from "../../test/agent-orders";
import { makeStore, testDb, type TestStore } from "../../test/harness";
import { addMember, callerFor, failureMessage, failureText, outboxPayloads } from "../../test/procedures";
import { makeShop } from "../../test/storefront";
import type { AgentThatBought, OrderUpdate, SalesChannels } from "./sales-channels";

/** Settings → Sales channels' procedures (issue 26 item 5) against real Postgres: the switch, the keys, the agents that bought. */
const db = testDb();
const services = providerServices(env);
const config = ucpSigningFromEnv(env as unknown as Record<string, unknown>);

type Settings = SalesChannels;

const owner = (s: TestStore) => callerFor(db, s.ownerUserId, s.id, services);
const rows = (s: TestStore, text: string) => withStore(db, s.id, (tx) => tx.$client.query(text)).then((r) => r.rows);
const keyRows = (s: TestStore) => rows(s, "select kid, retires_at, private_sealed, public_jwk from ucp_signing_key where retires_at is null or retires_at > now() order by created_at") as Promise<{ kid: string; retires_at: Date | null; private_sealed: string; public_jwk: Record<string, unknown> }[]>;

describe("salesChannels procedures", () => {
  it("a new store: agentic checkout off, no keys", async () => {
    const s = await makeStore(db);
    expect(await owner(s)("salesChannels.get", {})).toEqual({ agenticCheckout: false, keys: [] });
  });

  it("turning on makes the store's first key (its private half only sealed) with the switch; again, no second key", async () => {
    const s = await makeStore(db);
    const call = owner(s);
    const on = (await call("salesChannels.update", { agenticCheckout: true })) as Settings;
    expect(on.agenticCheckout).toBe(true);
    expect(on.keys).toEqual([{ kid: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), createdAt: expect.any(Date), retiresAt: null, signing: true }]);
    const [stored] = await keyRows(s);
    expect(stored!.kid).toBe(on.keys[0]!.kid);
    expect(stored!.public_jwk).not.toHaveProperty("d");
    expect(stored!.private_sealed).toMatch(/^v1\./);
    // The sealed half opens with the deployment's root for this store and kid.
    const signing = (await sendStoreUnit(db, s.id, signingKeyPlan))!;
    await expect(openStoreKey(config, s.id, signing)).resolves.toMatchObject({ kid: stored!.kid });
    expect(await rows(s, "select agentic_checkout from store")).toEqual([{ agentic_checkout: true }]);
    expect(await outboxPayloads(db, s.id, "store.sales_channels_updated")).toEqual([{ agenticCheckout: true, keyMade: stored!.kid }]);

    // On again: nothing changes. Off and on again: the key stays the one.
    expect(await call("salesChannels.update", { agenticCheckout: true })).toEqual(on);
    expect(((await call("salesChannels.update", { agenticCheckout: false })) as Settings).agenticCheckout).toBe(false);
    expect(((await call("salesChannels.update", { agenticCheckout: true })) as Settings).keys).toEqual(on.keys);
    expect((await keyRows(s)).map((k) => k.kid)).toEqual([stored!.kid]);
    expect(await outboxPayloads(db, s.id, "store.sales_channels_updated")).toEqual([{ agenticCheckout: true, keyMade: stored!.kid }, { agenticCheckout: false }, { agenticCheckout: true }]);
  });

  it("turn-ons and a rotation at once leave exactly one signing key", async () => {
    const s = await makeStore(db);
    const call = owner(s);
    await Promise.all([call("salesChannels.update", { agenticCheckout: true }), call("salesChannels.update", { agenticCheckout: true }), call("salesChannels.rotateKey", {})]);
    const live = await keyRows(s);
    expect(live.filter((k) => k.retires_at === null)).toHaveLength(1);
    expect(await rows(s, "select agentic_checkout from store")).toEqual([{ agentic_checkout: true }]);
  });

  it("turning off makes no key; without the signing root at the door, turning on changes nothing and says what is missing", async () => {
    const s = await makeStore(db);
    expect(await owner(s)("salesChannels.update", { agenticCheckout: false })).toEqual({ agenticCheckout: false, keys: [] });
    const bare = callerFor(db, s.ownerUserId, s.id, {});
    expect(await failureMessage(bare("salesChannels.update", { agenticCheckout: true }))).toMatch(/UCP_SIGNING_ROOT_SECRET/);
    expect(await rows(s, "select agentic_checkout from store")).toEqual([{ agentic_checkout: false }]);
    expect(await keyRows(s)).toEqual([]);
    expect(await failureText(owner(s)("salesChannels.update", {}))).toBe("BAD_REQUEST agenticCheckout");
    expect(await failureText(owner(s)("salesChannels.update", { agenticCheckout: "yes" }))).toBe("BAD_REQUEST agenticCheckout");
  });

  it("rotating: the new key signs, the replaced one stays published 7 days; a store with none gets its first", async () => {
    const s = await makeStore(db);
    const call = owner(s);
    const first = (await call("salesChannels.rotateKey", {})) as Settings;
    expect(first.keys).toHaveLength(1);
    // Rotating does not turn agentic checkout on.
    expect(first.agenticCheckout).toBe(false);
    const second = (await call("salesChannels.rotateKey", {})) as Settings;
    expect(second.keys.map((k) => [k.kid, k.signing])).toEqual([
      [expect.any(String), true],
      [first.keys[0]!.kid, false],
    ]);
    expect(second.keys[0]!.kid).not.toBe(first.keys[0]!.kid);
    const days = (second.keys[1]!.retiresAt!.getTime() - Date.now()) / 86_400_000;
    expect(days).toBeCloseTo(KEY_GRACE_DAYS, 1);
    expect((await sendStoreUnit(db, s.id, signingKeyPlan))?.kid).toBe(second.keys[0]!.kid);
    expect(await outboxPayloads(db, s.id, "store.ucp_key_rotated")).toEqual([{ kid: first.keys[0]!.kid }, { kid: second.keys[0]!.kid }]);
    // Once retired, a key leaves the list as it leaves the profile.
    await rows(s, `update ucp_signing_key set retires_at = now() - interval '1 second' where kid = '${first.keys[0]!.kid}'`);
    expect(((await call("salesChannels.get", {})) as Settings).keys.map((k) => k.kid)).toEqual([second.keys[0]!.kid]);
  });

  it("Staff may not read or change the switch and keys, but list the agents that bought (orders.read)", async () => {
    const s = await makeStore(db);
    const staff = await addMember(db, s, "staff");
    expect(await failureText(callerFor(db, staff.userId, s.id, services)("salesChannels.get", {}))).toBe("FORBIDDEN");
    expect(await callerFor(db, staff.userId, s.id, services)("salesChannels.agents", {})).toEqual({ items: [] });
    expect(await failureText(callerFor(db, staff.userId, s.id, services)("salesChannels.update", { agenticCheckout: true }))).toBe("FORBIDDEN");
    expect(await failureText(callerFor(db, staff.userId, s.id, services)("salesChannels.rotateKey", {}))).toBe("FORBIDDEN");
    expect(await rows(s, "select agentic_checkout from store")).toEqual([{ agentic_checkout: false }]);
  });

  it("the agents that bought: each platform with its orders, newest first; sessions without an order and other stores' agents left out", async () => {
    const s = await makeShop(db);
    const other = await makeShop(db);
    const day = (n: number) => new Date(Date.now() - n * 86_400_000);
    const a1 = await agentOrder(db, s, "https://agent.example.com/.well-known/ucp", day(3));
    const b1 = await agentOrder(db, s, "https://shop.assistant.example/profiles/ucp.json", day(2));
    const a2 = await agentOrder(db, s, "https://agent.example.com/.well-known/ucp", day(1));
    await agentOrder(db, other, "https://elsewhere.example/.well-known/ucp");
    // An agent's open session (no order) and a storefront order are not agents that bought.
    await rows(s, `insert into ucp_checkout_session (store_id, agent_profile) values ('${s.id}', 'https://browsing.example/.well-known/ucp')`);

    const { items } = (await owner(s)("salesChannels.agents", {})) as { items: AgentThatBought[] };
    expect(items.map((a) => [a.host, a.orderCount, a.orders.map((o) => o.number)])).toEqual([
      ["agent.example.com", 2, [a2.number, a1.number]],
      ["shop.assistant.example", 1, [b1.number]],
    ]);
    expect(items[0]).toMatchObject({ profileUrl: "https://agent.example.com/.well-known/ucp" });
    expect(items[0]!.orders[0]).toEqual({ id: a2.orderId, number: a2.number, placedAt: expect.any(Date), total: expect.any(Number), currency: "INR", paymentStatus: "unpaid", status: "open" });
    expect(((await owner(other)("salesChannels.agents", {})) as { items: AgentThatBought[] }).items.map((a) => a.host)).toEqual(["elsewhere.example"]);
  });

  describe("order updates to agents", () => {
    type Delivery = { status?: "pending" | "delivered" | "failed"; attempts?: number; kind?: string; lastStatus?: number | null; lastError?: string | null; at?: Date; claimed?: boolean };
    /** An order update as the consumers leave it (made here, so each state is had without the network). */
    const delivery = (shop: TestStore, orderId: string, d: Delivery = {}) =>
      withStore(db, shop.id, (tx) =>
        tx.$client.query<{ id: string }>(
          `insert into ucp_order_delivery (store_id, order_id, event_id, event_kind, event_created_at, status, attempts, last_status, last_error, last_attempt_at, next_attempt_at, claimed_at, created_at)
           values ($1, $2, gen_random_uuid(), $3, now(), $4, $5, $6, $7, case when $5 > 0 then now() end, case when $4 = 'pending' and $5 > 0 then now() + interval '2 minutes' end, case when $9 then now() end, coalesce($8, now()))
           returning id`,
          [shop.id, orderId, d.kind ?? "order.paid", d.status ?? "pending", d.attempts ?? 0, d.lastStatus ?? null, d.lastError ?? null, d.at ?? null, d.claimed ?? false],
        ),
      ).then((r) => r.rows[0]!.id);
    const list = (shop: TestStore, input: Record<string, unknown> = {}) => owner(shop)("salesChannels.orderUpdates", input) as Promise<{ items: OrderUpdate[]; total: number; page: number; pageSize: number }>;
    const outboxCount = async (shop: TestStore) => (await outboxPayloads(db, shop.id, "ucp.order_update_resend_requested")).length;

    it("lists this store's updates only, newest first, with the order, the agent's host and the last try; filtered and paged", async () => {
      const s = await makeShop(db);
      const other = await makeShop(db);
      const minutesAgo = (n: number) => new Date(Date.now() - n * 60_000);
      const a = await agentOrder(db, s, "https://agent.example.com/.well-known/ucp");
      const paid = await delivery(s, a.orderId, { status: "delivered", attempts: 1, lastStatus: 200, at: minutesAgo(10) });
      const shipped = await delivery(s, a.orderId, { kind: "order.fulfilled", status: "failed", attempts: 6, lastStatus: 503, lastError: "HTTP 503", at: minutesAgo(5) });
      const waiting = await delivery(s, a.orderId, { kind: "order.delivered", status: "pending", attempts: 2, lastError: "timed out", at: minutesAgo(1) });
      const theirs = await agentOrder(db, other, "https://elsewhere.example/.well-known/ucp");
      await delivery(other, theirs.orderId);

      // With makeStore's fixture row (test/harness.ts), made now: the newest.
      const all = await list(s);
      expect(all.total).toBe(4);
      expect(all.items.slice(1).map((u) => [u.id, u.eventKind, u.status, u.attempts])).toEqual([
        [waiting, "order.delivered", "pending", 2],
        [shipped, "order.fulfilled", "failed", 6],
        [paid, "order.paid", "delivered", 1],
      ]);
      expect(all.items[2]).toEqual({
        id: shipped,
        orderId: a.orderId,
        orderNumber: a.number,
        eventKind: "order.fulfilled",
        host: "agent.example.com",
        status: "failed",
        attempts: 6,
        lastStatus: 503,
        lastError: "HTTP 503",
        lastAttemptAt: expect.any(Date),
        nextAttemptAt: null,
        deliveredAt: null,
        createdAt: expect.any(Date),
      });
      expect(all.items[1]!.nextAttemptAt).toEqual(expect.any(Date));
      expect((await list(s, { status: "delivered" })).items.map((u) => u.id)).toEqual([paid]);
      const second = await list(s, { page: 2, pageSize: 2 });
      expect([second.total, second.items.map((u) => u.id)]).toEqual([4, [shipped, paid]]);
      const mine = new Set(all.items.map((u) => u.id));
      const theirList = await list(other);
      expect(theirList.items.filter((u) => mine.has(u.id))).toEqual([]);
      expect(theirList.items.filter((u) => u.orderId === theirs.orderId).map((u) => u.host)).toEqual(["elsewhere.example"]);
      expect(await failureText(list(s, { status: "lost" }))).toBe("BAD_REQUEST status");
    });

    it("resend: a failed update becomes pending with no tries and one outbox request; again at once does nothing; one being tried is a conflict", async () => {
      const s = await makeShop(db);
      const a = await agentOrder(db, s, "https://agent.example.com/.well-known/ucp");
      const failed = await delivery(s, a.orderId, { status: "failed", attempts: 6, lastStatus: 500, lastError: "HTTP 500" });
      const resent = (await owner(s)("salesChannels.resendOrderUpdate", { deliveryId: failed })) as OrderUpdate;
      expect(resent).toMatchObject({ id: failed, status: "pending", attempts: 0, orderNumber: a.number, host: "agent.example.com", nextAttemptAt: expect.any(Date) });
      expect(await outboxPayloads(db, s.id, "ucp.order_update_resend_requested")).toEqual([{ deliveryId: failed, orderId: a.orderId }]);
      // Pending and not tried yet: its try is queued already; nothing more.
      expect(await owner(s)("salesChannels.resendOrderUpdate", { deliveryId: failed })).toMatchObject({ id: failed, status: "pending", attempts: 0 });
      expect(await outboxCount(s)).toBe(1);

      const delivered = await delivery(s, a.orderId, { kind: "order.fulfilled", status: "delivered", attempts: 1, lastStatus: 200 });
      expect(await owner(s)("salesChannels.resendOrderUpdate", { deliveryId: delivered })).toMatchObject({ status: "pending", attempts: 0, deliveredAt: null });
      expect(await outboxCount(s)).toBe(2);

      const trying = await delivery(s, a.orderId, { kind: "order.delivered", status: "pending", attempts: 2 });
      const claimed = await delivery(s, a.orderId, { kind: "order.cancelled", status: "pending", attempts: 0, claimed: true });
      for (const id of [trying, claimed]) {
        expect(await failureMessage(owner(s)("salesChannels.resendOrderUpdate", { deliveryId: id }))).toMatch(/being tried now/);
      }
      expect(await outboxCount(s)).toBe(2);
      expect((await list(s, { status: "pending" })).items.find((u) => u.id === trying)).toMatchObject({ attempts: 2 });
    });

    it("resend: another store's update or an unknown id is not found, a bad id is refused, Staff may not", async () => {
      const s = await makeShop(db);
      const other = await makeShop(db);
      const theirs = await agentOrder(db, other, "https://elsewhere.example/.well-known/ucp");
      const failed = await delivery(other, theirs.orderId, { status: "failed", attempts: 6 });
      expect(await failureText(owner(s)("salesChannels.resendOrderUpdate", { deliveryId: failed }))).toBe("NOT_FOUND");
      expect(await failureText(owner(s)("salesChannels.resendOrderUpdate", { deliveryId: crypto.randomUUID() }))).toBe("NOT_FOUND");
      expect(await failureText(owner(s)("salesChannels.resendOrderUpdate", { deliveryId: "42" }))).toBe("BAD_REQUEST deliveryId");
      expect(await failureText(owner(s)("salesChannels.resendOrderUpdate", {}))).toBe("BAD_REQUEST deliveryId");
      const staff = await addMember(db, other, "staff");
      expect(await failureText(callerFor(db, staff.userId, other.id, services)("salesChannels.resendOrderUpdate", { deliveryId: failed }))).toBe("FORBIDDEN");
      expect(await failureText(callerFor(db, staff.userId, other.id, services)("salesChannels.orderUpdates", {}))).toBe("FORBIDDEN");
      // Nothing changed in the other store.
      expect((await list(other)).items.filter((u) => u.orderId === theirs.orderId)).toEqual([expect.objectContaining({ id: failed, status: "failed", attempts: 6 })]);
      expect(await outboxCount(other)).toBe(0);
    });
  });
});
