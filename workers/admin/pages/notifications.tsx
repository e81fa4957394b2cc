import { Hono } from "hono";
import type { FC } from "hono/jsx";
import { z } from "zod";
import { listMailbox, listNotifications } from "#shared/procedures/notifications";
import { SANDBOXED_PAGE_POLICY } from "#shared/http/security-headers";
import { hasNextPage, type Paged } from "#shared/procedures/paging";
import type { AdminEnv } from "../context";
import { call, storePage } from "./chrome";
import { AdminPage } from "./layout";
import { IstTime, StatusBadge, words } from "./order-words";
import { Table } from "./parts";

/**
 * The notification log (`/notifications`, orders.read): what was sent to shoppers, newest first; and the
 * local mailbox (`/mailbox`, development and tests only), where the local mailer keeps the messages
 * themselves. One procedure call per page; paging by `?page=` without JavaScript.
 */
export const notificationsPage = new Hono<AdminEnv>();

const PAGE_SIZE = 25;
const pageOf = (raw: string | undefined) => z.coerce.number().int().min(1).max(100_000).catch(1).parse(raw ?? 1);

const Pager: FC<{ path: string; list: Paged<unknown> }> = ({ path, list }) => (
  <nav class="pager" aria-label="Pages">
    {list.page > 1 ? <a rel="prev" href={`${path}?page=${list.page - 1}`}>← Newer</a> : null}
    {hasNextPage(list) ? <a rel="next" href={`${path}?page=${list.page + 1}`}>Older →</a> : null}
  </nav>
);

const LOG_COLUMNS = [{ label: "When" }, { label: "Message" }, { label: "To" }, { label: "Status" }, { label: "Subject" }];

notificationsPage.get("/notifications", async (c) => {
  const page = pageOf(c.req.query("page"));
  const { chrome, read } = await storePage(c, { log: call(listNotifications, { page, pageSize: PAGE_SIZE }) });
  const log = read.log();
  const mailer = (c.env as { MAILER?: string }).MAILER;
  const local = mailer === undefined || mailer === "local";
  return c.html(
    <AdminPage title="Notifications" chrome={chrome}>
      <h1>Notifications</h1>
      <p class="muted">
        Messages to shoppers, sent when their order changes.{" "}
        {local ? (
          <>
            This deployment keeps them in the <a href="/mailbox">local mailbox</a> instead of sending them.
          </>
        ) : null}
      </p>
      {log.items.length === 0 ? (
        <p class="muted">Nothing sent yet. A message goes out when an order is placed, paid, shipped, refunded or returned.</p>
      ) : (
        <Table columns={LOG_COLUMNS}>
          {log.items.map((n) => (
            <tr data-template={n.template}>
              <td>
                <IstTime at={n.createdAt} />
              </td>
              <td>{words(n.template)}</td>
              <td>{n.to}</td>
              <td>
                <StatusBadge value={n.status} label="Status" />
                {n.lastError ? <div class="muted">{n.lastError}</div> : null}
              </td>
              <td>{n.subject}</td>
            </tr>
          ))}
        </Table>
      )}
      <Pager path="/notifications" list={log} />
    </AdminPage>,
  );
});

notificationsPage.get("/mailbox", async (c) => {
  const page = pageOf(c.req.query("page"));
  const { chrome, read } = await storePage(c, { box: call(listMailbox, { page, pageSize: PAGE_SIZE }) });
  const box = read.box();
  return c.html(
    <AdminPage title="Local mailbox" chrome={chrome}>
      <h1>Local mailbox</h1>
      <p class="muted">What the local mailer would have sent (development only). The log is under <a href="/notifications">Notifications</a>.</p>
      {box.items.length === 0 ? <p class="muted">The mailbox is empty.</p> : null}
      {box.items.map((m) => (
        // An article, not a section: a section is a landmark, and two mails of one subject would be two landmarks of one name.
        <article class="mail" id={`m-${m.id}`} aria-labelledby={`m-${m.id}-heading`}>
          <h2 id={`m-${m.id}-heading`}>{m.subject}</h2>
          <p class="muted" data-tag={m.tag}>
            <IstTime at={m.createdAt} /> · from {m.from} · to {m.to}
          </p>
          {/* Focusable: a long line scrolls it sideways, which a keyboard must reach too. */}
          <pre class="mail" tabindex={0}>
            {m.text}
          </pre>
          <p>
            <a href={`/mailbox/${m.id}`} data-part="html">
              Open the HTML part
            </a>
          </p>
        </article>
      ))}
      <Pager path="/mailbox" list={box} />
    </AdminPage>,
  );
});

/**
 * One message's HTML part as the shopper's mail client would show it, on a page of its own under
 * SANDBOXED_PAGE_POLICY (shared/http/security-headers.ts keeps it): no script, no form, nothing loaded but
 * https images, only the email's inline styles; never framed, and its address (the order link's key is in
 * the message, not in it) is not sent on.
 */
notificationsPage.get("/mailbox/:id", async (c) => {
  // A malformed id finds nothing (the nil UUID is no message's id).
  const id = z.uuid().catch("00000000-0000-0000-0000-000000000000").parse(c.req.param("id"));
  const { chrome, read } = await storePage(c, { box: call(listMailbox, { page: 1, pageSize: 1, id }) });
  const [message] = read.box().items;
  if (!message) {
    return c.html(
      <AdminPage title="Not in the mailbox" chrome={chrome}>
        <h1>Not in the mailbox</h1>
        <p class="muted">
          This message is not in this store's local mailbox. Open the <a href="/mailbox">mailbox</a> and choose one.
        </p>
      </AdminPage>,
      404,
    );
  }
  return c.html(message.html, 200, { "content-security-policy": SANDBOXED_PAGE_POLICY, "referrer-policy": "no-referrer" });
});
