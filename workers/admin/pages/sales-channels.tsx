import { Hono } from "hono";
import type { FC } from "hono/jsx";
import { MAX_ATTEMPTS, RETRY_DELAYS_SECONDS } from "#shared/apps/backoff";
import { APP_DELIVERY_STATUSES, type AppDeliveryStatus } from "#shared/db/schema";
import { hasNextPage, totalText, type Paged } from "#shared/procedures/paging";
import {
  AGENTS_SHOWN,
  getSalesChannels,
  listAgentsThatBought,
  listOrderUpdates,
  ORDERS_PER_AGENT,
  resendOrderUpdate,
  rotateSalesChannelKey,
  updateSalesChannels,
  type AgentThatBought,
  type OrderUpdate,
  type SalesChannels,
} from "#shared/procedures/sales-channels";
import { currentStore } from "#shared/procedures/store";
import { pageCall, type AdminContext, type AdminEnv } from "../context";
import { call, optional, storePage } from "./chrome";
import { DeliveryStateCells } from "./app-deliveries";
import { doneNotice, handleFormPost, Notice, RowAction, type FormNotice } from "./form-post";
import { AdminPage } from "./layout";
import { amountText } from "./money";
import { IstTime, OrderCells, StatusBadge } from "./order-words";
import { Section, Table } from "./parts";

/**
 * Settings → Sales channels (`/settings/sales-channels`; issue 26 item 5, docs/ucp.md): agentic checkout on
 * or off (salesChannels.update: turning on makes the store's first UCP signing key), the store's signing keys
 * and their rotation (salesChannels.rotateKey), and the AI agent platforms that bought, each with its newest
 * orders (salesChannels.agents, orders.read), and the order updates sent to agents, newest first, with Send again
 * for a failed one (salesChannels.orderUpdates, salesChannels.resendOrderUpdate). Read in one round trip with the
 * store's domains, where agents find the profile. Staff (no settings.read) get the 403 page.
 */
export const salesChannelsPage = new Hono<AdminEnv>();

const PATH = "/settings/sales-channels";

const DONE = {
  on: "Agentic checkout is on: AI agents can find this store's profile and buy through checkout sessions.",
  off: "Agentic checkout is off: the profile and the checkout sessions answer 404.",
  rotated: "A new signing key signs from now on; the replaced key stays published for 7 days.",
  resent: "The order update is queued again: it is sent within a minute with the order as it now stands.",
};

/** Order updates a page of the log shows. */
const UPDATES_PAGE_SIZE = 20;
/** How long the automatic tries of one update last, in hours (the apps' delays). */
const RETRY_HOURS = Math.round(RETRY_DELAYS_SECONDS.reduce((a, b) => a + b, 0) / 3600);

const EVENT: Readonly<Record<OrderUpdate["eventKind"], string>> = {
  "order.paid": "Paid",
  "order.paid_late": "Paid (after it closed)",
  "order.fulfilled": "Shipped",
  "order.delivered": "Delivered",
  "order.cancelled": "Cancelled",
  "order.refunded": "Refunded",
};

type UpdateStatus = AppDeliveryStatus;
const UPDATE_STATUSES = APP_DELIVERY_STATUSES;
const UPDATE_LABEL: Record<UpdateStatus, string> = { pending: "Pending", delivered: "Delivered", failed: "Failed" };
const isUpdateStatus = (s: string | undefined): s is UpdateStatus => (UPDATE_STATUSES as readonly string[]).includes(s ?? "");

const OrderUpdates: FC<{ updates: Paged<OrderUpdate>; filter: UpdateStatus | undefined; pageNo: number; csrf: string; canWrite: boolean }> = ({
  updates,
  filter,
  pageNo,
  csrf,
  canWrite,
}) => {
  const link = (page: number) => `${PATH}?${filter ? `updates_status=${filter}&` : ""}updates=${page}#order-updates`;
  return (
    <Section id="order-updates" title="Order updates to agents">
      <p class="muted">
        When an order an agent placed is paid, shipped, delivered, cancelled or refunded, the store sends the agent's platform the order as it then
        stands, signed with the store's key. <strong>Pending</strong>: waiting for its next try (a failed try is tried again automatically, up to {MAX_ATTEMPTS}{" "}
        tries over about {RETRY_HOURS} hours). <strong>Delivered</strong>: the platform accepted it. <strong>Failed</strong>: no try is left; Send again sends the
        order as it is now.
      </p>
      <nav class="filters" aria-label="Filter order updates">
        <a href={`${PATH}#order-updates`} aria-current={filter ? undefined : "true"}>
          All
        </a>
        {UPDATE_STATUSES.map((st) => (
          <a href={`${PATH}?updates_status=${st}#order-updates`} aria-current={filter === st ? "true" : undefined}>
            {UPDATE_LABEL[st]}
          </a>
        ))}
      </nav>
      {updates.items.length === 0 ? (
        <p class="muted">{filter ? `No ${UPDATE_LABEL[filter].toLowerCase()} order updates.` : "No order updates sent to agents yet."}</p>
      ) : (
        <>
          <Table
            columns={[
              { label: "Order" },
              { label: "Event" },
              { label: "Agent" },
              { label: "Status" },
              { label: "Tries", num: true },
              { label: "Last answer" },
              { label: "Last try" },
              { label: "Next try" },
              ...(canWrite ? [{ label: "Actions" }] : []),
            ]}
          >
            {updates.items.map((u) => (
              <tr data-update={u.id}>
                <td>
                  <a href={`/orders/${u.orderId}`}>#{u.orderNumber}</a>
                </td>
                <td>{EVENT[u.eventKind]}</td>
                <td>{u.host ?? <span class="muted">—</span>}</td>
                <DeliveryStateCells d={u} tries={u.attempts} />
                {canWrite ? (
                  <td>
                    {u.status === "failed" ? (
                      <RowAction
                        to={PATH}
                        csrf={csrf}
                        fields={{ deliveryId: u.id }}
                        action="resend"
                        label="Send again"
                        ariaLabel={`Send the ${EVENT[u.eventKind].toLowerCase()} update of order #${u.orderNumber} again`}
                        class="secondary small"
                      />
                    ) : null}
                  </td>
                ) : null}
              </tr>
            ))}
          </Table>
          <p class="pager">
            {pageNo > 1 ? <a href={link(pageNo - 1)}>← Newer</a> : <span />}
            <span class="muted">{`${totalText(updates)} order updates`}</span>
            {hasNextPage(updates) ? <a href={link(pageNo + 1)}>Older →</a> : <span />}
          </p>
        </>
      )}
    </Section>
  );
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
  const pageNo = Math.max(1, Math.min(100_000, Number.parseInt(c.req.query("updates") ?? "1", 10) || 1));
  const filter = isUpdateStatus(c.req.query("updates_status")) ? (c.req.query("updates_status") as UpdateStatus) : undefined;
  const { chrome, me, read } = await storePage(c, {
    channels: call(getSalesChannels, {}),
    store: call(currentStore, {}),
    agents: optional(listAgentsThatBought, {}),
    updates: call(listOrderUpdates, { page: pageNo, pageSize: UPDATES_PAGE_SIZE, ...(filter ? { status: filter } : {}) }),
  });
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
      <OrderUpdates updates={read.updates()} filter={filter} pageNo={pageNo} csrf={chrome.csrf} canWrite={canWrite} />
    </AdminPage>,
    status,
  );
}

// GET /settings/sales-channels (settings.read; without it the 403 page).
salesChannelsPage.get(PATH, (c) => render(c, doneNotice(c, DONE)));

// POST /settings/sales-channels: turn agentic checkout on or off, rotate the signing key, or send an order update
// again (session CSRF token required; settings.write, checked by the procedures).
salesChannelsPage.post(PATH, (c) =>
  handleFormPost(
    c,
    render,
    (action) => (action === "resend" ? `${PATH}?done=resent#order-updates` : `${PATH}?done=${action === "rotate" ? "rotated" : action}`),
    {
      on: (signedIn) => pageCall(c, signedIn, updateSalesChannels, { agenticCheckout: true }, ["BAD_REQUEST", "CONFLICT"]),
      off: (signedIn) => pageCall(c, signedIn, updateSalesChannels, { agenticCheckout: false }, ["BAD_REQUEST", "CONFLICT"]),
      rotate: (signedIn) => pageCall(c, signedIn, rotateSalesChannelKey, {}, ["CONFLICT"]),
      resend: (signedIn, field) => pageCall(c, signedIn, resendOrderUpdate, { deliveryId: field("deliveryId") }, ["BAD_REQUEST", "CONFLICT"]),
    },
    "Choose to turn agentic checkout on or off, to rotate the signing key, or to send an order update again.",
  ),
);
