import { Hono } from "hono";
import { approveApproval, listApprovals, rejectApproval } from "#shared/assistant/approvals";
import { deleteConversation, getConversation, listConversations, startConversation } from "#shared/assistant/conversations";
import type { TranscriptEntry } from "#shared/assistant/conversation";
import { AppError, isAppError } from "#shared/core/errors";
import { inlineScript } from "#shared/http/security-headers";
import { conversationObject, type SendResult } from "../assistant-conversation";
import { sessionPrincipal } from "../auth/session";
import { pageCall, type AdminContext, type AdminEnv, postSession } from "../context";
import { sessionForm } from "../session-form";
import { ToolCard } from "./assistant-cards";
import { call, storePage } from "./chrome";
import { Notice, type FormNotice } from "./form-post";
import { AdminPage } from "./layout";

/**
 * The store's assistant (issue 24 item 1): the member's conversations in this store, the most recently
 * active first, each deletable; readable without JavaScript. The procedures decide whose conversations are
 * listed (the member's own: shared/assistant/conversations.ts); this page only shows them and posts deletions.
 * A conversation's page shows its transcript (the member's words, the assistant's answers, a card per tool
 * call with Approve and Reject on proposals) and a form for the next message; without JavaScript the form posts
 * and the page comes back with the answer; with it, the answer is streamed as it is written (below).
 */
export const assistantPage = new Hono<AdminEnv>();

type Status = 200 | 400 | 404;

/** A page's notice or alert, as the other admin pages show theirs. */
const noticeOf = (view: { notice?: string; alert?: string }): FormNotice | undefined =>
  view.alert ? { ok: false, text: view.alert } : view.notice ? { ok: true, text: view.notice } : undefined;

function When({ at }: { at: Date | string }) {
  const d = at instanceof Date ? at : new Date(at);
  return <time datetime={d.toISOString()}>{`${d.toISOString().slice(0, 16).replace("T", " ")} UTC`}</time>;
}

async function render(c: AdminContext, view: { notice?: string; alert?: string } = {}, status: Status = 200) {
  const { chrome, read } = await storePage(c, { conversations: call(listConversations, {}) });
  const { items } = read.conversations();
  return c.html(
    <AdminPage title="Assistant" chrome={chrome}>
      <h1>Assistant</h1>
      <p class="muted">
        Your conversations with the store's assistant. It reads the store through the same tools as connected AI clients, as you and within your
        role; any change it proposes waits for your Approve.
      </p>
      <Notice notice={noticeOf(view)} />
      <section id="new-conversation" class="card" aria-labelledby="new-heading">
        <h2 id="new-heading">Ask the assistant</h2>
        <form method="post" action="/assistant/new">
          <input type="hidden" name="csrf" value={chrome.csrf} />
          <label for="message">Your question or request</label>
          <textarea id="message" name="message" required maxlength={4000} rows={3} placeholder="What sold today? · Change the price of the Cotton Kurta to ₹899" />
          <button type="submit">Ask</button>
        </form>
      </section>
      <section id="conversations" aria-labelledby="conversations-heading">
        <h2 id="conversations-heading">Your conversations</h2>
        {items.length === 0 ? (
          <p class="muted">No conversations yet.</p>
        ) : (
          <div class="scroll">
            <table>
              <thead>
                <tr>
                  <th>Conversation</th>
                  <th class="num">Messages</th>
                  <th>Last active</th>
                  <th>
                    <span class="sr-only">Delete</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {items.map((conversation) => (
                  <tr>
                    <td>
                      <a href={`/assistant/${conversation.id}`}>{conversation.title}</a>
                    </td>
                    <td class="num">{conversation.messages}</td>
                    <td>
                      <When at={conversation.updatedAt} />
                    </td>
                    <td>
                      <form method="post" action="/assistant/delete" class="inline">
                        <input type="hidden" name="csrf" value={chrome.csrf} />
                        <input type="hidden" name="id" value={conversation.id} />
                        <button type="submit" class="small danger" aria-label={`Delete the conversation "${conversation.title}"`}>
                          Delete
                        </button>
                      </form>
                    </td>
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

// GET /assistant: any member, their own conversations in this store.
assistantPage.get("/assistant", (c) => render(c, c.req.query("deleted") === "1" ? { notice: "Conversation deleted." } : {}));

// POST /assistant/delete: assistant.delete (session CSRF token required); another member's or an unknown id is not found.
assistantPage.post("/assistant/delete", async (c) => {
  const { signedIn, form } = await sessionForm(c, postSession);
  const id = typeof form.id === "string" ? form.id : "";
  let storeId: string;
  try {
    ({ storeId } = await pageCall(c, signedIn, deleteConversation, { id }, ["NOT_FOUND", "BAD_REQUEST"]));
  } catch (e) {
    if (isAppError(e) && (e.code === "NOT_FOUND" || e.code === "BAD_REQUEST")) return render(c, { alert: "That conversation was not found: it was deleted, or it is not yours." }, 404);
    throw e;
  }
  // Its messages go with it, after the answer (the row is gone: nobody can open the conversation meanwhile).
  c.get("defer")(() => conversationObject(c.env.ASSISTANT, storeId, id).clear());
  return c.redirect("/assistant?deleted=1", 303);
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * With JavaScript, the next message's answer is shown as it is written: the form posts to its `data-stream`
 * address, the words are added to a new answer as they come, and when it ends the page is read again (with
 * the tools' cards). The message is shown as text, never markup. Without JavaScript, or if the stream fails,
 * the form posts as it is.
 */
const STREAM_SCRIPT = inlineScript(`(function(){var f=document.querySelector("form[data-stream]");if(!f||!window.fetch||!window.TextDecoder||!window.ReadableStream)return;
f.addEventListener("submit",function(e){var box=f.querySelector("textarea"),text=box.value.trim();if(!text)return;e.preventDefault();
var list=document.getElementById("transcript"),add=function(cls,who){var d=document.createElement("div");d.className="turn "+cls;var w=document.createElement("p");w.className="who";w.textContent=who;var s=document.createElement("p");s.className="said";d.appendChild(w);d.appendChild(s);list.appendChild(d);return s;};
add("you","You").textContent=text;var said=add("assistant","Assistant");said.setAttribute("aria-busy","true");
var body=new URLSearchParams(new FormData(f));body.set("message",text);box.value="";f.querySelector("button").disabled=true;
fetch(f.getAttribute("data-stream"),{method:"POST",body:body,headers:{accept:"text/event-stream"}}).then(function(res){if(!res.ok||!res.body)throw new Error(String(res.status));
var reader=res.body.getReader(),dec=new TextDecoder(),buf="";function pump(){return reader.read().then(function(r){if(r.done){location.reload();return;}
buf+=dec.decode(r.value,{stream:true});var at;while((at=buf.indexOf("\\n\\n"))>=0){var ev=buf.slice(0,at);buf=buf.slice(at+2);var name=(/^event: (.*)$/m.exec(ev)||[])[1],data=(/^data: (.*)$/m.exec(ev)||[])[1];
if(!data)continue;if(name==="text")said.textContent+=JSON.parse(data);if(name==="error"){said.textContent=JSON.parse(data).message;said.setAttribute("role","alert");said.removeAttribute("aria-busy");f.querySelector("button").disabled=false;return;}}
return pump();});}return pump();}).catch(function(){box.value=text;f.submit();});});})();`);

/** What the member reads of a turn's refusal: the refusal's own words (a budget, a limit, a turn running). */
const refusalText = (r: Extract<SendResult, { ok: false }>) => r.message;

/** A proposal's card with its state as it is now. */
function withStateNow(entry: TranscriptEntry, states: ReadonlyMap<string, { status: string; error: string | null }>): TranscriptEntry {
  const output = entry.card?.output as { approvalId?: unknown } | undefined;
  const now = typeof output?.approvalId === "string" ? states.get(output.approvalId) : undefined;
  return now && entry.card ? { ...entry, card: { ...entry.card, output: { ...output, status: now.status, error: now.error } } } : entry;
}

/** One entry of the transcript as the member reads it: their words, the assistant's answers, the tools' cards. */
function Entry({ entry, ctx }: { entry: TranscriptEntry; ctx: { currency: string; csrf: string; conversationId: string } }) {
  const m = entry.message;
  if (m.role === "user") {
    return (
      <div class="turn you">
        <p class="who">You</p>
        <p class="said">{m.content}</p>
      </div>
    );
  }
  if (m.role === "tool") return entry.card ? <ToolCard event={entry.card} ctx={ctx} /> : null;
  if (m.role === "assistant" && m.content && !m.tool_calls?.length) {
    return (
      <div class="turn assistant">
        <p class="who">Assistant</p>
        <p class="said">{m.content}</p>
      </div>
    );
  }
  return null;
}

async function renderConversation(c: AdminContext, id: string, view: { alert?: string; notice?: string } = {}, status: 200 | 400 | 409 | 429 | 403 | 503 = 200) {
  const { chrome, read, me } = await storePage(c, { conversation: call(getConversation, { id }, ["NOT_FOUND", "BAD_REQUEST"]), approvals: call(listApprovals, {}) });
  const conversation = read.conversation();
  // A proposal's card shows its state now (approved, rejected, expired), not the one it had when proposed.
  const states = new Map(read.approvals().items.map((a) => [a.id, { status: a.state, error: a.error }]));
  const transcript = (await conversationObject(c.env.ASSISTANT, me.store.id, conversation.id).transcript()).map((entry) => withStateNow(entry, states));
  const ctx = { currency: me.store.currency, csrf: chrome.csrf, conversationId: conversation.id };
  return c.html(
    <AdminPage title={`Assistant: ${conversation.title}`} chrome={chrome}>
      <p>
        <a href="/assistant">← Your conversations</a>
      </p>
      <h1>{conversation.title}</h1>
      <Notice notice={noticeOf(view)} />
      <section id="transcript" aria-labelledby="transcript-heading" aria-live="polite">
        <h2 id="transcript-heading" class="sr-only">
          Conversation
        </h2>
        {transcript.length === 0 ? <p class="muted">No messages yet.</p> : transcript.map((entry) => <Entry entry={entry} ctx={ctx} />)}
      </section>
      <form method="post" action={`/assistant/${conversation.id}`} class="card" data-stream={`/assistant/${conversation.id}/stream`}>
        <input type="hidden" name="csrf" value={chrome.csrf} />
        <label for="message">Your next message</label>
        <textarea id="message" name="message" required maxlength={4000} rows={3} />
        <button type="submit">Send</button>
      </form>
      <script dangerouslySetInnerHTML={{ __html: STREAM_SCRIPT }} />
    </AdminPage>,
    status,
  );
}

/** Sends the member's message to the conversation's object and comes back to its page (303), or shows its refusal. */
async function sendAndShow(c: AdminContext, sessionId: string, storeId: string, id: string, text: string) {
  const principal = await sessionPrincipal(sessionId);
  if (!principal) throw new AppError("UNAUTHORIZED", "Sign in again.");
  const sent = await conversationObject(c.env.ASSISTANT, storeId, id).send(principal, text);
  if (sent.ok) return c.redirect(`/assistant/${id}#transcript`, 303);
  const status = sent.code === "TOO_MANY_REQUESTS" ? 429 : sent.code === "CONFLICT" ? 409 : sent.code === "FORBIDDEN" ? 403 : 503;
  return renderConversation(c, id, { alert: refusalText(sent) }, status);
}

// POST /assistant/new: assistant.start with the first message, which is sent at once.
assistantPage.post("/assistant/new", async (c) => {
  const { signedIn, form } = await sessionForm(c, postSession);
  const text = typeof form.message === "string" ? form.message : "";
  let started: { id: string; storeId: string };
  try {
    started = await pageCall(c, signedIn, startConversation, { firstMessage: text }, ["BAD_REQUEST"]);
  } catch (e) {
    if (isAppError(e) && e.code === "BAD_REQUEST") return render(c, { alert: "Write a question or a request (at most 4,000 characters)." }, 400);
    throw e;
  }
  return sendAndShow(c, signedIn.id, started.storeId, started.id, text);
});

// GET /assistant/:id: the member's own conversation (anyone else's, or an unknown id, is the 404 page).
assistantPage.get("/assistant/:id", (c) => {
  const id = c.req.param("id");
  if (!UUID.test(id)) throw new AppError("NOT_FOUND", "Conversation not found.");
  return renderConversation(c, id);
});

// POST /assistant/:id: the next message.
assistantPage.post("/assistant/:id", async (c) => {
  const id = c.req.param("id");
  const { signedIn, form } = await sessionForm(c, postSession);
  if (!UUID.test(id)) throw new AppError("NOT_FOUND", "Conversation not found.");
  const text = typeof form.message === "string" ? form.message.trim() : "";
  const conversation = await pageCall(c, signedIn, getConversation, { id }, ["NOT_FOUND"]);
  if (!text || text.length > 4000) return renderConversation(c, id, { alert: "Write a message (at most 4,000 characters)." }, 400);
  return sendAndShow(c, signedIn.id, conversation.storeId, id, text);
});

// POST /assistant/:id/stream: the next message, its answer streamed (server-sent events: text, then done or error).
assistantPage.post("/assistant/:id/stream", async (c) => {
  const id = c.req.param("id");
  const { signedIn, form } = await sessionForm(c, postSession);
  if (!UUID.test(id)) throw new AppError("NOT_FOUND", "Conversation not found.");
  const text = typeof form.message === "string" ? form.message.trim() : "";
  if (!text || text.length > 4000) throw new AppError("BAD_REQUEST", "Write a message (at most 4,000 characters).", { issues: [{ path: "message", message: "must be 1 to 4,000 characters" }] });
  const conversation = await pageCall(c, signedIn, getConversation, { id }, ["NOT_FOUND"]);
  const principal = await sessionPrincipal(signedIn.id);
  if (!principal) throw new AppError("UNAUTHORIZED", "Sign in again.");
  const stream = await conversationObject(c.env.ASSISTANT, conversation.storeId, id).stream(principal, text);
  return new Response(stream, { headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store" } });
});

// POST /assistant/:id/approve and /reject: a proposal's card; the decision is aiApprovals' (only its member decides).
for (const decision of ["approve", "reject"] as const) {
  assistantPage.post(`/assistant/:id/${decision}`, async (c) => {
    const id = c.req.param("id");
    const { signedIn, form } = await sessionForm(c, postSession);
    if (!UUID.test(id)) throw new AppError("NOT_FOUND", "Conversation not found.");
    const approvalId = typeof form.id === "string" ? form.id : "";
    try {
      const decided = await pageCall(c, signedIn, decision === "approve" ? approveApproval : rejectApproval, { id: approvalId }, ["CONFLICT", "FORBIDDEN", "NOT_FOUND", "BAD_REQUEST"]);
      const notice = decided.state === "approved" ? "Approved: the change was made." : decided.state === "rejected" ? "Rejected: nothing was changed." : `The change could not be made: ${decided.error ?? "it failed"}.`;
      return renderConversation(c, id, { notice });
    } catch (e) {
      if (isAppError(e)) return renderConversation(c, id, { alert: e.message }, e.code === "FORBIDDEN" ? 403 : 409);
      throw e;
    }
  });
}
