import { Hono } from "hono";
import type { FC } from "hono/jsx";
import { listDeadEvents, listJobFailures, retryDeadEvent } from "#shared/procedures/outbox";
import { pageCall, type AdminContext, type AdminEnv } from "../context";
import { storePage } from "./chrome";
import { handleFormPost, Notice, type FormNotice } from "./form-post";
import { AdminPage } from "./layout";
import { IstTime, words } from "./order-words";
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

async function render(c: AdminContext, notice?: FormNotice, status: 200 | 400 | 409 = 200) {
  const { me, chrome, signedIn } = await storePage(c);
  const areas = [...new Set(me.permissions.map((p) => p.split(".")[0]))];
  const watch = me.permissions.includes("settings.read");
  const [dead, failures] = watch
    ? await Promise.all([pageCall(c, signedIn, listDeadEvents, { pageSize: 5 }), pageCall(c, signedIn, listJobFailures, {})])
    : [{ items: [], total: 0, page: 1, pageSize: 5 }, { items: [] }];
  if (!notice && c.req.query("done") === "retry") notice = { ok: true, text: "The event is queued again: it goes out within seconds." };
  return c.html(
    <AdminPage title="Home" chrome={chrome}>
      <h1>{me.store.name}</h1>
      <p>
        Signed in as {me.user?.name ?? me.user?.email} · your role: <strong data-testid="role">{me.member.roleLabel}</strong>
      </p>
      <Notice notice={notice} />
      <Attention dead={dead} failures={failures} csrf={chrome.csrf} canRetry={me.permissions.includes("settings.write")} />
      <div class="grid">
        {chrome.canSee.products ? (
          <a class="card" href="/products">
            <strong>Products</strong>
            <p class="muted">Catalog, variants, prices and stock.</p>
          </a>
        ) : null}
        {chrome.canSee.orders ? (
          <a class="card" href="/orders">
            <strong>Orders</strong>
            <p class="muted">Orders with their payments, parcels and GST; ship, refund, returns.</p>
          </a>
        ) : null}
        {chrome.canSee.settings ? (
          <a class="card" href="/settings">
            <strong>Settings</strong>
            <p class="muted">Store details, storefront password, MCP &amp; API.</p>
          </a>
        ) : null}
      </div>
      <p class="muted">Your role covers: {areas.join(", ")}.</p>
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
