import { Hono } from "hono";
import { AREA_SCOPES, grantableScopes, TOKEN_LIFETIMES, type AreaScope } from "#shared/api/grants";
import { AREAS } from "#shared/auth/permissions";
import { isAppError, type AppError, type FieldIssue } from "#shared/http/errors";
import { createToken, listActivity, listGrants, revokeGrant } from "#shared/procedures/api-grants";
import { csrfTokenMatches } from "../auth/session";
import { crossSiteRefused, isCrossSite, pageCall, type AdminContext, type AdminEnv } from "../context";
import { storePage } from "./chrome";
import { AdminPage } from "./layout";

/**
 * Settings → MCP & API: every member creates and revokes their own script tokens and sees their
 * activity (Owner and Admin see the whole store's; only the Owner revokes another member's grant).
 * The rules live in the procedures (shared/procedures/api-grants.ts); this page only shows them.
 * A new token is answered in the page body of the POST (201), never through a redirect or a URL.
 */
export const apiSettingsPage = new Hono<AdminEnv>();

type Base = Awaited<ReturnType<typeof storePage>>;
type Created = Awaited<ReturnType<typeof createToken.run>>;
type Status = 200 | 201 | 400 | 403 | 404;

const ACTIVITY_PAGE_SIZE = 20;
const DEFAULT_LIFETIME = "90";
const LIFETIME_OPTIONS: { value: string; label: string }[] = [
  ...TOKEN_LIFETIMES.map((d) => ({ value: String(d), label: `${d} days` })),
  { value: "never", label: "Never expires" },
];

/** What the member typed, kept when the form comes back with an error. */
interface Draft {
  name: string;
  areas: string[];
  lifetimeDays: string;
}

interface View {
  notice?: string;
  alert?: string;
  created?: Created;
  draft?: Draft;
}

const COPY_SCRIPT = `(function(){var b=document.getElementById("copy-token"),i=document.getElementById("new-token"),s=document.getElementById("copy-status");
if(!b||!i)return;b.addEventListener("click",function(){i.select();
var done=function(t){if(s)s.textContent=t};
if(navigator.clipboard&&navigator.clipboard.writeText){navigator.clipboard.writeText(i.value).then(function(){done("Copied.")},function(){done("Copy failed: select the token and copy it by hand.")})}
else done("Select the token and copy it by hand.")})})();`;

const titleCase = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

function When({ at, empty = "never" }: { at: Date | string | null; empty?: string }) {
  if (!at) return <span class="muted">{empty}</span>;
  const d = at instanceof Date ? at : new Date(at);
  return <time datetime={d.toISOString()}>{`${d.toISOString().slice(0, 16).replace("T", " ")} UTC`}</time>;
}

/** A friendlier sentence for the create form's 400s; the procedure's own message otherwise. */
function createErrorText(e: AppError): string {
  if (e.code !== "BAD_REQUEST") return e.message;
  const issues = e.data?.issues as readonly FieldIssue[] | undefined;
  const path = issues?.[0]?.path ?? "";
  if (path === "name") return "Give the token a name (1 to 100 characters).";
  if (path.startsWith("areas")) return "Choose at least one area the token may use.";
  if (path === "lifetimeDays") return "Choose how long the token lasts: 30, 90 or 365 days, or never.";
  return e.message;
}

async function render(c: AdminContext, base: Base, view: View = {}, status: Status = 200) {
  const { chrome, me, signedIn } = base;
  const [grants, activity] = await Promise.all([
    pageCall(c, signedIn, listGrants, {}),
    pageCall(c, signedIn, listActivity, { page: 1, pageSize: ACTIVITY_PAGE_SIZE }),
  ]);
  const grantable = new Set<AreaScope>(grantableScopes(me.member.role));
  const offeredAreas = AREAS.filter((a) => grantable.has(`${a}:read`) || grantable.has(`${a}:write`));
  const canRevokeOthers = me.permissions.includes("staff.write");
  const storeWide = grants.scope === "store";
  const draft: Draft = view.draft ?? { name: "", areas: [], lifetimeDays: DEFAULT_LIFETIME };
  const origin = new URL(c.req.url).origin;
  const curl = [
    `curl -X POST ${origin}/api/v1/products/list \\`,
    `  -H "Authorization: Bearer $TOKEN" \\`,
    `  -H 'content-type: application/json' \\`,
    `  -d '{"json":{"page":1}}'`,
  ].join("\n");

  c.header("referrer-policy", "same-origin");
  return c.html(
    <AdminPage title="MCP & API" chrome={chrome}>
      <h1>MCP &amp; API</h1>
      <p class="muted">
        Tokens let scripts call this store's API as you, limited to the areas you choose and never beyond your role ({me.member.roleLabel}).
        AI clients connected over MCP appear here too.
      </p>
      {view.notice ? (
        <p class="notice" role="status">
          {view.notice}
        </p>
      ) : null}
      {view.alert ? (
        <p class="alert" role="alert">
          {view.alert}
        </p>
      ) : null}

      {view.created ? (
        <section class="card secret" aria-labelledby="created-heading">
          <h2 id="created-heading">Token “{view.created.grant.name}” created</h2>
          <p>
            <strong>Copy it now: it is shown only once and cannot be recovered.</strong>
          </p>
          <div class="copy">
            <input
              id="new-token"
              readonly
              value={view.created.token}
              aria-label="New token"
              autocomplete="off"
              spellcheck={false}
            />
            <button type="button" id="copy-token">
              Copy
            </button>
          </div>
          <p class="muted" id="copy-status" role="status" aria-live="polite"></p>
          <p class="muted">
            Areas: {view.created.grant.areas?.join(", ")} · expires: <When at={view.created.grant.expiresAt} />
          </p>
          <script dangerouslySetInnerHTML={{ __html: COPY_SCRIPT }} />
        </section>
      ) : null}

      <section class="card" aria-labelledby="create-heading">
        <h2 id="create-heading">Create a token</h2>
        <form method="post" action="/settings/api/tokens">
          <input type="hidden" name="csrf" value={chrome.csrf} />
          <label for="token-name">Name</label>
          <input id="token-name" name="name" required maxlength={100} placeholder="e.g. Nightly stock sync" value={draft.name} />
          <fieldset class="areas">
            <legend>Areas</legend>
            <p class="muted">Only what your role allows is offered. Write includes read.</p>
            <table class="areas">
              <thead>
                <tr>
                  <th scope="col">Area</th>
                  <th scope="col">Read</th>
                  <th scope="col">Write</th>
                </tr>
              </thead>
              <tbody>
                {offeredAreas.map((area) => (
                  <tr>
                    <th scope="row">{titleCase(area)}</th>
                    {(["read", "write"] as const).map((level) => {
                      const scope = `${area}:${level}` as const;
                      return (
                        <td>
                          {grantable.has(scope) ? (
                            <input
                              type="checkbox"
                              name="areas"
                              value={scope}
                              aria-label={`${titleCase(area)} ${level}`}
                              checked={draft.areas.includes(scope)}
                            />
                          ) : (
                            <span class="muted" title="Your role does not allow this">
                              —
                            </span>
                          )}
                        </td>
                      );
                    })}
                  </tr>
                ))}
              </tbody>
            </table>
          </fieldset>
          <label for="lifetimeDays">Expires after</label>
          <select id="lifetimeDays" name="lifetimeDays">
            {LIFETIME_OPTIONS.map((o) => (
              <option value={o.value} selected={o.value === draft.lifetimeDays}>
                {o.label}
              </option>
            ))}
          </select>
          <div>
            <button type="submit">Create token</button>
          </div>
        </form>
      </section>

      <section class="card" aria-labelledby="use-heading">
        <h2 id="use-heading">Calling the API</h2>
        <p>
          Send <code>POST /api/v1/&lt;router&gt;/&lt;procedure&gt;</code> with the token as a bearer token and the input as{" "}
          <code>{'{"json": …}'}</code>:
        </p>
        <pre>
          <code>{curl}</code>
        </pre>
        <p class="muted">Each call runs with your current role and the token's areas; revoking the token stops it on its next call.</p>
      </section>

      <section id="grants" aria-labelledby="grants-heading">
        <h2 id="grants-heading">Tokens and connections</h2>
        <p class="muted">{storeWide ? "Everyone's tokens and AI-client connections in this store." : "Your tokens and AI-client connections."}</p>
        {grants.items.length === 0 ? (
          <p class="card">No tokens or connections yet.</p>
        ) : (
          <div class="scroll">
            <table>
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Kind</th>
                  {storeWide ? <th>Member</th> : null}
                  <th>Areas</th>
                  <th>Created</th>
                  <th>Expires</th>
                  <th>Last used</th>
                  <th>Status</th>
                  <th>
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {grants.items.map((g) => {
                  const mine = g.member.id === me.member.id;
                  const revocable = g.status === "active" && (mine || canRevokeOthers);
                  return (
                    <tr>
                      <td>
                        {g.name}
                        {g.kind === "token" && g.hint ? <div class="muted mono">…{g.hint}</div> : null}
                        {g.kind === "oauth" && g.clientName && g.clientName !== g.name ? <div class="muted">{g.clientName}</div> : null}
                      </td>
                      <td>{g.kind === "oauth" ? "AI client" : "Token"}</td>
                      {storeWide ? (
                        <td>
                          {g.member.email}
                          {mine ? <span class="muted"> (you)</span> : null}
                        </td>
                      ) : null}
                      <td>{(g.areas ?? []).join(", ")}</td>
                      <td>
                        <When at={g.createdAt} />
                      </td>
                      <td>
                        <When at={g.expiresAt} />
                      </td>
                      <td>
                        <When at={g.lastUsedAt} />
                      </td>
                      <td>
                        <span class={`badge ${g.status}`}>{g.status}</span>
                      </td>
                      <td>
                        {revocable ? (
                          <form method="post" action="/settings/api/revoke" class="inline">
                            <input type="hidden" name="csrf" value={chrome.csrf} />
                            <input type="hidden" name="id" value={g.id} />
                            <button type="submit" class="small danger" aria-label={`Revoke ${g.name}`}>
                              Revoke
                            </button>
                          </form>
                        ) : null}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <section id="activity" aria-labelledby="activity-heading">
        <h2 id="activity-heading">Recent activity</h2>
        <p class="muted">
          Every change is listed; reads are folded per grant and procedure into 10-minute windows. Kept 90 days.
          {activity.total > activity.items.length ? ` Showing the latest ${activity.items.length} of ${activity.total}.` : ""}
        </p>
        {activity.items.length === 0 ? (
          <p class="card">No API calls yet.</p>
        ) : (
          <div class="scroll">
            <table>
              <thead>
                <tr>
                  <th>When</th>
                  <th>Grant</th>
                  <th>Procedure</th>
                  <th>Kind</th>
                  <th>Via</th>
                  <th class="num">Count</th>
                </tr>
              </thead>
              <tbody>
                {activity.items.map((a) => (
                  <tr>
                    <td>
                      <When at={a.lastAt} />
                    </td>
                    <td>{a.grantName}</td>
                    <td class="mono">{a.procedure}</td>
                    <td>{a.kind}</td>
                    <td>{a.via === "mcp" ? "MCP" : "Token"}</td>
                    <td class="num">{a.count}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </AdminPage>,
    status,
  );
}

/** Form values as strings only (a file or a repeated single field counts as missing). */
function textOf(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function listOf(value: unknown): string[] {
  const all = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return all.filter((v): v is string => typeof v === "string");
}

/** "never" → null, "30"/"90"/"365" → a number; anything else is passed on for the procedure to refuse (400). */
function lifetimeOf(value: string | undefined): number | null | string | undefined {
  if (value === "never") return null;
  const n = Number(value);
  return (TOKEN_LIFETIMES as readonly number[]).includes(n) ? n : value;
}

// GET /settings/api: tokens, connections and activity (any member; what each sees is the procedures' rule).
apiSettingsPage.get("/settings/api", async (c) => {
  const base = await storePage(c);
  return render(c, base, c.req.query("revoked") === "1" ? { notice: "Token revoked. It stops working on its next call." } : {});
});

// POST /settings/api/tokens: apiGrants.createToken. The token is answered in this page (201), once.
apiSettingsPage.post("/settings/api/tokens", async (c) => {
  if (isCrossSite(c)) throw crossSiteRefused();
  const base = await storePage(c);
  const form = await c.req.parseBody({ all: true });
  if (!(await csrfTokenMatches(base.signedIn.id, textOf(form.csrf)))) throw crossSiteRefused();
  const areas = listOf(form.areas);
  const lifetime = textOf(form.lifetimeDays);
  const draft: Draft = {
    name: textOf(form.name) ?? "",
    areas: areas.filter((a) => (AREA_SCOPES as readonly string[]).includes(a)),
    lifetimeDays: lifetime ?? DEFAULT_LIFETIME,
  };
  let created: Created;
  try {
    created = await pageCall(
      c,
      base.signedIn,
      createToken,
      { name: textOf(form.name) ?? "", areas, lifetimeDays: lifetimeOf(lifetime) },
      ["BAD_REQUEST", "FORBIDDEN"],
    );
  } catch (e) {
    if (isAppError(e) && (e.code === "BAD_REQUEST" || e.code === "FORBIDDEN")) {
      return render(c, base, { alert: createErrorText(e), draft }, e.code === "BAD_REQUEST" ? 400 : 403);
    }
    throw e;
  }
  return render(c, base, { created }, 201);
});

// POST /settings/api/revoke: apiGrants.revoke, then back to the page (303) with a notice.
apiSettingsPage.post("/settings/api/revoke", async (c) => {
  if (isCrossSite(c)) throw crossSiteRefused();
  const base = await storePage(c);
  const form = await c.req.parseBody();
  if (!(await csrfTokenMatches(base.signedIn.id, textOf(form.csrf)))) throw crossSiteRefused();
  try {
    await pageCall(c, base.signedIn, revokeGrant, { id: textOf(form.id) ?? "" }, ["NOT_FOUND", "FORBIDDEN", "BAD_REQUEST"]);
  } catch (e) {
    if (isAppError(e) && (e.code === "NOT_FOUND" || e.code === "FORBIDDEN" || e.code === "BAD_REQUEST")) {
      const status = e.code === "NOT_FOUND" ? 404 : e.code === "FORBIDDEN" ? 403 : 400;
      const text = e.code === "BAD_REQUEST" ? "That is not a token of this store." : e.message;
      return render(c, base, { alert: text }, status);
    }
    throw e;
  }
  return c.redirect("/settings/api?revoked=1", 303);
});
