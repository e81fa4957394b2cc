import { Hono } from "hono";
import type { FC } from "hono/jsx";
import { APP_DELIVERY_STATUSES, type AppDeliveryStatus } from "#shared/db/schema";
import { redeliver } from "#shared/procedures/app-deliveries";
import { getApp } from "#shared/procedures/apps";
import { hasNextPage, totalText } from "#shared/procedures/paging";
import { pageCall, type AdminContext, type AdminEnv } from "../context";
import { When } from "./api-settings-grants";
import { call, storePage } from "./chrome";
import { handleFormPost, Notice, RowAction, type FormNotice } from "./form-post";
import { AdminPage } from "./layout";

/**
 * One app's delivery log (`/settings/apps/<id>`): newest first, 50 a page, filtered by status; each
 * delivery's event, state, tries, last HTTP status or error and next try, with Redeliver for those that
 * are no longer being tried (settings.write).
 */
export const appDeliveriesPage = new Hono<AdminEnv>();

const PAGE_SIZE = 50;
const BADGE: Record<AppDeliveryStatus, string> = { pending: "wait", delivered: "good", failed: "bad" };
const LABEL: Record<AppDeliveryStatus, string> = { pending: "Pending", delivered: "Delivered", failed: "Failed" };

/** A delivery's state cells, as an app's log and Settings → Sales channels' order updates show them: status, tries, last answer, last try, next try. */
export const DeliveryStateCells: FC<{
  d: { status: AppDeliveryStatus; lastError: string | null; lastStatus: number | null; lastAttemptAt: Date | null; nextAttemptAt: Date | null };
  tries: string | number;
}> = ({ d, tries }) => (
  <>
    <td>
      <span class={`badge ${BADGE[d.status]}`}>{LABEL[d.status]}</span>
    </td>
    <td class="num">{tries}</td>
    <td>{d.lastError ?? (d.lastStatus !== null ? `HTTP ${d.lastStatus}` : "—")}</td>
    <td>
      <When at={d.lastAttemptAt} empty="not yet" />
    </td>
    <td>
      <When at={d.status === "pending" ? d.nextAttemptAt : null} empty="—" />
    </td>
  </>
);

const isStatus = (s: string | undefined): s is AppDeliveryStatus => (APP_DELIVERY_STATUSES as readonly string[]).includes(s ?? "");

async function render(c: AdminContext, notice?: FormNotice, status: 200 | 400 | 409 = 200) {
  const id = c.req.param("id") ?? "";
  const filter = isStatus(c.req.query("status")) ? (c.req.query("status") as AppDeliveryStatus) : undefined;
  const pageNo = Math.max(1, Math.min(100_000, Number.parseInt(c.req.query("page") ?? "1", 10) || 1));
  const { chrome, me, read } = await storePage(c, { app: call(getApp, { id, page: pageNo, pageSize: PAGE_SIZE, ...(filter ? { status: filter } : {}) }) });
  const canWrite = me.permissions.includes("settings.write");
  const { app, deliveries } = read.app();
  const link = (page: number) => `/settings/apps/${app.id}?${filter ? `status=${filter}&` : ""}page=${page}`;
  return c.html(
    <AdminPage title={`${app.name} · Apps`} chrome={chrome}>
      <p>
        <a href="/settings/apps">← Apps</a>
      </p>
      <h1>{app.name}</h1>
      <p class="muted">
        <code>{app.url}</code> · {app.events.join(", ")} · {app.active ? "active" : "disabled"}
      </p>
      <Notice notice={notice} />
      <nav class="filters" aria-label="Filter deliveries">
        <a href={`/settings/apps/${app.id}`}>All</a>
        {APP_DELIVERY_STATUSES.map((s) => (
          <a href={`/settings/apps/${app.id}?status=${s}`}>{LABEL[s]}</a>
        ))}
      </nav>
      <div class="scroll">
        <table>
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col" class="num">
                Tries
              </th>
              <th scope="col">Last answer</th>
              <th scope="col">Last try</th>
              <th scope="col">Next try</th>
              {canWrite ? <th scope="col">Actions</th> : null}
            </tr>
          </thead>
          <tbody>
            {deliveries.items.map((d) => (
              <tr data-delivery={d.id}>
                <td>
                  <code>{d.eventKind}</code>
                  <br />
                  <span class="muted mono">{d.eventId}</span>
                </td>
                <DeliveryStateCells d={d} tries={d.round > 1 ? `${d.attempts} (round ${d.round})` : d.attempts} />
                {canWrite ? (
                  <td>
                    {d.status !== "pending" ? (
                      <RowAction to={`/settings/apps/${app.id}`} csrf={chrome.csrf} fields={{ deliveryId: d.id }} action="redeliver" label="Redeliver" class="secondary small" />
                    ) : null}
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {deliveries.items.length === 0 ? <p class="muted">No deliveries{filter ? ` ${LABEL[filter].toLowerCase()}` : ""} yet.</p> : null}
      <p class="pager">
        {pageNo > 1 ? <a href={link(pageNo - 1)}>← Newer</a> : <span />}
        <span class="muted">{`${totalText(deliveries)} deliveries`}</span>
        {hasNextPage(deliveries) ? <a href={link(pageNo + 1)}>Older →</a> : <span />}
      </p>
    </AdminPage>,
    status,
  );
}

// GET /settings/apps/<id> (settings.read): the delivery log. Another store's app is the 404 page.
appDeliveriesPage.get("/settings/apps/:id", (c) => render(c, c.req.query("done") === "redelivered" ? { ok: true, text: "Delivery queued again." } : undefined));

// POST /settings/apps/<id>: redeliver one delivery (settings.write, session CSRF token required).
appDeliveriesPage.post("/settings/apps/:id", (c) =>
  handleFormPost(
    c,
    render,
    `/settings/apps/${encodeURIComponent(c.req.param("id"))}?done=redelivered`,
    { redeliver: (signedIn, field) => pageCall(c, signedIn, redeliver, { deliveryId: field("deliveryId") }, ["BAD_REQUEST", "CONFLICT"]) },
    "Choose redeliver.",
  ),
);
