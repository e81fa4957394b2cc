import { Hono } from "hono";
import type { FC } from "hono/jsx";
import { z } from "zod";
import { permissionDenied } from "#shared/pipeline/principal";
import { createPage, getPage, listPages, publishPage, updatePage } from "#shared/procedures/content";
import { contentParagraphs } from "#shared/storefront/content";
import { pageCall, type AdminContext, type AdminEnv } from "../context";
import { call, storePage } from "./chrome";
import { issueErrors, TextArea, TextField } from "./fields";
import { doneNotice, handleFormPost, idParam, Notice, RowAction, type FailedPost, type Field, type FormNotice } from "./form-post";
import { AdminPage } from "./layout";
import { IstTime, StatusBadge } from "./order-words";
import { Pager, SearchBar, Section, Table } from "./parts";

/**
 * The store's content pages (issue 13 item 5): `/pages` lists them (search, paging) and creates a draft;
 * `/pages/<id>` edits one with a preview rendered as the storefront renders it (Preview posts the form back
 * without saving), and publishes or unpublishes it. Staff read only.
 */
export const contentPagesPage = new Hono<AdminEnv>();

const PAGE_SIZE = 20;
const listQuery = z.object({ page: z.coerce.number().int().min(1).max(100_000).catch(1), query: z.string().trim().max(200).catch("") });
interface Draft {
  title: string;
  handle: string;
  body: string;
}
const draftOf = (field: Field): Draft => ({ title: field("title") ?? "", handle: field("handle") ?? "", body: field("body") ?? "" });
const inputOf = (d: Draft) => ({ title: d.title, ...(d.handle.trim() ? { handle: d.handle.trim() } : {}), body: d.body });

const Preview: FC<{ draft: Draft }> = ({ draft }) => (
  <Section id="preview" title="Preview">
    <div class="card preview" data-preview="">
      <h1>{draft.title}</h1>
      {contentParagraphs(draft.body).map((p) => (
        <p>{p}</p>
      ))}
    </div>
  </Section>
);

const PageForm: FC<{ csrf: string; to: string; draft: Draft; errors: Record<string, string>; create?: boolean }> = ({ csrf, to, draft, errors, create }) => (
  <form method="post" action={to} class="card" id="page-form">
    <input type="hidden" name="csrf" value={csrf} />
    <TextField id="title" label="Title" value={draft.title} error={errors["title"]} maxlength={255} />
    <TextField id="handle" label="Handle (optional; made from the title)" value={draft.handle} error={errors["handle"]} maxlength={100} help="The page's address: /pages/<handle>." />
    <TextArea id="body" label="Text" value={draft.body} error={errors["body"]} rows={12} help="Plain text; a blank line starts a new paragraph." />
    <button type="submit" name="action" value="save">
      {create ? "Create draft" : "Save page"}
    </button>{" "}
    {create ? null : (
      <button type="submit" name="action" value="preview" class="secondary">
        Preview
      </button>
    )}
  </form>
);

async function renderList(c: AdminContext, notice?: FormNotice, status: 200 | 400 | 409 = 200, failed?: FailedPost) {
  const q = listQuery.parse({ page: c.req.query("page"), query: c.req.query("query") });
  const { chrome, me, read } = await storePage(c, { pages: call(listPages, { page: q.page, pageSize: PAGE_SIZE, ...(q.query ? { query: q.query } : {}) }) });
  const canWrite = me.permissions.includes("content.write");
  const result = read.pages();
  const link = (page: number) => `/pages?${new URLSearchParams({ ...(q.query ? { query: q.query } : {}), ...(page > 1 ? { page: String(page) } : {}) })}`;
  return c.html(
    <AdminPage title="Pages" chrome={chrome}>
      <h1>Pages</h1>
      <p class="muted">The store's own pages (About, shipping, returns), at /pages/&lt;handle&gt; on the storefront once published.</p>
      <Notice notice={notice} />
      <SearchBar action="/pages" id="page-query" label="Search pages" placeholder="Title or handle" value={q.query} />
      {result.items.length === 0 ? (
        <p class="card">{q.query ? "No page matches." : "No pages yet."}</p>
      ) : (
        <Table columns={[{ label: "Page" }, { label: "State" }, { label: "Changed" }]}>
          {result.items.map((p) => (
            <tr data-page={p.handle}>
              <td>
                <a href={`/pages/${p.id}`}>{p.title}</a>
                <div class="muted">/pages/{p.handle}</div>
              </td>
              <td>
                <StatusBadge value={p.status} label="State" />
              </td>
              <td>
                <IstTime at={p.updatedAt} />
              </td>
            </tr>
          ))}
        </Table>
      )}
      <Pager list={result} noun="pages" link={link} />
      {canWrite ? (
        <Section id="new-page" title="New page">
          <PageForm csrf={chrome.csrf} to="/pages" draft={failed ? draftOf(failed.field) : { title: "", handle: "", body: "" }} errors={issueErrors(failed?.error)} create />
        </Section>
      ) : null}
    </AdminPage>,
    status,
  );
}

async function renderPage(c: AdminContext, id: string, notice?: FormNotice, status: 200 | 400 | 409 = 200, failed?: FailedPost, preview?: Draft) {
  const { chrome, me, read } = await storePage(c, { page: call(getPage, { id }) });
  const canWrite = me.permissions.includes("content.write");
  const stored = read.page();
  const draft = preview ?? (failed ? draftOf(failed.field) : { title: stored.title, handle: stored.handle, body: stored.body });
  const published = stored.status === "published";
  return c.html(
    <AdminPage title={stored.title} chrome={chrome}>
      <p>
        <a href="/pages">← Pages</a>
      </p>
      <h1>{stored.title}</h1>
      <p class="muted">
        <StatusBadge value={stored.status} label="State" /> {published ? `On the storefront at /pages/${stored.handle}` : "A draft: not on the storefront"}
      </p>
      <Notice notice={notice ?? (preview ? { ok: true, text: "Preview only: nothing is saved until you save the page." } : undefined)} />
      {canWrite ? (
        <>
          <PageForm csrf={chrome.csrf} to={`/pages/${id}`} draft={draft} errors={issueErrors(failed?.error)} />
          <p>
            <RowAction to={`/pages/${id}`} csrf={chrome.csrf} fields={{}} action={published ? "unpublish" : "publish"} label={published ? "Unpublish" : "Publish"} />
          </p>
        </>
      ) : null}
      <Preview draft={draft} />
    </AdminPage>,
    status,
  );
}

const DONE: Record<string, string> = { created: "Draft created.", saved: "Page saved.", publish: "Page published: it is on the storefront.", unpublish: "Page unpublished: it is a draft again." };

contentPagesPage.get("/pages", (c) => renderList(c, doneNotice(c, DONE)));
contentPagesPage.post("/pages", (c) =>
  handleFormPost(
    c,
    renderList,
    "/pages",
    {
      save: async (signedIn, field) => {
        const made = await pageCall(c, signedIn, createPage, inputOf(draftOf(field)), ["BAD_REQUEST", "CONFLICT"]);
        return { redirectTo: `/pages/${made.id}?done=created` };
      },
    },
    "Choose Create draft.",
  ),
);

contentPagesPage.get("/pages/:id", (c) => renderPage(c, idParam(c, "Page"), doneNotice(c, DONE)));
contentPagesPage.post("/pages/:id", (c) => {
  const id = idParam(c, "Page");
  return handleFormPost(
    c,
    (ctx, n, s, f) => renderPage(ctx, id, n, s, f),
    (action) => `/pages/${id}?done=${action === "save" ? "saved" : action}`,
    {
      save: (signedIn, field) => pageCall(c, signedIn, updatePage, { id, ...inputOf(draftOf(field)) }, ["BAD_REQUEST", "CONFLICT", "NOT_FOUND"]),
      preview: async (_signedIn, field, base) => {
        if (!(await base()).me.permissions.includes("content.write")) throw permissionDenied("content.write");
        return { render: await renderPage(c, id, undefined, 200, undefined, draftOf(field)) };
      },
      publish: (signedIn) => pageCall(c, signedIn, publishPage, { id, published: true }, ["NOT_FOUND"]),
      unpublish: (signedIn) => pageCall(c, signedIn, publishPage, { id, published: false }, ["NOT_FOUND"]),
    },
    "Choose Save, Preview, Publish or Unpublish.",
  );
});
