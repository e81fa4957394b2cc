import { describe, expect, it, vi } from "vitest";
import { withStore } from "#shared/db/with-store";
import { agentOrder } from "../../../test/agent-orders";
import { page, postForm, sessionFor } from "../../../test/admin";
import { call } from "../../../test/call";
import type { TestStore } from "../../../test/harness";
import { testDb } from "../../../test/harness";
import { addMember } from "../../../test/procedures";
import { makeShop } from "../../../test/storefront";
import storefront from "../../storefront/index";

/** Settings → Sales channels through the real admin routes (issue 26 item 5), forms without JavaScript; the storefront's profile follows the switch. */
const db = testDb();
const PATH = "/settings/sales-channels";
const ip = () => `198.18.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250) + 1}`;
const profile = async (s: TestStore) => {
  const res = await call(storefront, "http://storefront.test/.well-known/ucp", { headers: { host: s.hostname, "cf-connecting-ip": ip() } });
  return { status: res.status, body: (await res.json()) as { keys?: { kid: string }[] } };
};
const liveKids = (s: TestStore) =>
  withStore(db, s.id, (tx) => tx.$client.query<{ kid: string }>("select kid from ucp_signing_key where retires_at is null or retires_at > now() order by created_at desc")).then((r) => r.rows.map((k) => k.kid));

describe("Settings → Sales channels", () => {
  it("turning agentic checkout on makes the first key and opens the profile; rotating lists both keys; off closes it", async () => {
    const s = await makeShop(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    expect(await (await page(owner, "/settings")).text()).toContain('<a href="/settings/sales-channels">sales channels (AI agents)</a>');
    const before = await (await page(owner, PATH)).text();
    expect(before).toContain('data-agentic="off"');
    expect(before).toContain("No signing key yet");
    expect(before).toContain(`<code>https://${s.hostname}/.well-known/ucp</code>`);
    expect(before).toContain("No AI agent has placed an order yet.");
    expect((await profile(s)).status).toBe(404);

    const on = await postForm(owner, PATH, { csrf: owner.csrf, action: "on" });
    expect(on.status).toBe(303);
    expect(on.headers.get("location")).toBe(`${PATH}?done=on`);
    const [kid] = await liveKids(s);
    const shown = await (await page(owner, `${PATH}?done=on`)).text();
    expect(shown).toContain("Agentic checkout is on");
    expect(shown).toContain('data-agentic="on"');
    expect(shown).toContain(`<code>${kid}</code>`);
    expect(shown).toContain("Signs now");
    const published = await profile(s);
    expect(published.status).toBe(200);
    expect(published.body.keys!.map((k) => k.kid)).toEqual([kid]);

    const rotated = await postForm(owner, PATH, { csrf: owner.csrf, action: "rotate" });
    expect(rotated.headers.get("location")).toBe(`${PATH}?done=rotated`);
    const kids = await liveKids(s);
    expect(kids).toHaveLength(2);
    expect(kids[1]).toBe(kid);
    const after = await (await page(owner, `${PATH}?done=rotated`)).text();
    expect(after).toContain("Replaced; published until");
    expect((await profile(s)).body.keys!.map((k) => k.kid)).toEqual(kids);

    expect((await postForm(owner, PATH, { csrf: owner.csrf, action: "off" })).headers.get("location")).toBe(`${PATH}?done=off`);
    expect((await profile(s)).status).toBe(404);
  });

  it("says when agents are refused by the storefront password, and how to get a key when on without one", async () => {
    const s = await makeShop(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    await withStore(db, s.id, (tx) => tx.$client.query("update store set agentic_checkout = true, storefront_password_hash = 'x' where id = $1", [s.id]));
    const html = await (await page(owner, PATH)).text();
    expect(html).toContain("The storefront password is on: agents are refused (403)");
    expect(html).toContain("No signing key yet: rotate to make one");
  });

  it("a post without the session's CSRF token, or an unknown action, changes nothing", async () => {
    const s = await makeShop(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    expect((await postForm(owner, PATH, { csrf: "wrong", action: "on" })).status).toBe(403);
    expect((await postForm(owner, PATH, { action: "rotate" })).status).toBe(403);
    const unknown = await postForm(owner, PATH, { csrf: owner.csrf, action: "everything" });
    expect(unknown.status).toBe(400);
    expect(await unknown.text()).toContain("Choose to turn agentic checkout on or off");
    expect(await liveKids(s)).toEqual([]);
    expect((await profile(s)).status).toBe(404);
  });

  it("lists the agents that bought with their orders, each linking to the order", async () => {
    const s = await makeShop(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const order = await agentOrder(db, s, "https://agent.example.com/.well-known/ucp");
    const html = await (await page(owner, PATH)).text();
    expect(html).toContain("<h3 id=\"agent-0\">agent.example.com</h3>");
    expect(html).toContain("<code>https://agent.example.com/.well-known/ucp</code> · 1 order");
    expect(html).toContain(`<a href="/orders/${order.orderId}">#${order.number}</a>`);
    expect(html).toContain('<a href="/orders?channel=ucp">All orders from AI agents</a>');
  });

  it("lists the order updates to agents with what each status means; Send again queues a failed one (CSRF-protected); another store's is not found", async () => {
    const s = await makeShop(db);
    const other = await makeShop(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const order = await agentOrder(db, s, "https://agent.example.com/.well-known/ucp");
    const theirs = await agentOrder(db, other, "https://elsewhere.example/.well-known/ucp");
    const add = (shop: TestStore, orderId: string, kind: string, status: string, attempts: number, lastStatus: number | null) =>
      withStore(db, shop.id, (tx) =>
        tx.$client.query<{ id: string }>(
          "insert into ucp_order_delivery (store_id, order_id, event_id, event_kind, event_created_at, status, attempts, last_status, last_attempt_at) values ($1, $2, gen_random_uuid(), $3, now(), $4, $5, $6, now()) returning id",
          [shop.id, orderId, kind, status, attempts, lastStatus],
        ),
      ).then((r) => r.rows[0]!.id);
    const failed = await add(s, order.orderId, "order.fulfilled", "failed", 6, 503);
    const delivered = await add(s, order.orderId, "order.paid", "delivered", 1, 200);
    const elsewhere = await add(other, theirs.orderId, "order.paid", "failed", 6, 500);

    const html = await (await page(owner, PATH)).text();
    expect(html).toContain('<h2 id="order-updates-heading">Order updates to agents</h2>');
    expect(html).toContain("<strong>Failed</strong>: no try is left; Send again sends the order as it is now.");
    expect(html).toContain("up to 6 tries over about 7 hours");
    const rowOf = (id: string) => html.slice(html.indexOf(`data-update="${id}"`), html.indexOf("</tr>", html.indexOf(`data-update="${id}"`)));
    const failedRow = rowOf(failed);
    expect(failedRow).toContain(`<a href="/orders/${order.orderId}">#${order.number}</a>`);
    expect(failedRow).toContain("Shipped");
    expect(failedRow).toContain("agent.example.com");
    expect(failedRow).toContain("HTTP 503");
    expect(failedRow).toContain(`name="deliveryId" value="${failed}"`);
    expect(failedRow).toContain(`aria-label="Send the shipped update of order #${order.number} again"`);
    expect(failedRow).toContain(">Send again</button>");
    expect(rowOf(delivered)).not.toContain("Send again");
    expect(html).not.toContain(elsewhere);
    // Filtered to the failed ones: the delivered one is not listed.
    const onlyFailed = await (await page(owner, `${PATH}?updates_status=failed`)).text();
    expect(onlyFailed).toContain(`data-update="${failed}"`);
    expect(onlyFailed).not.toContain(`data-update="${delivered}"`);
    expect(onlyFailed).toContain('<a href="/settings/sales-channels?updates_status=failed#order-updates" aria-current="true">Failed</a>');

    const state = (shop: TestStore, id: string) =>
      withStore(db, shop.id, (tx) => tx.$client.query("select status, attempts from ucp_order_delivery where id = $1", [id])).then((r) => r.rows[0]);
    expect((await postForm(owner, PATH, { csrf: "wrong", action: "resend", deliveryId: failed })).status).toBe(403);
    expect(await state(s, failed)).toEqual({ status: "failed", attempts: 6 });

    const sent = await postForm(owner, PATH, { csrf: owner.csrf, action: "resend", deliveryId: failed });
    expect(sent.status).toBe(303);
    expect(sent.headers.get("location")).toBe(`${PATH}?done=resent#order-updates`);
    expect(await state(s, failed)).toEqual({ status: "pending", attempts: 0 });
    const shown = await (await page(owner, `${PATH}?done=resent`)).text();
    expect(shown).toContain("The order update is queued again");
    expect(shown.slice(shown.indexOf(`data-update="${failed}"`)).slice(0, 600)).toContain("Pending");

    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      expect((await postForm(owner, PATH, { csrf: owner.csrf, action: "resend", deliveryId: elsewhere })).status).toBe(404);
      expect((await postForm(owner, PATH, { csrf: owner.csrf, action: "resend", deliveryId: "not-an-id" })).status).toBe(400);
    } finally {
      warn.mockRestore();
    }
    expect(await state(other, elsewhere)).toEqual({ status: "failed", attempts: 6 });
  });

  it("Staff get the 403 page and cannot post", async () => {
    const s = await makeShop(db);
    const staff = await addMember(db, s, "staff");
    const browser = await sessionFor(db, staff.userId, s.id);
    // The refused page and post are reported (a warning line each): kept off the console here.
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const refused = await page(browser, PATH);
      expect(refused.status).toBe(403);
      expect(await refused.text()).toContain("Your role does not allow viewing settings (settings.read).");
      expect((await postForm(browser, PATH, { csrf: browser.csrf, action: "on" })).status).toBe(403);
    } finally {
      warn.mockRestore();
    }
    expect(await liveKids(s)).toEqual([]);
  });
});
