import { describe, expect, it } from "vitest";
import { agentOrder } from "../../../test/agent-orders";
import { page, sessionFor } from "../../../test/admin";
import { testDb } from "../../../test/harness";
import { placeTestOrder } from "../../../test/orders";
import { makeShop } from "../../../test/storefront";

/** Orders show their channel (issue 26 item 5): a column and a filter on the list, a badge and the agent platform on the order's page. */
const db = testDb();
const numbers = (html: string) => [...html.matchAll(/<tr data-order="(\d+)"/g)].map((m) => Number(m[1]));
const rowOf = (html: string, number: number) => {
  const start = html.indexOf(`<tr data-order="${number}"`);
  return html.slice(start, html.indexOf("</tr>", start));
};

describe("an order's channel in the admin", () => {
  it("the list marks an agent's order AI agent (UCP) and filters by channel; the order's page names the agent platform", async () => {
    const s = await makeShop(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const web = await placeTestOrder(db, s);
    const agent = await agentOrder(db, s, "https://agent.example.com/.well-known/ucp");

    const list = await (await page(owner, "/orders")).text();
    expect(list).toContain('<th scope="col">Channel</th>');
    expect(rowOf(list, agent.number)).toMatch(/data-status="ucp"><span class="sr-only">Channel: <\/span>AI agent \(UCP\)<\/span>/);
    expect(rowOf(list, web.order.number)).toMatch(/data-status="online_store"><span class="sr-only">Channel: <\/span>Online store<\/span>/);
    expect(list).toContain('<select id="f-channel" name="channel">');
    expect(list).toContain('<option value="ucp">AI agent (UCP)</option>');

    const filtered = await (await page(owner, "/orders?channel=ucp")).text();
    expect(numbers(filtered)).toEqual([agent.number]);
    expect(filtered).toContain('<option value="ucp" selected="">AI agent (UCP)</option>');
    const refused = await page(owner, "/orders?channel=telephone");
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('id="channel-error"');

    const detail = await (await page(owner, `/orders/${agent.orderId}`)).text();
    expect(detail).toContain('data-status="ucp"');
    expect(detail).toContain('placed by an AI agent of <span data-agent="agent.example.com" title="https://agent.example.com/.well-known/ucp">agent.example.com</span>');
    const own = await (await page(owner, `/orders/${web.order.id}`)).text();
    expect(own).not.toContain('data-status="ucp"');
    expect(own).toContain(" · Online store");
  });
});
