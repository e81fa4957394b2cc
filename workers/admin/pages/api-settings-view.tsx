import { grantableScopes, TOKEN_LIFETIMES, type AreaScope } from "#shared/auth/grants";
import { mcpResourceUrl } from "#shared/auth/mcp-urls";
import { AREAS } from "#shared/auth/permissions";
import { inlineScript } from "#shared/http/security-headers";
import { listActivity, listGrants, type createToken } from "#shared/procedures/api-grants";
import { assistantUsageToday, usedTokens, type AssistantUsage } from "#shared/assistant/usage";
import { getMcpSettings, type McpSettings } from "#shared/procedures/mcp-settings";
import type { AdminContext } from "../context";
import { ActivitySection, GrantsSection, When } from "./api-settings-grants";
import { call, optional, storePage } from "./chrome";
import { AdminPage } from "./layout";

/**
 * Settings → MCP & API as a page: the one-time token box, the MCP URL, the AI-client settings, the
 * create-token form, how to call the API, then the grants and activity (./api-settings-grants.tsx).
 * The routes that answer it are in ./api-settings.tsx.
 */

export type Created = Awaited<ReturnType<typeof createToken.run>>;
type Status = 200 | 201 | 400 | 403 | 404;

const ACTIVITY_PAGE_SIZE = 20;
export const DEFAULT_LIFETIME = "90";
const LIFETIME_OPTIONS: { value: string; label: string }[] = [
  ...TOKEN_LIFETIMES.map((d) => ({ value: String(d), label: `${d} days` })),
  { value: "never", label: "Never expires" },
];

/** What the member typed, kept when the form comes back with an error. */
export interface Draft {
  name: string;
  areas: string[];
  lifetimeDays: string;
}

export interface View {
  notice?: string;
  alert?: string;
  created?: Created;
  draft?: Draft;
  /** What the member ticked, kept when the AI-client settings form comes back with an error. */
  mcpDraft?: McpSettings;
}

/** Copy buttons: each names its input (data-copy), its status line (data-status) and what it copies (data-what). */
const COPY_SCRIPT = inlineScript(`(function(){document.querySelectorAll("button[data-copy]").forEach(function(b){
var i=document.getElementById(b.getAttribute("data-copy")),s=document.getElementById(b.getAttribute("data-status")),w=b.getAttribute("data-what")||"text";
if(!i)return;b.addEventListener("click",function(){i.select();
var done=function(t){if(s)s.textContent=t};
if(navigator.clipboard&&navigator.clipboard.writeText){navigator.clipboard.writeText(i.value).then(function(){done("Copied.")},function(){done("Copy failed: select the "+w+" and copy it by hand.")})}
else done("Select the "+w+" and copy it by hand.")})})})();`);

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

const titleCase = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** The new token, answered once in the body of the POST that made it. */
function CreatedToken({ created }: { created: Created }) {
  return (
    <section class="card secret" aria-labelledby="created-heading">
      <h2 id="created-heading">Token “{created.grant.name}” created</h2>
      <p>
        <strong>Copy it now: it is shown only once and cannot be recovered.</strong>
      </p>
      <div class="copy">
        <input id="new-token" readonly value={created.token} aria-label="New token" autocomplete="off" spellcheck={false} />
        <button type="button" id="copy-token" data-copy="new-token" data-status="copy-status" data-what="token">
          Copy
        </button>
      </div>
      <p class="muted" id="copy-status" role="status" aria-live="polite"></p>
      <p class="muted">
        Areas: {created.grant.areas?.join(", ")} · expires: <When at={created.grant.expiresAt} />
      </p>
    </section>
  );
}

function ConnectSection({ mcpUrl }: { mcpUrl: string }) {
  return (
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
  );
}

/** Today's use of the store's assistant against its daily token budget (settings.read; the budget is set in Settings). */
function AssistantUsageSection({ usage }: { usage: AssistantUsage }) {
  const used = usedTokens(usage);
  const n = (v: number) => v.toLocaleString("en-IN");
  return (
    <section id="assistant-usage" class="card" aria-labelledby="assistant-usage-heading">
      <h2 id="assistant-usage-heading">Store assistant: today's use</h2>
      {usage.budget === 0 ? (
        <p>The assistant is switched off: its daily token budget is 0.</p>
      ) : (
        <>
          <p>
            <span data-usage="tokens">{n(used)}</span> of {n(usage.budget)} tokens used today ({usage.day}, India time), in {n(usage.modelCalls)} model call
            {usage.modelCalls === 1 ? "" : "s"}: {n(usage.inputTokens)} read, {n(usage.outputTokens)} written.
          </p>
          <meter min={0} max={usage.budget} value={Math.min(used, usage.budget)} high={usage.budget * 0.8} aria-label="Share of today's assistant budget used" />
        </>
      )}
      <p class="muted">
        When the day's tokens are spent the assistant says so and answers again after midnight. Owners and Admins set the budget in <a href="/settings">Settings</a>.
      </p>
    </section>
  );
}

/** The three switches: a form for Owners and Admins (settings.write), read-only for settings.read, a sentence for the rest. */
function McpSettingsSection({ shown, canChange, csrf }: { shown: McpSettings | null; canChange: boolean; csrf: string }) {
  return (
    <section id="mcp-settings" class="card" aria-labelledby="mcp-settings-heading">
      <h2 id="mcp-settings-heading">AI client settings</h2>
      <p class="muted">What every connected AI client may do in this store, whoever connected it.</p>
      {shown && canChange ? (
        <form method="post" action="/settings/api/mcp">
          <input type="hidden" name="csrf" value={csrf} />
          {MCP_SETTINGS.map((m) => (
            <div class="setting">
              <label class="check">
                <input type="checkbox" name={m.field} value="on" checked={shown[m.field]} aria-describedby={`${m.field}-help`} />{" "}
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
      ) : shown ? (
        <>
          <dl class="settings">
            {MCP_SETTINGS.map((m) => (
              <>
                <dt>{m.label}</dt>
                <dd>
                  <strong>{shown[m.field] ? "On" : "Off"}</strong>
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
  );
}

/** The create-token form: only the areas the role can grant are offered (write includes read). */
function CreateTokenSection({ grantable, draft, csrf }: { grantable: Set<AreaScope>; draft: Draft; csrf: string }) {
  const offeredAreas = AREAS.filter((a) => grantable.has(`${a}:read`) || grantable.has(`${a}:write`));
  return (
    <section class="card" aria-labelledby="create-heading">
      <h2 id="create-heading">Create a token</h2>
      <form method="post" action="/settings/api/tokens">
        <input type="hidden" name="csrf" value={csrf} />
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
  );
}

/** How to call /api/v1 with a token, as a curl against this admin's own origin. */
function UsageSection({ origin }: { origin: string }) {
  const curl = [
    `curl -X POST ${origin}/api/v1/products/list \\`,
    `  -H "Authorization: Bearer $TOKEN" \\`,
    `  -H 'content-type: application/json' \\`,
    `  -d '{"json":{"page":1}}'`,
  ].join("\n");
  return (
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
  );
}

/** Settings → MCP & API with what the procedures let this member see, plus the view's notice, alert, new token or kept drafts. */
export async function render(c: AdminContext, view: View = {}, status: Status = 200) {
  const { chrome, me, read } = await storePage(c, {
    grants: call(listGrants, {}),
    activity: call(listActivity, { page: 1, pageSize: ACTIVITY_PAGE_SIZE }),
    // Staff lack settings.read: the settings are read for those who may see them, null for the others.
    mcpSettings: optional(getMcpSettings, {}),
    assistantUsage: optional(assistantUsageToday, {}),
  });
  const canChangeMcp = me.permissions.includes("settings.write");
  const [grants, activity, mcpSettings, assistantUsage] = [read.grants(), read.activity(), read.mcpSettings(), read.assistantUsage()];
  const origin = new URL(c.req.url).origin;

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

      {view.created ? <CreatedToken created={view.created} /> : null}
      <ConnectSection mcpUrl={mcpResourceUrl(origin, me.store.slug)} />
      <McpSettingsSection shown={view.mcpDraft ?? mcpSettings} canChange={canChangeMcp} csrf={chrome.csrf} />
      {assistantUsage ? <AssistantUsageSection usage={assistantUsage} /> : null}
      <CreateTokenSection
        grantable={new Set<AreaScope>(grantableScopes(me.member.role))}
        draft={view.draft ?? { name: "", areas: [], lifetimeDays: DEFAULT_LIFETIME }}
        csrf={chrome.csrf}
      />
      <UsageSection origin={origin} />
      <GrantsSection grants={grants} meId={me.member.id} canRevokeOthers={me.permissions.includes("staff.write")} csrf={chrome.csrf} />
      <ActivitySection activity={activity} />
      <script dangerouslySetInnerHTML={{ __html: COPY_SCRIPT }} />
    </AdminPage>,
    status,
  );
}
