import { Hono } from "hono";
import type { FC } from "hono/jsx";
import { listApprovals } from "#shared/assistant/approvals";
import type { Permission } from "#shared/auth/permissions";
import { summary } from "#shared/procedures/analytics";
import { listDeadEvents, listJobFailures, retryDeadEvent } from "#shared/procedures/outbox";
import { lowStock, waitingOrders } from "#shared/procedures/overview";
import { pageCall, type AdminContext, type AdminEnv } from "../context";
import { call, optional, storePage } from "./chrome";
import { handleFormPost, Notice, type FormNotice } from "./form-post";
import { AdminPage, formatMoney, type Chrome } from "./layout";
import { IST_OFFSET, IstTime, words } from "./order-words";
import { Section } from "./parts";

export const home = new Hono<AdminEnv>();

type Dead = Awaited<ReturnType<typeof listDeadEvents.run>>;
type Failures = Awaited<ReturnType<typeof listJobFailures.run>>;

/** What went wrong in the background for this store: events the relay gave up on (with Retry), failed jobs. */
const Attention: FC<{ dead: Dead; failures: Failures; csrf: string; canRetry: boolean }> = ({ dead, failures, csrf, canRetry }) =>
  dead.total === 0 && failures.items.length === 0 ? null : (
    <Section id="attention" title="Needs attention">
      {failures.items.map((f) => (
        <p class="alert" data-job={f.job}>
          {words(f.job.replace(/[{}]/g, ""))} failed {f.failures === 1 ? "once" : `${f.failures} times`} for this store, last at <IstTime at={f.lastFailedAt} />: {f.error}.
          It is tried again on its next run.
        </p>
      ))}
      {dead.items.map((e) => (
        <form method="post" action="/" class="card action" data-dead={e.kind}>
          <input type="hidden" name="csrf" value={csrf} />
          <input type="hidden" name="action" value="retry" />
          <input type="hidden" name="id" value={e.id} />
          <p>
            The <strong>{e.kind}</strong> event of <IstTime at={e.createdAt} /> could not be delivered after {e.attempts} tries: {e.lastError ?? "no error recorded"}.
          </p>
          {canRetry ? <button type="submit">Retry</button> : null}
        </form>
      ))}
      {dead.total > dead.items.length ? <p class="muted">And {dead.total - dead.items.length} more.</p> : null}
    </Section>
  );

type Summary = Awaited<ReturnType<typeof summary.run>>;
type Waiting = Awaited<ReturnType<typeof waitingOrders.run>>;
type Low = Awaited<ReturnType<typeof lowStock.run>>;

/** Today in India (YYYY-MM-DD). */
const istToday = (now = Date.now()) => new Date(now + 330 * 60_000).toISOString().slice(0, 10);

const Figure: FC<{ href: string; value: string | number; label: string; id: string }> = ({ href, value, label, id }) => (
  <a class="card" href={href} data-figure={id}>
    <strong>{value}</strong>
    <p class="muted">{label}</p>
  </a>
);

/** Today's orders and sales, and the orders waiting for someone, each linking to the orders it counts. */
const Today: FC<{ today: string; sales: Summary | null; waiting: Waiting | null; currency: string; approvals: number }> = ({ today, sales, waiting, currency, approvals }) => {
  const open = (q: string) => `/orders?status=open&${q}`;
  const figures = [
    ...(sales
      ? [
          <Figure id="orders-today" href={`/orders?from=${today}&to=${today}`} value={sales.orders.placed} label={`order${sales.orders.placed === 1 ? "" : "s"} today`} />,
          <Figure id="sales-today" href={`/orders?from=${today}&to=${today}`} value={formatMoney(sales.orders.salesMinor, currency)} label={`sales today (${formatMoney(sales.orders.paidMinor, currency)} paid)`} />,
        ]
      : []),
    ...(waiting
      ? [
          <Figure id="unpaid" href={open("payment=unpaid")} value={waiting.unpaid} label="waiting for payment" />,
          <Figure id="payment-pending" href={open("payment=pending")} value={waiting.paymentPending} label="payment not confirmed yet" />,
          <Figure id="to-ship" href={open("payment=paid&fulfillment=unfulfilled")} value={waiting.toShip} label="paid, to ship" />,
          <Figure id="partly-shipped" href={open("payment=paid&fulfillment=partially_fulfilled")} value={waiting.partlyShipped} label="partly shipped" />,
        ]
      : []),
    ...(approvals > 0 ? [<Figure id="approvals" href="/ai/approvals" value={approvals} label={`AI change${approvals === 1 ? "" : "s"} waiting for your approval`} />] : []),
  ];
  return figures.length === 0 ? null : (
    <Section id="today" title="Today">
      <div class="grid">{figures}</div>
    </Section>
  );
};

const LowStock: FC<{ low: Low }> = ({ low }) =>
  low.items.length === 0 ? null : (
    <Section id="low-stock" title="Low stock">
      <p class="muted">Available online, at or below {low.threshold}.</p>
      <ul>
        {low.items.map((v) => (
          <li data-low={v.sku ?? v.variantId}>
            <a href={`/inventory?query=${encodeURIComponent(v.sku ?? v.productTitle)}`}>
              {v.productTitle}
              {v.variantTitle === "Default" ? "" : ` · ${v.variantTitle}`}
            </a>{" "}
            — {v.available <= 0 ? <strong>sold out</strong> : `${v.available} left`}
          </li>
        ))}
      </ul>
    </Section>
  );

const PLACES: { key: keyof Chrome["canSee"]; href: string; title: string; about: string }[] = [
  { key: "products", href: "/products", title: "Products", about: "Catalogue, variants and prices." },
  { key: "inventory", href: "/inventory", title: "Inventory", about: "Stock by location, adjustments and their history." },
  { key: "orders", href: "/orders", title: "Orders", about: "Payments, parcels and GST; ship, refund, returns." },
  { key: "customers", href: "/customers", title: "Customers", about: "Contacts, consent and their orders." },
  { key: "discounts", href: "/discounts", title: "Discounts", about: "Codes, their dates and how often they were used." },
  { key: "pages", href: "/pages", title: "Pages", about: "About, shipping, returns: the store's own pages." },
  { key: "marketing", href: "/marketing", title: "Marketing", about: "Campaigns and automations to customers who agreed." },
  { key: "team", href: "/team", title: "Team", about: "Members, roles and invitations." },
  { key: "settings", href: "/settings", title: "Settings", about: "Store details, domains, apps, storefront password." },
];

async function render(c: AdminContext, notice?: FormNotice, status: 200 | 400 | 409 = 200) {
  const today = istToday();
  // One read per list the page shows, all in one round trip; each answers null to a role that may not read it.
  const { me, chrome, read } = await storePage(c, {
    dead: optional(listDeadEvents, { pageSize: 5 }),
    failures: optional(listJobFailures, {}),
    sales: optional(summary, { from: today, to: today, utcOffset: IST_OFFSET }),
    waiting: optional(waitingOrders, {}),
    low: optional(lowStock, {}),
    approvals: call(listApprovals, { state: "pending" }),
  });
  const can = (p: Permission) => me.permissions.includes(p);
  const [dead, failures, sales, waiting, low, approvals] = [
    read.dead() ?? { items: [], total: 0, page: 1, pageSize: 5 },
    read.failures() ?? { items: [] },
    read.sales(),
    read.waiting(),
    read.low(),
    read.approvals(),
  ];
  if (!notice && c.req.query("done") === "retry") notice = { ok: true, text: "The event is queued again: it goes out within seconds." };
  return c.html(
    <AdminPage title="Home" chrome={chrome}>
      <h1>{me.store.name}</h1>
      <p>
        Signed in as {me.user?.name ?? me.user?.email} · your role: <strong data-testid="role">{me.member.roleLabel}</strong>
      </p>
      <Notice notice={notice} />
      <Attention dead={dead} failures={failures} csrf={chrome.csrf} canRetry={can("settings.write")} />
      <Today today={today} sales={sales} waiting={waiting} currency={me.store.currency} approvals={approvals.items.filter((a) => a.yours).length} />
      {low ? <LowStock low={low} /> : null}
      <Section id="places" title="Run the store">
        <div class="grid">
          {PLACES.filter((p) => chrome.canSee[p.key]).map((p) => (
            <a class="card" href={p.href}>
              <strong>{p.title}</strong>
              <p class="muted">{p.about}</p>
            </a>
          ))}
        </div>
      </Section>
    </AdminPage>,
    status,
  );
}

// GET /: the admin home, guarded by staff.me (every role passes; no store → the store picker).
home.get("/", (c) => render(c));

// POST /: Retry a dead event (settings.write; the procedure checks it).
home.post("/", (c) =>
  handleFormPost(c, render, () => "/?done=retry", {
    retry: (signedIn, field) => pageCall(c, signedIn, retryDeadEvent, { id: field("id") ?? "" }, ["NOT_FOUND", "BAD_REQUEST"]),
  }, "Choose Retry."),
);
