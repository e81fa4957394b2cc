import type { Child } from "hono/jsx";
import type { listActivity, listGrants } from "#shared/procedures/api-grants";

/**
 * Settings → MCP & API, the lists: the members' grants (Connected AI clients, Script tokens), each with a
 * Revoke button where the procedures allow it, and the recent API activity. The page is put together in
 * ./api-settings-view.tsx.
 */

export type Grants = Awaited<ReturnType<typeof listGrants.run>>;
type Grant = Grants["items"][number];
export type Activity = Awaited<ReturnType<typeof listActivity.run>>;

export function When({ at, empty = "never" }: { at: Date | string | null; empty?: string }) {
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

/** What both grant tables share: who is asking, whether everyone's grants are shown, and who may revoke. */
interface TableContext {
  storeWide: boolean;
  meId: string;
  revocable: (g: Grant) => boolean;
  csrf: string;
}

/** One kind of grant as a group with its table; a script token has an expiry column and a connection does not. */
interface GrantKind {
  kind: Grant["kind"];
  id: string;
  heading: string;
  empty: string;
  nameHeading: string;
  createdHeading: string;
  withExpiry: boolean;
  NameCell: (props: { g: Grant }) => Child;
  revokeLabel: (g: Grant) => string;
}

const AI_CLIENT: GrantKind = {
  kind: "oauth",
  id: "ai-clients",
  heading: "Connected AI clients",
  empty: "No AI clients connected yet. Paste the MCP URL above into one to connect it.",
  nameHeading: "Client",
  createdHeading: "Connected",
  withExpiry: false,
  NameCell: ({ g }) => (
    <td>
      {g.clientName || g.name}
      {g.clientName && g.clientName !== g.name ? <div class="muted">{g.name}</div> : null}
    </td>
  ),
  revokeLabel: (g) => g.clientName || g.name || "AI client",
};

const SCRIPT_TOKEN: GrantKind = {
  kind: "token",
  id: "script-tokens",
  heading: "Script tokens",
  empty: "No script tokens yet. Create one above.",
  nameHeading: "Name",
  createdHeading: "Created",
  withExpiry: true,
  NameCell: ({ g }) => (
    <td>
      {g.name}
      {g.hint ? <div class="muted mono">…{g.hint}</div> : null}
    </td>
  ),
  revokeLabel: (g) => g.name ?? "token",
};

function GrantsTable({ grants, kind, t }: { grants: Grant[]; kind: GrantKind; t: TableContext }) {
  const { NameCell } = kind;
  return (
    <div class="scroll">
      <table>
        <thead>
          <tr>
            <th>{kind.nameHeading}</th>
            {t.storeWide ? <th>Member</th> : null}
            <th>Areas</th>
            <th>{kind.createdHeading}</th>
            {kind.withExpiry ? <th>Expires</th> : null}
            <th>Last used</th>
            <th>Status</th>
            <th>
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {grants.map((g) => (
            <tr>
              <NameCell g={g} />
              {t.storeWide ? <MemberCell g={g} meId={t.meId} /> : null}
              <td>{(g.areas ?? []).join(", ")}</td>
              <td>
                <When at={g.createdAt} />
              </td>
              {kind.withExpiry ? (
                <td>
                  <When at={g.expiresAt} />
                </td>
              ) : null}
              <td>
                <When at={g.lastUsedAt} />
              </td>
              <td>
                <span class={`badge ${g.status}`}>{g.status}</span>
              </td>
              <td>
                <RevokeButton g={g} label={kind.revokeLabel(g)} revocable={t.revocable(g)} csrf={t.csrf} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function GrantGroup({ grants, kind, t }: { grants: Grant[]; kind: GrantKind; t: TableContext }) {
  return (
    <div id={kind.id} role="group" aria-labelledby={`${kind.id}-heading`}>
      <h3 id={`${kind.id}-heading`}>{kind.heading}</h3>
      {grants.length === 0 ? <p class="card">{kind.empty}</p> : <GrantsTable grants={grants} kind={kind} t={t} />}
    </div>
  );
}

/** Tokens and connections: the caller's own, or the whole store's (grants.scope "store"); Owners revoke anyone's (staff.write). */
export function GrantsSection({ grants, meId, canRevokeOthers, csrf }: { grants: Grants; meId: string; canRevokeOthers: boolean; csrf: string }) {
  const storeWide = grants.scope === "store";
  const revocable = (g: Grant) => g.status === "active" && (g.member.id === meId || canRevokeOthers);
  const t: TableContext = { storeWide, meId, revocable, csrf };
  return (
    <section id="grants" aria-labelledby="grants-heading">
      <h2 id="grants-heading">Tokens and connections</h2>
      <p class="muted">{storeWide ? "Everyone's AI-client connections and tokens in this store." : "Your AI-client connections and tokens."}</p>
      {[AI_CLIENT, SCRIPT_TOKEN].map((kind) => (
        <GrantGroup grants={grants.items.filter((g) => g.kind === kind.kind)} kind={kind} t={t} />
      ))}
    </section>
  );
}

export function ActivitySection({ activity }: { activity: Activity }) {
  return (
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
  );
}
