import { Hono } from "hono";
import { ROLE_LABELS } from "#shared/auth/permissions";
import { ROLES } from "#shared/db/schema";
import { inviteStaff, listStaff, removeStaff, revokeInvitation, setStaffRole } from "#shared/procedures/staff";
import { pageCall, type AdminContext, type AdminEnv } from "../context";
import { call, storePage } from "./chrome";
import { issueErrors, SelectField, TextField } from "./fields";
import { doneNotice, handleFormPost, Notice, RowAction, type FailedPost, type FormNotice } from "./form-post";
import { AdminPage } from "./layout";
import { IstTime } from "./order-words";
import { Section, Table } from "./parts";

/**
 * The team (issue 13 item 6; `/team`, staff.read): members with their roles, open invitations, and for
 * roles with staff.write: invite (the link is shown once, on the answer to the invite itself, never again),
 * change a role (never the last Owner: the procedure refuses and the page says why), remove, revoke.
 */
export const teamPage = new Hono<AdminEnv>();

const ROLE_OPTIONS = ROLES.map((r) => [r, ROLE_LABELS[r]] as const);

async function render(c: AdminContext, notice?: FormNotice, status: 200 | 400 | 409 = 200, failed?: FailedPost, invited?: { email: string; link: string }) {
  const { chrome, me, read } = await storePage(c, { team: call(listStaff, {}) });
  const team = read.team();
  const canWrite = me.permissions.includes("staff.write");
  const errors = failed?.action === "invite" ? issueErrors(failed.error) : {};
  // The invitation link exists only in this answer: never cached, never sent on as a referrer.
  if (invited) {
    c.header("cache-control", "no-store");
    c.header("referrer-policy", "no-referrer");
  }
  return c.html(
    <AdminPage title="Team" chrome={chrome}>
      <h1>Team</h1>
      <Notice notice={notice} />
      {invited ? (
        <div class="card" id="invited">
          <p>
            Invitation for <strong>{invited.email}</strong> ready. Send them this link; it is shown only this once and works for 7 days:
          </p>
          <label for="invite-link">Invitation link</label>
          <input id="invite-link" readonly value={invited.link} />
        </div>
      ) : null}
      <Section id="members" title="Members">
        <Table columns={[{ label: "Member" }, { label: "Role" }, { label: "Joined" }, ...(canWrite ? [{ label: "Change" }] : [])]}>
          {team.members.map((m) => (
            <tr data-member={m.email}>
              <td>
                {m.name ?? m.email}
                {m.name ? <div class="muted">{m.email}</div> : null}
              </td>
              <td data-role={m.role}>{ROLE_LABELS[m.role]}</td>
              <td>
                <IstTime at={m.joinedAt} />
              </td>
              {canWrite ? (
                <td>
                  <form method="post" action="/team" class="inline">
                    <input type="hidden" name="csrf" value={chrome.csrf} />
                    <input type="hidden" name="memberId" value={m.id} />
                    <label for={`role-${m.id}`} class="visually-hidden">
                      Role of {m.email}
                    </label>
                    <select id={`role-${m.id}`} name="role">
                      {ROLE_OPTIONS.map(([value, label]) => (
                        <option value={value} selected={value === m.role}>
                          {label}
                        </option>
                      ))}
                    </select>
                    <button type="submit" name="action" value="role" aria-label={`Change role of ${m.email}`}>
                      Change role
                    </button>
                  </form>{" "}
                  {m.id === me.member.id ? null : <RowAction to="/team" csrf={chrome.csrf} fields={{ memberId: m.id }} action="remove" label="Remove" ariaLabel={`Remove ${m.email}`} />}
                </td>
              ) : null}
            </tr>
          ))}
        </Table>
      </Section>
      <Section id="invitations" title="Open invitations">
        {team.invitations.length === 0 ? (
          <p class="muted">None.</p>
        ) : (
          <Table columns={[{ label: "Email" }, { label: "Role" }, { label: "Expires" }, ...(canWrite ? [{ label: "Actions" }] : [])]}>
            {team.invitations.map((i) => (
              <tr data-invitation={i.email}>
                <td>{i.email}</td>
                <td>{ROLE_LABELS[i.role]}</td>
                <td>
                  <IstTime at={i.expiresAt} />
                </td>
                {canWrite ? (
                  <td>
                    <RowAction to="/team" csrf={chrome.csrf} fields={{ invitationId: i.id }} action="revoke" label="Revoke" ariaLabel={`Revoke the invitation of ${i.email}`} />
                  </td>
                ) : null}
              </tr>
            ))}
          </Table>
        )}
      </Section>
      {canWrite ? (
        <Section id="invite" title="Invite someone">
          <form method="post" action="/team" class="card">
            <input type="hidden" name="csrf" value={chrome.csrf} />
            <input type="hidden" name="action" value="invite" />
            <TextField id="invite-email" name="email" type="email" label="Email" value={failed?.action === "invite" ? (failed.field("email") ?? "") : ""} error={errors["email"]} />
            <SelectField id="invite-role" name="role" label="Role" value={failed?.action === "invite" ? (failed.field("role") ?? "staff") : "staff"} error={errors["role"]} options={ROLE_OPTIONS} />
            <button type="submit">Create invitation</button>
          </form>
        </Section>
      ) : null}
    </AdminPage>,
    status,
  );
}

const DONE: Record<string, string> = { role: "Role changed.", remove: "Member removed: they lost access at once.", revoke: "Invitation revoked: its link no longer works." };

teamPage.get("/team", (c) => render(c, doneNotice(c, DONE)));

teamPage.post("/team", (c) =>
  handleFormPost(
    c,
    render,
    (action) => `/team?done=${action}`,
    {
      invite: async (signedIn, field) => {
        const made = await pageCall(c, signedIn, inviteStaff, { email: field("email") ?? "", role: field("role") ?? "" }, ["BAD_REQUEST", "CONFLICT"]);
        const link = new URL(made.acceptPath, c.req.url).toString();
        return { render: await render(c, { ok: true, text: "Invitation created." }, 200, undefined, { email: made.invitation.email, link }) };
      },
      role: (signedIn, field) => pageCall(c, signedIn, setStaffRole, { memberId: field("memberId") ?? "", role: field("role") ?? "" }, ["BAD_REQUEST", "CONFLICT", "NOT_FOUND"]),
      remove: (signedIn, field) => pageCall(c, signedIn, removeStaff, { memberId: field("memberId") ?? "" }, ["BAD_REQUEST", "CONFLICT", "NOT_FOUND"]),
      revoke: (signedIn, field) => pageCall(c, signedIn, revokeInvitation, { invitationId: field("invitationId") ?? "" }, ["BAD_REQUEST", "NOT_FOUND"]),
    },
    "Choose Invite, Change role, Remove or Revoke.",
  ),
);
