import { Hono } from "hono";
import type { FieldIssue } from "#shared/core/errors";
import { permissionDenied } from "#shared/pipeline/principal";
import { orderNotFound } from "#shared/orders/order-detail";
import { listLocations } from "#shared/procedures/inventory";
import { listOrderInvoices } from "#shared/procedures/invoices";
import { getOrder } from "#shared/procedures/orders";
import { pageCall, type AdminContext, type AdminEnv } from "../context";
import { call, optional, storePage } from "./chrome";
import { handleFormPost, Notice, type FailedPost, type FormAction, type FormNotice } from "./form-post";
import { AdminPage } from "./layout";
import { OrderActions, type CallProcedure } from "./order-actions";
import { actionsFor, findAction, ORDER_ACTIONS } from "./order-fulfilment-actions";
import { AfterSale, Shipments } from "./order-after-sale";
import { Invoices } from "./order-invoices";
import { Attempts, Customer, Lines, OrderHeader, Parcels, Timeline, Totals } from "./order-detail-view";

/**
 * One order (`/orders/<id>`): what orders.get answers, and the actions of ./order-actions.tsx as form
 * posts to the same URL (CSRF token; 303 back with `?done=<action>`, or the page again with the
 * procedure's 400 or 409). An unknown id, another store's, or one that is not a uuid is the 404 page.
 */
export const orderDetailPage = new Hono<AdminEnv>();

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function orderIdOf(c: AdminContext): string {
  const id = c.req.param("id") ?? "";
  if (!UUID.test(id)) throw orderNotFound();
  return id;
}

async function render(c: AdminContext, notice?: FormNotice, status: 200 | 400 | 409 = 200, failed?: FailedPost) {
  const id = orderIdOf(c);
  // Parcels name their location when the member may read stock locations.
  const { chrome, me, read } = await storePage(c, { order: call(getOrder, { id }, ["NOT_FOUND"]), locations: optional(listLocations, {}), invoices: optional(listOrderInvoices, { id }) });
  const [order, locations] = [read.order(), read.locations() ?? { items: [] }];
  if (!notice) {
    const done = findAction(c.req.query("done") ?? "");
    if (done) notice = { ok: true, text: done.done(order) };
  }
  const fields = (failed && findAction(failed.action)?.fields) ?? [];
  const issues = (failed?.error.data?.issues as readonly FieldIssue[] | undefined) ?? [];
  if (issues.length > 0 && issues.every((i) => fields.some((f) => f.name === i.path))) notice = { ok: false, text: "Not done: correct the field marked below." };
  return c.html(
    <AdminPage title={`Order #${order.number}`} chrome={chrome}>
      <p>
        <a href="/orders">← Orders</a>
      </p>
      <OrderHeader order={order} />
      <Notice notice={notice} />
      <OrderActions order={order} offered={actionsFor(order, me.permissions)} csrf={chrome.csrf} failed={failed} />
      <Customer order={order} />
      <Lines order={order} />
      <Parcels order={order} locations={new Map(locations.items.map((l) => [l.id, l.name]))} />
      <Totals order={order} />
      <Attempts order={order} />
      <Shipments order={order} />
      <Invoices orderId={id} documents={read.invoices() ?? undefined} />
      <AfterSale order={order} />
      <Timeline order={order} />
    </AdminPage>,
    status,
  );
}

// GET /orders/<id> (orders.read). `?done=<action>` shows what the last action changed.
orderDetailPage.get("/orders/:id", (c) => render(c));

// POST /orders/<id>: one action of ORDER_ACTIONS, named by the form's `action` field.
orderDetailPage.post("/orders/:id", (c) => {
  const id = orderIdOf(c);
  const actions = Object.fromEntries(
    ORDER_ACTIONS.map((a): [string, FormAction] => [
      a.name,
      async (signedIn, field, base) => {
        // The procedure checks the permission too; checked first here so a refused role never meets the form's own checks.
        if (!(await base()).me.permissions.includes(a.permission)) throw permissionDenied(a.permission);
        const call: CallProcedure = (proc, input) => pageCall(c, signedIn, proc, input, ["BAD_REQUEST", "CONFLICT", "NOT_FOUND"]);
        return a.submit(call, id, field);
      },
    ]),
  );
  const names = ORDER_ACTIONS.map((a) => a.label).join(", ");
  return handleFormPost(c, render, (action) => `/orders/${id}?done=${action}`, actions, `Choose one of the order's actions: ${names}.`);
});
