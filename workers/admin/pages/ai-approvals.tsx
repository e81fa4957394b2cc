import { Hono } from "hono";
import { approveApproval, listApprovals, rejectApproval } from "#shared/assistant/approvals";
import { isAppError, type AppError, type FieldIssue } from "#shared/core/errors";
import { pageCall, type AdminContext, type AdminEnv, postSession } from "../context";
import { sessionForm } from "../session-form";
import { Changes } from "./ai-approvals-diff";
import { call, storePage } from "./chrome";
import { AdminPage } from "./layout";

/**
 * AI approvals: the changes AI clients connected over MCP proposed, each waiting for the member who
 * connected the client. That member decides; every other member sees it read-only. Who decides is the
 * procedures' rule (shared/assistant/approvals.ts); this page only shows it and posts the decisions.
 */
export const aiApprovalsPage = new Hono<AdminEnv>();

type Approval = Awaited<ReturnType<typeof listApprovals.run>>["items"][number];
type Status = 200 | 400 | 403 | 404 | 409;
type Done = "approved" | "rejected" | "failed";

interface View {
  done?: Done;
  /** The proposal a `done=failed` notice is about (its error is shown). */
  doneId?: string;
  alert?: string;
}

const EXPECTED = ["CONFLICT", "FORBIDDEN", "NOT_FOUND", "BAD_REQUEST"] as const;
const STATUS_OF: Record<(typeof EXPECTED)[number], Status> = { CONFLICT: 409, FORBIDDEN: 403, NOT_FOUND: 404, BAD_REQUEST: 400 };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function When({ at, empty = "—" }: { at: Date | string | null; empty?: string }) {
  if (!at) return <span class="muted">{empty}</span>;
  const d = at instanceof Date ? at : new Date(at);
  return <time datetime={d.toISOString()}>{`${d.toISOString().slice(0, 16).replace("T", " ")} UTC`}</time>;
}

/** Who proposed it, in the member's words. */
const SOURCE: Record<Approval["source"], string> = { mcp: "From an AI client (MCP)", api: "From an AI client (token API)", assistant: "From the store's assistant" };

const decidedAt = (a: Approval) => a.decidedAt ?? (a.state === "expired" ? a.expiresAt : null);

function noticeOf(view: View): string | undefined {
  if (view.done === "approved") return "Approved: the change has been made.";
  if (view.done === "rejected") return "Rejected: nothing was changed.";
  return undefined;
}

function errorText(e: AppError): string {
  if (e.code !== "BAD_REQUEST") return e.message;
  const issues = e.data?.issues as readonly FieldIssue[] | undefined;
  if (issues?.[0]?.path === "reason") return "Keep the reason to 500 characters or fewer.";
  return "That is not a proposal of this store.";
}

async function render(c: AdminContext, view: View = {}, status: Status = 200) {
  const { chrome, read } = await storePage(c, { approvals: call(listApprovals, {}) });
  const { items } = read.approvals();
  const pending = items.filter((a) => a.state === "pending" && a.yours);
  const others = items.filter((a) => a.state === "pending" && !a.yours);
  const decided = items.filter((a) => a.state !== "pending");
  const notice = noticeOf(view);
  const failed = view.done === "failed" ? items.find((a) => a.id === view.doneId) : undefined;

  return c.html(
    <AdminPage title="AI approvals" chrome={chrome}>
      <h1>AI approvals</h1>
      <p class="muted">
        Changes proposed by AI clients connected over MCP, and by the store's assistant in a member's conversation. Nothing changes until it
        is approved; proposals expire after 24 hours. Each waits for the member who connected the client (or who asked the assistant): only
        they can approve or reject it, and everyone else sees it here read-only.
      </p>
      {notice ? (
        <p class="notice" role="status">
          {notice}
        </p>
      ) : null}
      {view.done === "failed" ? (
        <p class="alert" role="alert">
          Approved, but the change could not be made{failed?.error ? `: ${failed.error}` : "."}
        </p>
      ) : null}
      {view.alert ? (
        <p class="alert" role="alert">
          {view.alert}
        </p>
      ) : null}

      {items.length === 0 ? (
        <p class="card">No proposals yet. When an AI client connected over MCP proposes a change, it waits here for you.</p>
      ) : (
        <>
          <section id="pending" aria-labelledby="pending-heading">
            <h2 id="pending-heading">Waiting for you</h2>
            {pending.length === 0 ? <p class="muted">Nothing is waiting.</p> : null}
            {pending.map((a) => (
              <article class="card proposal" aria-labelledby={`p-${a.id}`}>
                <h3 id={`p-${a.id}`}>{a.summary}</h3>
                <p class="muted">
                  {SOURCE[a.source]} · tool <span class="mono">{a.tool}</span> · requested <When at={a.createdAt} /> · expires <When at={a.expiresAt} />
                </p>
                <div class="scroll">
                  <Changes changes={a.diff} />
                </div>
                <div class="decide">
                  <form method="post" action="/ai/approvals/approve" class="inline">
                    <input type="hidden" name="csrf" value={chrome.csrf} />
                    <input type="hidden" name="id" value={a.id} />
                    <button type="submit" class="small">
                      Approve
                    </button>
                  </form>
                  <form method="post" action="/ai/approvals/reject" class="inline reject">
                    <input type="hidden" name="csrf" value={chrome.csrf} />
                    <input type="hidden" name="id" value={a.id} />
                    <label class="sr-only" for={`reason-${a.id}`}>
                      Reason (optional)
                    </label>
                    <input id={`reason-${a.id}`} name="reason" maxlength={500} placeholder="Reason (optional)" />
                    <button type="submit" class="small danger">
                      Reject
                    </button>
                  </form>
                </div>
              </article>
            ))}
          </section>

          {others.length > 0 ? (
            <section id="others" aria-labelledby="others-heading">
              <h2 id="others-heading">Waiting for other members</h2>
              <p class="muted">Made through AI clients other members connected. Only the member who connected the client can decide.</p>
              {others.map((a) => (
                <article class="card proposal" aria-labelledby={`p-${a.id}`}>
                  <h3 id={`p-${a.id}`}>{a.summary}</h3>
                  <p class="muted">
                    {SOURCE[a.source]} · tool <span class="mono">{a.tool}</span> · requested <When at={a.createdAt} /> · expires <When at={a.expiresAt} /> · read-only
                  </p>
                  <div class="scroll">
                    <Changes changes={a.diff} />
                  </div>
                </article>
              ))}
            </section>
          ) : null}

          <section id="decided" aria-labelledby="decided-heading">
            <h2 id="decided-heading">Recent decisions</h2>
            {decided.length === 0 ? (
              <p class="muted">No decisions yet.</p>
            ) : (
              <div class="scroll">
                <table>
                  <thead>
                    <tr>
                      <th>When</th>
                      <th>Summary</th>
                      <th>State</th>
                      <th>Error or reason</th>
                    </tr>
                  </thead>
                  <tbody>
                    {decided.map((a) => (
                      <tr>
                        <td>
                          <When at={decidedAt(a)} />
                        </td>
                        <td>{a.summary}</td>
                        <td>
                          <span class={`badge ${a.state}`}>{a.state}</span>
                        </td>
                        <td>{a.error ? a.error : <span class="muted">—</span>}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </section>
        </>
      )}
    </AdminPage>,
    status,
  );
}

const textOf = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

function doneOf(value: string | undefined): Done | undefined {
  return value === "approved" || value === "rejected" || value === "failed" ? value : undefined;
}

// GET /ai/approvals: any member; which proposals they see is aiApprovals.list's rule.
aiApprovalsPage.get("/ai/approvals", async (c) => {
  const id = c.req.query("id");
  return render(c, { done: doneOf(c.req.query("done")), doneId: id && UUID.test(id) ? id : undefined });
});

/** The form's POST: the CSRF check (sessionForm), the decision, then back to the page (303) or the page with an alert. */
async function decide(c: AdminContext, decision: "approve" | "reject") {
  const { signedIn, form } = await sessionForm(c, postSession);
  const id = textOf(form.id) ?? "";
  try {
    if (decision === "approve") {
      const answer = await pageCall(c, signedIn, approveApproval, { id }, EXPECTED);
      return answer.state === "failed" ? c.redirect(`/ai/approvals?done=failed&id=${encodeURIComponent(answer.id)}`, 303) : c.redirect("/ai/approvals?done=approved", 303);
    }
    const reason = textOf(form.reason)?.trim();
    await pageCall(c, signedIn, rejectApproval, { id, ...(reason ? { reason } : {}) }, EXPECTED);
    return c.redirect("/ai/approvals?done=rejected", 303);
  } catch (e) {
    if (isAppError(e) && (EXPECTED as readonly string[]).includes(e.code)) {
      return render(c, { alert: errorText(e) }, STATUS_OF[e.code as (typeof EXPECTED)[number]]);
    }
    throw e;
  }
}

aiApprovalsPage.post("/ai/approvals/approve", (c) => decide(c, "approve"));
aiApprovalsPage.post("/ai/approvals/reject", (c) => decide(c, "reject"));
