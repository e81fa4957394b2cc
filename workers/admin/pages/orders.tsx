import { Hono } from "hono";
import type { Child, FC } from "hono/jsx";
import { z } from "zod";
import { isAppError, type FieldIssue } from "#shared/core/errors";
import { calendarDay } from "#shared/core/inputs";
import { issuesOf } from "#shared/core/errors";
import { ORDER_CHANNELS } from "#shared/db/schema";
import { FULFILLMENT_STATUSES, ORDER_STATUSES, PAYMENT_STATUSES } from "#shared/rules/status";
import { listOrders } from "#shared/procedures/orders";
import { hasNextPage } from "#shared/procedures/paging";
import type { AdminEnv } from "../context";
import { call, checkOnly, storePage } from "./chrome";
import { holdsView, OrderViews } from "./order-holds";
import { AdminPage, formatMoney } from "./layout";
import { istDayStart, OrderCells, StatusBadge, words } from "./order-words";
import { FieldError, pageCountText, Table } from "./parts";

/**
 * Orders (`/orders`): the store's orders, newest first, with a search (number or email) and filters as a
 * plain GET form, so it works without JavaScript; one orders.list call per page.
 */
export const ordersPage = new Hono<AdminEnv>();

const PAGE_SIZE = 20;

const FILTERS = ["query", "email", "status", "payment", "fulfillment", "channel", "from", "to"] as const;
type FilterName = (typeof FILTERS)[number];
type Filters = Partial<Record<FilterName, string>>;

const optional = <T extends z.ZodType>(schema: T) => schema.or(z.literal("")).optional();
const day = calendarDay("Enter a date as YYYY-MM-DD.");

const filtersSchema = z.object({
  page: z.coerce.number({ error: "Page must be a number." }).int().min(1).max(100_000).default(1),
  query: z.string().trim().max(200, "Search for at most 200 characters.").optional(),
  email: optional(z.email({ error: "Enter an email address such as asha@example.com." }).max(320)),
  status: optional(z.enum(ORDER_STATUSES)),
  payment: optional(z.enum(PAYMENT_STATUSES)),
  fulfillment: optional(z.enum(FULFILLMENT_STATUSES)),
  channel: optional(z.enum(ORDER_CHANNELS)),
  from: optional(day),
  to: optional(day),
});

/** orders.list's input names the same filters differently; its errors are shown next to the page's fields. */
const FIELD_OF_INPUT: Readonly<Record<string, FilterName>> = {
  query: "query",
  email: "email",
  status: "status",
  paymentStatus: "payment",
  fulfillmentStatus: "fulfillment",
  channel: "channel",
  placedFrom: "from",
  placedTo: "to",
};

function linkTo(filters: Filters, page: number): string {
  const search = new URLSearchParams();
  for (const name of FILTERS) if (filters[name]) search.set(name, filters[name]);
  if (page > 1) search.set("page", String(page));
  const text = search.toString();
  return text ? `/orders?${text}` : "/orders";
}

type Errors = Partial<Record<FilterName, string>>;

function errorsOf(issues: readonly FieldIssue[]): { errors: Errors; other: string[] } {
  const errors: Errors = {};
  const other: string[] = [];
  for (const issue of issues) {
    const name = (FILTERS as readonly string[]).includes(issue.path) ? (issue.path as FilterName) : FIELD_OF_INPUT[issue.path];
    if (name === "to" && issue.path === "placedTo" && issue.message.includes("after placedFrom")) errors.to ??= "The last day cannot be before the first.";
    else if (name) errors[name] ??= issue.message;
    else other.push(issue.message);
  }
  return { errors, other };
}

const invalid = (name: FilterName, errors: Errors) =>
  errors[name] ? { "aria-invalid": "true" as const, "aria-describedby": `${name}-error` } : {};

/** One filter: its label, the control (whose id is `f-<name>`), and its error. */
const Filter: FC<{ name: FilterName; label: string; errors: Errors; wide?: boolean; children?: Child }> = ({ name, label, errors, wide, children }) => (
  <div class={wide ? "wide" : undefined}>
    <label for={`f-${name}`}>{label}</label>
    {children}
    <FieldError id={`${name}-error`} error={errors[name]} />
  </div>
);

const Choice: FC<{ name: FilterName; label: string; all: string; values: readonly string[]; filters: Filters; errors: Errors }> = (p) => (
  <Filter name={p.name} label={p.label} errors={p.errors}>
    <select id={`f-${p.name}`} name={p.name} {...invalid(p.name, p.errors)}>
      <option value="">{p.all}</option>
      {p.values.map((v) => (
        <option value={v} selected={v === p.filters[p.name]}>
          {words(v)}
        </option>
      ))}
    </select>
  </Filter>
);

const FilterForm: FC<{ filters: Filters; errors: Errors }> = ({ filters, errors }) => (
  <form class="filters" method="get" action="/orders" role="search">
    <Filter name="query" label="Search" errors={errors} wide>
      <input id="f-query" name="query" type="search" placeholder="Order number (#1001) or email" value={filters.query ?? ""} maxlength={200} {...invalid("query", errors)} />
    </Filter>
    {filters.email !== undefined ? (
      // A customer's orders (linked from the customer's page): exactly this address, kept while filtering.
      <Filter name="email" label="Placed with the email" errors={errors} wide>
        <input id="f-email" name="email" type="email" value={filters.email} maxlength={320} {...invalid("email", errors)} />
      </Filter>
    ) : null}
    <Choice name="status" label="Status" all="Any status" values={ORDER_STATUSES} filters={filters} errors={errors} />
    <Choice name="payment" label="Payment" all="Any payment" values={PAYMENT_STATUSES} filters={filters} errors={errors} />
    <Choice name="fulfillment" label="Fulfillment" all="Any fulfillment" values={FULFILLMENT_STATUSES} filters={filters} errors={errors} />
    <Choice name="channel" label="Channel" all="Any channel" values={ORDER_CHANNELS} filters={filters} errors={errors} />
    <Filter name="from" label="Placed from" errors={errors}>
      <input id="f-from" name="from" type="date" value={filters.from ?? ""} {...invalid("from", errors)} />
    </Filter>
    <Filter name="to" label="Placed to" errors={errors}>
      <input id="f-to" name="to" type="date" value={filters.to ?? ""} {...invalid("to", errors)} />
    </Filter>
    <button type="submit">Filter</button>
    {FILTERS.some((n) => filters[n]) ? <a href="/orders">Clear</a> : null}
  </form>
);

type Listed = Awaited<ReturnType<typeof listOrders.run>>;

const COLUMNS = [
  { label: "Order" },
  { label: "Placed" },
  { label: "Email" },
  { label: "Total", num: true },
  { label: "Status" },
  { label: "Payment" },
  { label: "Fulfillment" },
  { label: "Channel" },
];

const OrdersTable: FC<{ items: Listed["items"] }> = ({ items }) => (
  <Table columns={COLUMNS}>
    {items.map((o) => (
      <tr data-order={o.number}>
        <OrderCells order={o} />
        <td>{o.email ?? <span class="muted">—</span>}</td>
        <td class="num">{formatMoney(o.total, o.currency)}</td>
        <td>
          <StatusBadge value={o.status} label="Status" />
        </td>
        <td>
          <StatusBadge value={o.paymentStatus} label="Payment" />
        </td>
        <td>
          <StatusBadge value={o.fulfillmentStatus} label="Fulfillment" />
        </td>
        <td>
          <StatusBadge value={o.channel} label="Channel" />
        </td>
      </tr>
    ))}
  </Table>
);

const Pager: FC<{ filters: Filters; result: Listed }> = ({ filters, result }) => (
  <nav class="pager" aria-label="Pages">
    {result.page > 1 ? (
      <a rel="prev" href={linkTo(filters, result.page - 1)}>
        ← Previous
      </a>
    ) : (
      <span />
    )}
    <span class="muted">{pageCountText(result, result.total === 1 ? "order" : "orders")}</span>
    {hasNextPage(result) ? (
      <a rel="next" href={linkTo(filters, result.page + 1)}>
        Next →
      </a>
    ) : (
      <span />
    )}
  </nav>
);

/** The table and pager, or an empty state that says what to do. */
const Results: FC<{ filters: Filters; result: Listed }> = ({ filters, result }) => {
  if (result.items.length > 0) {
    return (
      <>
        <OrdersTable items={result.items} />
        <Pager filters={filters} result={result} />
      </>
    );
  }
  if (result.total > 0) {
    return (
      <p class="card">
        This page is past the last one. <a href={linkTo(filters, 1)}>Go to the first page</a>.
      </p>
    );
  }
  if (FILTERS.some((n) => filters[n])) {
    return (
      <p class="card">
        No orders match these filters. Try other dates or statuses, search for a word of the email (its first letters are enough), or <a href="/orders">show all orders</a>.
      </p>
    );
  }
  return (
    <p class="card">
      No orders yet. Orders appear here as soon as shoppers check out on your storefront: make sure your <a href="/products">products</a> are
      active and in stock, then share their links.
    </p>
  );
};

// GET /orders (orders.read; without it the 403 page). A filter the page cannot use is shown next to its field (400).
// `?view=waiting`: the orders holding stock unpaid, with the time each hold releases (./order-holds.tsx).
ordersPage.get("/orders", async (c) => {
  if (c.req.query("view") === "waiting") return holdsView(c);
  const raw = c.req.query();
  const filters: Filters = Object.fromEntries(FILTERS.flatMap((n) => (raw[n] ? [[n, n === "query" ? raw[n].trim() : raw[n]]] : [])));
  const parsed = filtersSchema.safeParse(raw);
  let problem = parsed.success ? undefined : errorsOf(issuesOf(parsed.error));
  const f = parsed.success ? parsed.data : undefined;
  const input = f && {
    page: f.page,
    pageSize: PAGE_SIZE,
    ...(f.query ? { query: f.query } : {}),
    ...(f.email ? { email: f.email } : {}),
    ...(f.status ? { status: f.status } : {}),
    ...(f.payment ? { paymentStatus: f.payment } : {}),
    ...(f.fulfillment ? { fulfillmentStatus: f.fulfillment } : {}),
    ...(f.channel ? { channel: f.channel } : {}),
    ...(f.from ? { placedFrom: istDayStart(f.from) } : {}),
    ...(f.to ? { placedTo: istDayStart(f.to, true) } : {}),
  };
  const { chrome, read } = await storePage(c, { orders: input ? call(listOrders, input, ["BAD_REQUEST"]) : checkOnly(listOrders) });
  let result: Listed | undefined;
  try {
    result = read.orders();
  } catch (e) {
    if (!isAppError(e) || e.code !== "BAD_REQUEST") throw e;
    problem = errorsOf((e.data?.issues as FieldIssue[] | undefined) ?? [{ path: "", message: e.message }]);
  }
  return c.html(
    <AdminPage title="Orders" chrome={chrome}>
      <h1>Orders</h1>
      <OrderViews current="all" />
      <p class="muted">Newest first. Dates and times are in India (IST).</p>
      <FilterForm filters={filters} errors={problem?.errors ?? {}} />
      {problem ? (
        <p class="alert" role="alert">
          {[Object.keys(problem.errors).length > 0 ? "Correct the filters marked above." : "", ...problem.other].join(" ").trim()}
        </p>
      ) : null}
      {result ? <Results filters={filters} result={result} /> : null}
    </AdminPage>,
    problem ? 400 : 200,
  );
});
