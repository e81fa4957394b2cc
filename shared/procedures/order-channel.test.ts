import { describe, expect, it } from "vitest";
import { agentOrder } from "../../test/agent-orders";
import { testDb } from "../../test/harness";
import { placeTestOrder } from "../../test/orders";
import { callerFor, failureText } from "../../test/procedures";
import { makeShop } from "../../test/storefront";

/** The order's channel in the API (issue 26 item 5): orders.list shows and filters it, orders.get names the agent platform too. */
const db = testDb();

type Listed = { items: { number: number; channel: string }[]; total: number };

describe("an order's channel", () => {
  it("orders.list answers each order's channel and filters by it; orders.get names the agent platform of a UCP order", async () => {
    const s = await makeShop(db);
    const call = callerFor(db, s.ownerUserId, s.id);
    const web = await placeTestOrder(db, s);
    const agent = await agentOrder(db, s, "https://agent.example.com/.well-known/ucp");

    const all = (await call("orders.list", { pageSize: 50 })) as Listed;
    const channelOf = (n: number) => all.items.find((o) => o.number === n)?.channel;
    expect([channelOf(web.order.number), channelOf(agent.number)]).toEqual(["online_store", "ucp"]);
    const ucp = (await call("orders.list", { channel: "ucp" })) as Listed;
    expect(ucp.items.map((o) => o.number)).toEqual([agent.number]);
    expect(ucp.total).toBe(1);
    expect(((await call("orders.list", { channel: "online_store" })) as Listed).items.map((o) => o.number)).toContain(web.order.number);
    expect(((await call("orders.list", { channel: "online_store" })) as Listed).items.map((o) => o.number)).not.toContain(agent.number);
    // With a search too, the channel still filters.
    expect(((await call("orders.list", { channel: "ucp", query: `#${web.order.number}` })) as Listed).items).toEqual([]);
    expect(await failureText(call("orders.list", { channel: "telephone" }))).toBe("BAD_REQUEST channel");

    expect(await call("orders.get", { id: agent.orderId })).toMatchObject({ channel: "ucp", agent: { profileUrl: "https://agent.example.com/.well-known/ucp", host: "agent.example.com" } });
    expect(await call("orders.get", { id: web.order.id })).toMatchObject({ channel: "online_store", agent: null });
    // A change's answer (the order as it now is) carries it too.
    expect(await call("orders.cancel", { orderId: agent.orderId })).toMatchObject({ channel: "ucp", status: "cancelled" });
  });

  it("another store's agent sessions and orders stay out", async () => {
    const [a, b] = [await makeShop(db), await makeShop(db)];
    await agentOrder(db, b, "https://other.example/.well-known/ucp");
    const listed = (await callerFor(db, a.ownerUserId, a.id)("orders.list", { channel: "ucp" })) as Listed;
    expect(listed.items).toEqual([]);
  });
});
