import { Hono } from "hono";
import { deleteConversation, listConversations } from "#shared/assistant/conversations";
import { isAppError } from "#shared/core/errors";
import { conversationObject } from "../assistant-conversation";
import { pageCall, type AdminContext, type AdminEnv, postSession } from "../context";
import { sessionForm } from "../session-form";
import { call, storePage } from "./chrome";
import { AdminPage } from "./layout";

/**
 * The store's assistant (issue 24 item 1): the member's conversations in this store, the most recently
 * active first, each deletable; readable without JavaScript. The procedures decide whose conversations are
 * listed (the member's own: shared/assistant/conversations.ts); this page only shows them and posts deletions.
 * A conversation's own page and its streamed answers come with the conversation's runtime (docs/assistant.md).
 */
export const assistantPage = new Hono<AdminEnv>();

type Status = 200 | 404;

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
                    <td>{conversation.title}</td>
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
