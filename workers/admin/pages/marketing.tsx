import { Hono } from "hono";
import { AUTOMATION_KINDS } from "#shared/db/schema-marketing";
import { PLACEHOLDERS } from "#shared/marketing/render";
import { cancelCampaign, createCampaign, listAutomations, listCampaigns, updateAutomation } from "#shared/procedures/marketing";
import { hasNextPage } from "#shared/procedures/paging";
import { pageCall, type AdminContext, type AdminEnv } from "../context";
import { call, storePage } from "./chrome";
import { issueErrors, TextArea, TextField } from "./fields";
import { doneNotice, handleFormPost, Notice, RowAction, type FailedPost, type FormNotice } from "./form-post";
import { AdminPage } from "./layout";
import { IstTime, StatusBadge, words } from "./order-words";
import { FieldError, Section, Table } from "./parts";

/**
 * Marketing (`/marketing`, customers.read): the store's campaigns with their counts, a form for a new one,
 * and the automations with their settings. Scheduling and cancelling a campaign needs marketing.send (a
 * member's permission, decision 0021), changing automations content.write (decision 0013); a role without
 * them sees the lists only. One procedure call per list; forms work without JavaScript and a
 * refused form comes back with what was typed and each message by its field.
 */
export const marketingPage = new Hono<AdminEnv>();

const PAGE_SIZE = 20;
const AUDIENCES = [
  ["subscribers", "Everyone who agreed to marketing"],
  ["buyers", "Subscribers who have paid for an order"],
  ["non_buyers", "Subscribers who have not bought yet"],
] as const;

const HELP = `Placeholders: ${PLACEHOLDERS.map((p) => `{{${p}}}`).join(" ")}. Every email ends with why the customer gets it and an unsubscribe link.`;

async function render(c: AdminContext, notice?: FormNotice, status: 200 | 400 | 409 = 200, failed?: FailedPost) {
  const page = Math.max(1, Math.min(100_000, Number.parseInt(c.req.query("page") ?? "1", 10) || 1));
  const { chrome, me, read } = await storePage(c, { campaigns: call(listCampaigns, { page, pageSize: PAGE_SIZE }), automations: call(listAutomations, {}) });
  const canSend = me.permissions.includes("marketing.send");
  const canAutomate = me.permissions.includes("content.write");
  const [campaigns, automations] = [read.campaigns(), read.automations()];
  const errors = issueErrors(failed?.error);
  if (failed && Object.keys(errors).length > 0) notice = { ok: false, text: "Not saved: correct the fields marked below." };
  const typed = (name: string, fallback = "") => (failed?.action === "create" ? (failed.field(name) ?? fallback) : fallback);
  const failedKind = failed?.action === "automation" ? failed.field("kind") : undefined;

  return c.html(
    <AdminPage title="Marketing" chrome={chrome}>
      <h1>Marketing</h1>
      <p class="muted">
        Emails to customers who agreed to hear from the store (the customer's marketing consent). A customer without consent is never sent one, even
        if consent is withdrawn after a campaign started.
      </p>
      <Notice notice={notice} />
      <Section id="campaigns" title="Campaigns">
        {campaigns.items.length === 0 ? (
          <p class="muted">No campaigns yet.</p>
        ) : (
          <Table columns={[{ label: "Campaign" }, { label: "Audience" }, { label: "Starts" }, { label: "Status" }, { label: "Sent", num: true }, { label: "Skipped", num: true }, { label: "Failed", num: true }, ...(canSend ? [{ label: "Actions" }] : [])]}>
            {campaigns.items.map((k) => (
              <tr data-campaign={k.name}>
                <td>
                  <strong>{k.name}</strong>
                  <div class="muted">{k.subject}</div>
                </td>
                <td>{words(k.audience)}</td>
                <td>
                  <IstTime at={k.startsAt} />
                </td>
                <td>
                  <StatusBadge value={k.status} label="Status" />
                </td>
                <td class="num">{k.sent}</td>
                <td class="num">{k.skipped}</td>
                <td class="num">{k.failed}</td>
                {canSend ? (
                  <td>
                    {k.status === "scheduled" || k.status === "sending" ? (
                      <RowAction to="/marketing" csrf={chrome.csrf} fields={{ id: k.id }} action="cancel" label="Cancel" ariaLabel={`Cancel ${k.name}`} />
                    ) : null}
                  </td>
                ) : null}
              </tr>
            ))}
          </Table>
        )}
        <nav class="pager" aria-label="Pages">
          {page > 1 ? <a href={`/marketing?page=${page - 1}`}>← Newer</a> : null}
          {hasNextPage(campaigns) ? <a href={`/marketing?page=${page + 1}`}>Older →</a> : null}
        </nav>
        {canSend ? (
          <form method="post" action="/marketing" class="card">
            <input type="hidden" name="csrf" value={chrome.csrf} />
            <input type="hidden" name="action" value="create" />
            <h3>New campaign</h3>
            <TextField id="name" name="name" label="Name (for you)" value={typed("name")} error={errors["name"]} />
            <label for="audience">Audience</label>
            <select id="audience" name="audience">
              {AUDIENCES.map(([value, label]) => (
                <option value={value} selected={typed("audience") === value}>
                  {label}
                </option>
              ))}
            </select>
            <FieldError id="audience-error" error={errors["audience"]} />
            <TextField id="subject" name="subject" label="Subject" value={typed("subject")} error={errors["subject"]} />
            <TextArea id="body" name="body" label="Message" value={typed("body")} error={errors["body"]} help={HELP} />
            <TextField id="startsAt" name="startsAt" label="Start (optional; ISO date-time with offset, e.g. 2026-12-01T09:00:00+05:30)" value={typed("startsAt")} error={errors["startsAt"]} />
            <button type="submit">Schedule campaign</button>
          </form>
        ) : null}
      </Section>
      <Section id="automations" title="Automations">
        {automations.map((a) => {
          const mine = failedKind === a.kind;
          const value = (name: string, stored: string) => (mine ? (failed!.field(name) ?? stored) : stored);
          const err = (name: string) => (mine ? errors[name] : undefined);
          const summary = (
            <>
              <h3>
                {words(a.kind)} <StatusBadge value={a.enabled ? "on" : "off"} label="State" />
              </h3>
              <p class="muted">
                {a.about} Enrolled {a.enrolled}, sent {a.sent}.
              </p>
            </>
          );
          if (!canAutomate) {
            return (
              <div class="card" data-automation={a.kind}>
                {summary}
                <p>
                  Waits {a.delayMinutes} minutes. Subject: {a.subject}
                </p>
              </div>
            );
          }
          return (
            <form method="post" action="/marketing" class="card" data-automation={a.kind}>
              <input type="hidden" name="csrf" value={chrome.csrf} />
              <input type="hidden" name="action" value="automation" />
              <input type="hidden" name="kind" value={a.kind} />
              {summary}
              <label class="check">
                    <input type="checkbox" name="enabled" value="yes" checked={mine ? failed!.field("enabled") === "yes" : a.enabled} /> On
                  </label>
                  <TextField id={`${a.kind}-delay`} name="delayMinutes" label="Wait (minutes after the order)" value={value("delayMinutes", String(a.delayMinutes))} error={err("delayMinutes")} />
                  <TextField id={`${a.kind}-subject`} name="subject" label="Subject" value={value("subject", a.subject)} error={err("subject")} />
                  <TextArea id={`${a.kind}-body`} name="body" label="Message" value={value("body", a.body)} error={err("body")} help={HELP} />
              <button type="submit">Save {words(a.kind).toLowerCase()}</button>
            </form>
          );
        })}
      </Section>
    </AdminPage>,
    status,
  );
}

const DONE: Record<string, string> = { created: "Campaign scheduled. It starts within 30 seconds of its start time.", cancelled: "Campaign cancelled.", saved: "Automation saved." };

marketingPage.get("/marketing", async (c) => render(c, doneNotice(c, DONE)));

const AFTER: Record<string, string> = { create: "created", cancel: "cancelled", automation: "saved" };

/** A whole number typed in a form, as a number (anything else is passed on for the procedure to refuse by name). */
const whole = (raw: string | undefined) => (raw !== undefined && /^\d{1,9}$/.test(raw.trim()) ? Number(raw.trim()) : raw);

marketingPage.post("/marketing", (c) =>
  handleFormPost(
    c,
    render,
    (action) => `/marketing?done=${AFTER[action] ?? "saved"}`,
    {
      create: (signedIn, field) =>
        pageCall(
          c,
          signedIn,
          createCampaign,
          { name: field("name") ?? "", subject: field("subject") ?? "", body: field("body") ?? "", audience: field("audience") ?? "", ...(field("startsAt")?.trim() ? { startsAt: field("startsAt")!.trim() } : {}) },
          ["BAD_REQUEST"],
        ),
      cancel: (signedIn, field) => pageCall(c, signedIn, cancelCampaign, { id: field("id") }, ["BAD_REQUEST", "CONFLICT", "NOT_FOUND"]),
      automation: (signedIn, field) =>
        pageCall(
          c,
          signedIn,
          updateAutomation,
          {
            kind: (AUTOMATION_KINDS as readonly string[]).includes(field("kind") ?? "") ? field("kind") : "",
            enabled: field("enabled") === "yes",
            delayMinutes: whole(field("delayMinutes")),
            subject: field("subject") ?? "",
            body: field("body") ?? "",
          },
          ["BAD_REQUEST"],
        ),
    },
    "Choose create, cancel or automation.",
  ),
);
