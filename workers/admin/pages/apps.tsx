import { Hono } from "hono";
import { isAppError, type FieldIssue } from "#shared/core/errors";
import { permissionDenied } from "#shared/pipeline/principal";
import { appNotFound, createApp, deleteApp, listApps, rotateAppSecret, updateApp } from "#shared/procedures/apps";
import { PAGE_SIZE_MAX } from "#shared/procedures/paging";
import { pageCall, type AdminContext, type AdminEnv, postSession } from "../context";
import { sessionForm } from "../session-form";
import { AppForm, appInput, draftOf, EMPTY_APP, stateOfApp, stateOfFailure, type AppFormState } from "./apps-form";
import { call, storePage } from "./chrome";
import { Notice, type FormNotice } from "./form-post";
import { AdminPage } from "./layout";

/**
 * Settings → Apps (`/settings/apps`): the store's apps with their URL, events, state and failed
 * deliveries; create (the signing secret is answered once, in the body of the POST), edit
 * (`?edit=<id>`), enable or disable, rotate the secret, delete. Each app's delivery log is on
 * ./app-deliveries.tsx. Reading needs settings.read, every action settings.write.
 */
export const appsPage = new Hono<AdminEnv>();

type Status = 200 | 201 | 400 | 409;

interface View {
  notice?: FormNotice;
  /** A refused create or update: the form again with what was typed. */
  failed?: { action: "create" | "update"; id?: string; state: AppFormState };
  /** A secret to show once: after create or rotate. */
  secret?: { appName: string; value: string; rotated: boolean };
}

async function render(c: AdminContext, view: View = {}, status: Status = 200) {
  const { chrome, me, read } = await storePage(c, { apps: call(listApps, { pageSize: PAGE_SIZE_MAX }) });
  const canWrite = me.permissions.includes("settings.write");
  const { items, total } = read.apps();
  let editing: { id: string; name: string; state: AppFormState } | undefined;
  if (view.failed?.action === "update" && view.failed.id) {
    editing = { id: view.failed.id, name: items.find((a) => a.id === view.failed!.id)?.name ?? view.failed.state.draft.name, state: view.failed.state };
  } else if (c.req.query("edit") !== undefined) {
    if (!canWrite) throw permissionDenied("settings.write");
    const app = items.find((a) => a.id === c.req.query("edit"));
    if (!app) throw appNotFound();
    editing = { id: app.id, name: app.name, state: stateOfApp(app) };
  }
  const created = view.failed?.action === "create" ? view.failed.state : EMPTY_APP;
  return c.html(
    <AdminPage title="Apps" chrome={chrome}>
      <h1>Apps</h1>
      <p class="muted">
        An app receives the store's events (orders, payments that failed, shipments, returns, refunds, products, stock, customers) as signed
        POSTs to its URL, retried for about 7 hours until it answers 2xx. How to verify them: docs/apps.md.
      </p>
      <Notice notice={view.notice} />
      {view.secret ? <SecretOnce secret={view.secret} /> : null}
      {editing ? <AppForm csrf={chrome.csrf} action="update" id={editing.id} heading={`Edit ${editing.name}`} submit="Save app" state={editing.state} /> : null}
      <div class="scroll">
        <table>
          <thead>
            <tr>
              <th scope="col">App</th>
              <th scope="col">Events</th>
              <th scope="col">State</th>
              <th scope="col">Deliveries</th>
              {canWrite ? <th scope="col">Actions</th> : null}
            </tr>
          </thead>
          <tbody>
            {items.map((a) => (
              <tr data-app={a.id}>
                <td>
                  <strong>{a.name}</strong>
                  <br />
                  <code>{a.url}</code>
                  <br />
                  <span class="muted">secret …{a.secretHint}</span>
                </td>
                <td>{a.events.join(", ")}</td>
                <td>{a.active ? <span class="badge good">Active</span> : <span class="badge off">Disabled</span>}</td>
                <td>
                  <a href={`/settings/apps/${a.id}`}>Delivery log</a>
                  {a.failedDeliveries > 0 ? <span class="badge bad">{` ${a.failedDeliveries} failed`}</span> : null}
                  {a.pendingDeliveries > 0 ? <span class="badge wait">{` ${a.pendingDeliveries} pending`}</span> : null}
                </td>
                {canWrite ? (
                  <td>
                    <a href={`/settings/apps?edit=${a.id}#edit`} aria-label={`Edit ${a.name}`}>
                      Edit
                    </a>
                    <form method="post" action="/settings/apps" class="inline">
                      <input type="hidden" name="csrf" value={chrome.csrf} />
                      <input type="hidden" name="id" value={a.id} />{" "}
                      <button type="submit" name="action" value={a.active ? "disable" : "enable"} class="secondary small">
                        {a.active ? "Disable" : "Enable"}
                      </button>{" "}
                      <button type="submit" name="action" value="rotate" class="secondary small" aria-label={`New secret for ${a.name}`}>
                        New secret
                      </button>{" "}
                      <button type="submit" name="action" value="delete" class="secondary small" aria-label={`Delete ${a.name}`}>
                        Delete
                      </button>
                    </form>
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {items.length === 0 ? <p class="muted">No apps yet.</p> : null}
      {total > items.length ? <p class="muted">{`Showing ${items.length} of ${total}.`}</p> : null}
      {canWrite ? <AppForm csrf={chrome.csrf} action="create" heading="New app" submit="Create app" state={created} /> : null}
    </AdminPage>,
    status,
  );
}

function SecretOnce({ secret }: { secret: NonNullable<View["secret"]> }) {
  return (
    <section class="card secret" aria-labelledby="secret-heading">
      <h2 id="secret-heading">{secret.rotated ? `New signing secret for ${secret.appName}` : `App “${secret.appName}” created`}</h2>
      <p>
        <strong>Copy the signing secret now: it is shown only once and cannot be recovered.</strong>
        {secret.rotated ? " The previous secret also signs deliveries for 24 hours." : ""}
      </p>
      <input id="app-secret" readonly value={secret.value} aria-label="Signing secret" autocomplete="off" spellcheck={false} />
    </section>
  );
}

const DONE: Record<string, string> = {
  updated: "App saved.",
  enabled: "App enabled: it receives new events again.",
  disabled: "App disabled: it receives nothing until you enable it.",
  deleted: "App deleted.",
};

// GET /settings/apps (settings.read; without it the 403 page). `?edit=<id>` opens an app for editing (settings.write).
appsPage.get("/settings/apps", (c) => {
  const done = c.req.query("done") ?? "";
  return render(c, Object.hasOwn(DONE, done) ? { notice: { ok: true, text: DONE[done]! } } : {});
});

// POST /settings/apps: create, update, enable, disable, rotate or delete (session CSRF token required).
appsPage.post("/settings/apps", async (c) => {
  const { signedIn, form, text } = await sessionForm(c, postSession, { all: true });
  const action = text("action") ?? "";
  const id = text("id") ?? "";
  const draft = draftOf(form);
  try {
    switch (action) {
      case "create": {
        const made = await pageCall(c, signedIn, createApp, appInput(draft), ["BAD_REQUEST", "CONFLICT"]);
        return render(c, { secret: { appName: made.app.name, value: made.secret, rotated: false } }, 201);
      }
      case "rotate": {
        const rotated = await pageCall(c, signedIn, rotateAppSecret, { id }, ["BAD_REQUEST"]);
        return render(c, { secret: { appName: rotated.app.name, value: rotated.secret, rotated: true } });
      }
      case "update":
        await pageCall(c, signedIn, updateApp, { id, ...appInput(draft), active: draft.active }, ["BAD_REQUEST", "CONFLICT"]);
        return c.redirect("/settings/apps?done=updated", 303);
      case "enable":
      case "disable":
        await pageCall(c, signedIn, updateApp, { id, active: action === "enable" }, ["BAD_REQUEST"]);
        return c.redirect(`/settings/apps?done=${action}d`, 303);
      case "delete":
        await pageCall(c, signedIn, deleteApp, { id }, ["BAD_REQUEST"]);
        return c.redirect("/settings/apps?done=deleted", 303);
      default:
        return render(c, { notice: { ok: false, text: "Choose create, update, enable, disable, new secret or delete." } }, 400);
    }
  } catch (e) {
    if (!isAppError(e) || (e.code !== "BAD_REQUEST" && e.code !== "CONFLICT")) throw e;
    const status = e.code === "CONFLICT" ? 409 : 400;
    if (action !== "create" && action !== "update") return render(c, { notice: { ok: false, text: e.message } }, status);
    const refused = stateOfFailure(draft, (e.data?.issues as readonly FieldIssue[] | undefined) ?? []);
    const text = refused.unplaced.length === 0 ? "Not saved: correct the fields marked below." : e.message;
    return render(c, { notice: { ok: false, text }, failed: { action, id, state: refused } }, status);
  }
});
