import { Hono } from "hono";
import type { FC } from "hono/jsx";
import { AGENTS_SHOWN, getSalesChannels, listAgentsThatBought, ORDERS_PER_AGENT, rotateSalesChannelKey, updateSalesChannels, type AgentThatBought, type SalesChannels } from "#shared/procedures/sales-channels";
import { currentStore } from "#shared/procedures/store";
import { pageCall, type AdminContext, type AdminEnv } from "../context";
import { call, optional, storePage } from "./chrome";
import { doneNotice, handleFormPost, Notice, type FormNotice } from "./form-post";
import { AdminPage } from "./layout";
import { amountText } from "./money";
import { IstTime, OrderCells, StatusBadge } from "./order-words";
import { Section, Table } from "./parts";

/**
 * Settings → Sales channels (`/settings/sales-channels`; issue 26 item 5, docs/ucp.md): agentic checkout on
 * or off (salesChannels.update: turning on makes the store's first UCP signing key), the store's signing keys
 * and their rotation (salesChannels.rotateKey), and the AI agent platforms that bought, each with its newest
 * orders (salesChannels.agents, orders.read). Read in one round trip with the store's domains, where agents
 * find the profile. Staff (no settings.read) get the 403 page.
 */
export const salesChannelsPage = new Hono<AdminEnv>();

const PATH = "/settings/sales-channels";

const DONE = {
  on: "Agentic checkout is on: AI agents can find this store's profile and buy through checkout sessions.",
  off: "Agentic checkout is off: the profile and the checkout sessions answer 404.",
  rotated: "A new signing key signs from now on; the replaced key stays published for 7 days.",
};

const KeysTable: FC<{ channels: SalesChannels }> = ({ channels: { keys, agenticCheckout } }) =>
  keys.length === 0 ? (
    <p class="muted">{agenticCheckout ? "No signing key yet: rotate to make one, so agents can check what the store signs." : "No signing key yet: turning agentic checkout on makes one."}</p>
  ) : (
    <Table columns={[{ label: "Key ID (kid)" }, { label: "Created" }, { label: "State" }]}>
      {keys.map((k) => (
        <tr data-kid={k.kid}>
          <td>
            <code>{k.kid}</code>
          </td>
          <td>
            <IstTime at={k.createdAt} />
          </td>
          <td>
            {k.signing ? (
              "Signs now"
            ) : (
              <>
                Replaced; published until <IstTime at={k.retiresAt} />
              </>
            )}
          </td>
        </tr>
      ))}
    </Table>
  );

const AgentCard: FC<{ agent: AgentThatBought; n: number }> = ({ agent, n }) => (
  <section class="card" aria-labelledby={`agent-${n}`}>
    <h3 id={`agent-${n}`}>{agent.host}</h3>
    <p class="muted">
      Profile: <code>{agent.profileUrl}</code> · {agent.orderCount === 1 ? "1 order" : `${agent.orderCount} orders`}
      {agent.orderCount > agent.orders.length ? ` (the newest ${agent.orders.length} shown)` : ""}
    </p>
    <Table columns={[{ label: "Order" }, { label: "Placed" }, { label: "Total", num: true }, { label: "Payment" }]}>
      {agent.orders.map((o) => (
        <tr>
          <OrderCells order={o} />
          <td class="num">{amountText(o.total, o.currency)}</td>
          <td>
            <StatusBadge value={o.paymentStatus} label="Payment status" />
          </td>
        </tr>
      ))}
    </Table>
  </section>
);

async function render(c: AdminContext, notice?: FormNotice, status: 200 | 400 | 409 = 200) {
  const { chrome, me, read } = await storePage(c, { channels: call(getSalesChannels, {}), store: call(currentStore, {}), agents: optional(listAgentsThatBought, {}) });
  const channels = read.channels();
  const store = read.store();
  const domains = store.domains.filter((d) => d.status === "verified");
  const agents = read.agents();
  const canWrite = me.permissions.includes("settings.write");
  return c.html(
    <AdminPage title="Sales channels" chrome={chrome}>
      <p>
        <a href="/settings">← Settings</a>
      </p>
      <h1>Sales channels</h1>
      <Notice notice={notice} />
      <Section id="agentic-checkout" title="AI agents (UCP)">
        <p>
          Shoppers' AI agents can find this store and buy through the Universal Commerce Protocol: they read the store's profile, create a checkout
          session, and hand the buyer the store's own payment page. Orders they place are marked <strong>AI agent (UCP)</strong> on Orders.
        </p>
        <p data-agentic={channels.agenticCheckout ? "on" : "off"}>
          <strong>{channels.agenticCheckout ? "On" : "Off"}</strong>
          {channels.agenticCheckout ? ": agents can buy from this store." : ": the store's profile and checkout sessions answer 404."}
        </p>
        {channels.agenticCheckout && store.storefrontPasswordEnabled ? (
          <p class="alert" role="alert">
            The storefront password is on: agents are refused (403) until it is turned off in <a href="/settings">Settings</a>.
          </p>
        ) : null}
        {domains.length > 0 ? (
          <p class="muted">
            The profile is at{" "}
            {domains.map((d, i) => (
              <>
                {i > 0 ? ", " : ""}
                <code>{`https://${d.hostname}/.well-known/ucp`}</code>
              </>
            ))}
            .
          </p>
        ) : null}
        {canWrite ? (
          <form method="post" action={PATH}>
            <input type="hidden" name="csrf" value={chrome.csrf} />
            {channels.agenticCheckout ? (
              <button type="submit" name="action" value="off" class="secondary">
                Turn agentic checkout off
              </button>
            ) : (
              <button type="submit" name="action" value="on">
                Turn agentic checkout on
              </button>
            )}
          </form>
        ) : null}
      </Section>
      <Section id="signing-keys" title="Signing keys">
        <p class="muted">
          The store signs what it sends agents (order updates) with its key; agents check the signature with the public half published in the profile.
          Rotate the key if you think it was exposed: the replaced key stays published 7 days, so what it signed still verifies.
        </p>
        <KeysTable channels={channels} />
        {canWrite ? (
          <form method="post" action={PATH}>
            <input type="hidden" name="csrf" value={chrome.csrf} />
            <button type="submit" name="action" value="rotate" class="secondary">
              Rotate signing key
            </button>
          </form>
        ) : null}
      </Section>
      {agents ? (
        <Section id="agents" title="Agents that bought">
          {agents.items.length === 0 ? (
            <p class="muted">No AI agent has placed an order yet.</p>
          ) : (
            <>
              <p class="muted">
                The agent platforms whose checkout sessions placed orders, the most recent first (up to {AGENTS_SHOWN}, each with its newest {ORDERS_PER_AGENT}{" "}
                orders). <a href="/orders?channel=ucp">All orders from AI agents</a>
              </p>
              {agents.items.map((agent, n) => (
                <AgentCard agent={agent} n={n} />
              ))}
            </>
          )}
        </Section>
      ) : null}
    </AdminPage>,
    status,
  );
}

// GET /settings/sales-channels (settings.read; without it the 403 page).
salesChannelsPage.get(PATH, (c) => render(c, doneNotice(c, DONE)));

// POST /settings/sales-channels: turn agentic checkout on or off, or rotate the signing key (session CSRF token
// required; settings.write, checked by the procedures).
salesChannelsPage.post(PATH, (c) =>
  handleFormPost(
    c,
    render,
    (action) => `${PATH}?done=${action === "rotate" ? "rotated" : action}`,
    {
      on: (signedIn) => pageCall(c, signedIn, updateSalesChannels, { agenticCheckout: true }, ["BAD_REQUEST", "CONFLICT"]),
      off: (signedIn) => pageCall(c, signedIn, updateSalesChannels, { agenticCheckout: false }, ["BAD_REQUEST", "CONFLICT"]),
      rotate: (signedIn) => pageCall(c, signedIn, rotateSalesChannelKey, {}, ["CONFLICT"]),
    },
    "Choose to turn agentic checkout on or off, or to rotate the signing key.",
  ),
);
