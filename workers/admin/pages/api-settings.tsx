import { Hono } from "hono";
import { AREA_SCOPES, grantableScopes, TOKEN_LIFETIMES, type AreaScope } from "#shared/api/grants";
import { mcpResourceUrl } from "#shared/api/mcp-urls";
import { AREAS } from "#shared/auth/permissions";
import { isAppError, type AppError, type FieldIssue } from "#shared/http/errors";
import { createToken, listActivity, listGrants, revokeGrant } from "#shared/procedures/api-grants";
import { getMcpSettings, updateMcpSettings, type McpSettings } from "#shared/procedures/mcp-settings";
import { csrfTokenMatches } from "../auth/session";
import { crossSiteRefused, isCrossSite, pageCall, type AdminContext, type AdminEnv } from "../context";
import { storePage } from "./chrome";
import { AdminPage } from "./layout";

/**
 * Settings → MCP & API: the store's MCP URL to paste into an AI client, the store's AI-client settings
 * (mcpSettings.*: Owner and Admin change them, others see them or are told who can), and every
 * member's own script tokens, AI-client connections and activity (Owner and Admin see the whole
 * store's; only the Owner revokes another member's grant). The rules live in the procedures
 * (shared/procedures/api-grants.ts, mcp-settings.ts); this page only shows them.
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
  /** What the member ticked, kept when the AI-client settings form comes back with an error. */
  mcpDraft?: McpSettings;
}

/** Copy buttons: each names its input (data-copy), its status line (data-status) and what it copies (data-what). */
const COPY_SCRIPT = `(function(){document.querySelectorAll("button[data-copy]").forEach(function(b){
var i=document.getElementById(b.getAttribute("data-copy")),s=document.getElementById(b.getAttribute("data-status")),w=b.getAttribute("data-what")||"text";
if(!i)return;b.addEventListener("click",function(){i.select();
var done=function(t){if(s)s.textContent=t};
if(navigator.clipboard&&navigator.clipboard.writeText){navigator.clipboard.writeText(i.value).then(function(){done("Copied.")},function(){done("Copy failed: select the "+w+" and copy it by hand.")})}
else done("Select the "+w+" and copy it by hand.")})})})();`;

/** The store's AI-client settings as the form names them, with the words shown under each. */
const MCP_SETTINGS: { field: keyof McpSettings; label: string; help: string }[] = [
  {
    field: "readCustomerDetails",
    label: "Let clients read customer details",
    help: "On: connected clients may read customers' email, phone and city. Off: they see customers' names only.",
  },
  {
    field: "allowChanges",
    label: "Allow AI clients to make changes",
    help: "On: clients may change products, stock, discounts and pages, within their areas and the connecting member's role. Off: they can only read.",
  },
  {
    field: "changesNeedApproval",
    label: "Changes need approval",
    help: "On: each change a client proposes waits until the member who connected it, or an Owner, approves it on the AI approvals page (proposals lapse after 24 hours). Off: changes run at once.",
  },
];

type Grant = Awaited<ReturnType<typeof listGrants.run>>["items"][number];

const titleCase = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

function When({ at, empty = "never" }: { at: Date | string | null; empty?: string }) {
  if (!at) return <span class="muted">{empty}</span>;
  const d = at instanceof Date ? at : new Date(at);
  return <time datetime={d.toISOString()}>{`${d.toISOString().slice(0, 16).replace("T", " ")} UTC`}</time>;
}

function MemberCell({ g, meId }: { g: Grant; meId: string }) {
  return (
    <td>
      {g.member.email}
      {g.member.id === meId ? <span class="muted"> (you)</span> : null}
    </td>
  );
}

function RevokeButton({ g, label, revocable, csrf }: { g: Grant; label: string; revocable: boolean; csrf: string }) {
  if (!revocable) return null;
  return (
    <form method="post" action="/settings/api/revoke" class="inline">
      <input type="hidden" name="csrf" value={csrf} />
      <input type="hidden" name="id" value={g.id} />
      <button type="submit" class="small danger" aria-label={`Revoke ${label}`}>
        Revoke
      </button>
    </form>
  );
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
  const canChangeMcp = me.permissions.includes("settings.write");
  const canSeeMcp = canChangeMcp || me.permissions.includes("settings.read");
  const [grants, activity, mcpSettings] = await Promise.all([
    pageCall(c, signedIn, listGrants, {}),
    pageCall(c, signedIn, listActivity, { page: 1, pageSize: ACTIVITY_PAGE_SIZE }),
    // Staff lack settings.read: asking would answer the 403 page, so they are not asked.
    canSeeMcp ? pageCall(c, signedIn, getMcpSettings, {}) : Promise.resolve(null),
  ]);
  const shownMcp = view.mcpDraft ?? mcpSettings;
  const aiClients = grants.items.filter((g) => g.kind === "oauth");
  const scriptTokens = grants.items.filter((g) => g.kind === "token");
  const grantable = new Set<AreaScope>(grantableScopes(me.member.role));
  const offeredAreas = AREAS.filter((a) => grantable.has(`${a}:read`) || grantable.has(`${a}:write`));
  const canRevokeOthers = me.permissions.includes("staff.write");
  const revocable = (g: Grant) => g.status === "active" && (g.member.id === me.member.id || canRevokeOthers);
  const storeWide = grants.scope === "store";
  const draft: Draft = view.draft ?? { name: "", areas: [], lifetimeDays: DEFAULT_LIFETIME };
  const origin = new URL(c.req.url).origin;
  const mcpUrl = mcpResourceUrl(origin, me.store.slug);
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
        AI clients (over MCP) and scripts (with a token) work in this store as you, limited to the areas you choose and never beyond your
        role ({me.member.roleLabel}).
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
            <button type="button" id="copy-token" data-copy="new-token" data-status="copy-status" data-what="token">
              Copy
            </button>
          </div>
          <p class="muted" id="copy-status" role="status" aria-live="polite"></p>
          <p class="muted">
            Areas: {view.created.grant.areas?.join(", ")} · expires: <When at={view.created.grant.expiresAt} />
          </p>
        </section>
      ) : null}

      <section id="connect" class="card" aria-labelledby="connect-heading">
        <h2 id="connect-heading">Connect an AI client</h2>
        <label for="mcp-url">This store's MCP URL</label>
        <div class="copy">
          <input id="mcp-url" readonly value={mcpUrl} autocomplete="off" spellcheck={false} />
          <button type="button" id="copy-mcp-url" data-copy="mcp-url" data-status="mcp-url-status" data-what="URL">
            Copy
          </button>
        </div>
        <p class="muted" id="mcp-url-status" role="status" aria-live="polite"></p>
        <p>Paste this URL into Claude, Cursor, the MCP Inspector or any MCP client as a remote (HTTP) server.</p>
        <p>
          It signs you in here and asks which areas to allow; the connection then acts as you, never beyond your role. It appears under
          Connected AI clients below, where you can revoke it.
        </p>
      </section>

      <section id="mcp-settings" class="card" aria-labelledby="mcp-settings-heading">
        <h2 id="mcp-settings-heading">AI client settings</h2>
        <p class="muted">What every connected AI client may do in this store, whoever connected it.</p>
        {shownMcp && canChangeMcp ? (
          <form method="post" action="/settings/api/mcp">
            <input type="hidden" name="csrf" value={chrome.csrf} />
            {MCP_SETTINGS.map((m) => (
              <div class="setting">
                <label class="check">
                  <input type="checkbox" name={m.field} value="on" checked={shownMcp[m.field]} aria-describedby={`${m.field}-help`} />{" "}
                  {m.label}
                </label>
                <p class="muted" id={`${m.field}-help`}>
                  {m.help}
                </p>
              </div>
            ))}
            <div>
              <button type="submit">Save AI client settings</button>
            </div>
          </form>
        ) : shownMcp ? (
          <>
            <dl class="settings">
              {MCP_SETTINGS.map((m) => (
                <>
                  <dt>{m.label}</dt>
                  <dd>
                    <strong>{shownMcp[m.field] ? "On" : "Off"}</strong>
                    <span class="muted"> · {m.help}</span>
                  </dd>
                </>
              ))}
            </dl>
            <p class="muted">Only Owners and Admins can change these.</p>
          </>
        ) : (
          <p>Only Owners and Admins can see and change these.</p>
        )}
      </section>

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
        <p class="muted">{storeWide ? "Everyone's AI-client connections and tokens in this store." : "Your AI-client connections and tokens."}</p>

        <div id="ai-clients" role="group" aria-labelledby="ai-clients-heading">
          <h3 id="ai-clients-heading">Connected AI clients</h3>
          {aiClients.length === 0 ? (
            <p class="card">No AI clients connected yet. Paste the MCP URL above into one to connect it.</p>
          ) : (
            <div class="scroll">
              <table>
                <thead>
                  <tr>
                    <th>Client</th>
                    {storeWide ? <th>Member</th> : null}
                    <th>Areas</th>
                    <th>Connected</th>
                    <th>Last used</th>
                    <th>Status</th>
                    <th>
                      <span class="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {aiClients.map((g) => (
                    <tr>
                      <td>
                        {g.clientName || g.name}
                        {g.clientName && g.clientName !== g.name ? <div class="muted">{g.name}</div> : null}
                      </td>
                      {storeWide ? <MemberCell g={g} meId={me.member.id} /> : null}
                      <td>{(g.areas ?? []).join(", ")}</td>
                      <td>
                        <When at={g.createdAt} />
                      </td>
                      <td>
                        <When at={g.lastUsedAt} />
                      </td>
                      <td>
                        <span class={`badge ${g.status}`}>{g.status}</span>
                      </td>
                      <td>
                        <RevokeButton g={g} label={g.clientName || g.name || "AI client"} revocable={revocable(g)} csrf={chrome.csrf} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </div>

        <div id="script-tokens" role="group" aria-labelledby="script-tokens-heading">
          <h3 id="script-tokens-heading">Script tokens</h3>
          {scriptTokens.length === 0 ? (
            <p class="card">No script tokens yet. Create one above.</p>
          ) : (
            <div class="scroll">
              <table>
                <thead>
                  <tr>
                    <th>Name</th>
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
                  {scriptTokens.map((g) => (
                    <tr>
                      <td>
                        {g.name}
                        {g.hint ? <div class="muted mono">…{g.hint}</div> : null}
                      </td>
                      {storeWide ? <MemberCell g={g} meId={me.member.id} /> : null}
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
                        <RevokeButton g={g} label={g.name ?? "token"} revocable={revocable(g)} csrf={chrome.csrf} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </div>
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
      <script dangerouslySetInnerHTML={{ __html: COPY_SCRIPT }} />
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

// GET /settings/api: MCP URL, AI-client settings, tokens, connections and activity (any member; what each sees is the procedures' rule).
apiSettingsPage.get("/settings/api", async (c) => {
  const base = await storePage(c);
  const notice =
    c.req.query("revoked") === "1"
      ? "Token revoked. It stops working on its next call."
      : c.req.query("mcp") === "saved"
        ? "AI client settings saved."
        : undefined;
  return render(c, base, notice ? { notice } : {});
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

// POST /settings/api/mcp: mcpSettings.update with all three switches (an unticked box is false), then back (303).
apiSettingsPage.post("/settings/api/mcp", async (c) => {
  if (isCrossSite(c)) throw crossSiteRefused();
  const base = await storePage(c);
  const form = await c.req.parseBody();
  if (!(await csrfTokenMatches(base.signedIn.id, textOf(form.csrf)))) throw crossSiteRefused();
  const input: McpSettings = {
    readCustomerDetails: textOf(form.readCustomerDetails) !== undefined,
    allowChanges: textOf(form.allowChanges) !== undefined,
    changesNeedApproval: textOf(form.changesNeedApproval) !== undefined,
  };
  try {
    await pageCall(c, base.signedIn, updateMcpSettings, input, ["FORBIDDEN", "BAD_REQUEST"]);
  } catch (e) {
    if (isAppError(e) && (e.code === "FORBIDDEN" || e.code === "BAD_REQUEST")) {
      return render(c, base, { alert: e.message, mcpDraft: e.code === "BAD_REQUEST" ? input : undefined }, e.code === "FORBIDDEN" ? 403 : 400);
    }
    throw e;
  }
  return c.redirect("/settings/api?mcp=saved", 303);
});
