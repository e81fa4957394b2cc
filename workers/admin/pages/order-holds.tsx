import type { FC } from "hono/jsx";
import { z } from "zod";
import { listHolds } from "#shared/procedures/orders";
import type { AdminContext } from "../context";
import { call, storePage } from "./chrome";
import { AdminPage, formatMoney } from "./layout";
import { IstTime, OrderCells, StatusBadge } from "./order-words";
import { Pager, Table } from "./parts";

/**
 * Orders → Waiting for payment (`/orders?view=waiting`): every unpaid order holding stock, the soonest to
 * release first, with the time its hold releases (orders.holds). One call per page.
 */
const PAGE_SIZE = 20;

type Holds = Awaited<ReturnType<typeof listHolds.run>>;

const COLUMNS = [
  { label: "Order" },
  { label: "Placed" },
  { label: "Email" },
  { label: "Due now", num: true },
  { label: "Payment" },
  { label: "Stock held until" },
];

/** The two views of the orders list, the current one marked. */
export const OrderViews: FC<{ current: "all" | "waiting" }> = ({ current }) => (
  <nav class="tabs" aria-label="Order views">
    <a href="/orders" aria-current={current === "all" ? "page" : undefined}>
      All orders
    </a>{" "}
    ·{" "}
    <a href="/orders?view=waiting" aria-current={current === "waiting" ? "page" : undefined}>
      Waiting for payment
    </a>
  </nav>
);

const HoldsTable: FC<{ items: Holds["items"]; now: number }> = ({ items, now }) => (
  <Table columns={COLUMNS}>
    {items.map((o) => (
      <tr data-order={o.number}>
        <OrderCells order={o} />
        <td>{o.email ?? <span class="muted">—</span>}</td>
        <td class="num">{formatMoney(o.amountDue, o.currency)}</td>
        <td>
          {o.paymentMethod === "gateway" ? "Online" : "Bank transfer"} · <StatusBadge value={o.paymentStatus} label="Payment" />
        </td>
        <td data-releases={o.holdReleasesAt ? new Date(o.holdReleasesAt).toISOString() : ""}>
          <IstTime at={o.holdReleasesAt} />
          {o.holdReleasesAt && new Date(o.holdReleasesAt).getTime() <= now ? <span class="muted"> · releasing now</span> : null}
        </td>
      </tr>
    ))}
  </Table>
);

const pageSchema = z.coerce.number().int().min(1).max(100_000).catch(1);

export async function holdsView(c: AdminContext) {
  const page = pageSchema.parse(c.req.query("page") ?? 1);
  const { chrome, read } = await storePage(c, { holds: call(listHolds, { page, pageSize: PAGE_SIZE }) });
  const holds = read.holds();
  const link = (p: number) => (p > 1 ? `/orders?view=waiting&page=${p}` : "/orders?view=waiting");
  return c.html(
    <AdminPage title="Orders waiting for payment" chrome={chrome}>
      <h1>Orders</h1>
      <OrderViews current="waiting" />
      <p class="muted">
        Each of these orders holds its items until the time shown; then, if the money has not arrived, its stock is released and the order
        expires. Cancel one to release its stock now. Times are in India (IST).
      </p>
      {holds.items.length > 0 ? (
        <>
          <HoldsTable items={holds.items} now={Date.now()} />
          <Pager list={holds} noun={holds.total === 1 ? "order" : "orders"} link={link} />
        </>
      ) : holds.total > 0 ? (
        <p class="card">
          This page is past the last one. <a href={link(1)}>Go to the first page</a>.
        </p>
      ) : (
        <p class="card">No order is waiting for payment: no stock is held unpaid.</p>
      )}
    </AdminPage>,
  );
}
