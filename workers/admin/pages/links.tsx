import { Hono } from "hono";
import { AppError } from "#shared/core/errors";
import { permissionDenied } from "#shared/pipeline/principal";
import { createLink, deleteLink, listLinks, updateLink } from "#shared/procedures/links";
import { PAGE_SIZE_MAX } from "#shared/procedures/paging";
import { pageCall, type AdminContext, type AdminEnv } from "../context";
import { call, storePage } from "./chrome";
import { doneNotice, handleFormPost, Notice, RowAction, type FailedPost, type FormNotice } from "./form-post";
import { AdminPage } from "./layout";
import { EMPTY_LINK, LinkForm, linkInput, stateOfFailure, stateOfLink, type LinkFormState } from "./links-form";

/**
 * Links (`/links`): the store's short links with their short URL on the primary domain, target, UTM
 * tags, clicks and credited page views; create, edit (`/links?edit=<id>`) and delete through the links
 * procedures. A member sees only the actions their role allows.
 */
export const linksPage = new Hono<AdminEnv>();

const linkNotFound = () => new AppError("NOT_FOUND", "Short link not found in this store.");

/** The edit form's link and state: from the post that failed, else the stored link named by `?edit=`. */
interface Editing {
  id: string;
  slug: string;
  state: LinkFormState;
}

async function render(c: AdminContext, notice?: FormNotice, status: 200 | 400 | 409 = 200, failed?: FailedPost) {
  const pageNo = Math.max(1, Math.min(100_000, Number.parseInt(c.req.query("page") ?? "1", 10) || 1));
  const { chrome, me, read } = await storePage(c, { links: call(listLinks, { page: pageNo, pageSize: PAGE_SIZE_MAX }) });
  const can = { write: me.permissions.includes("content.write"), delete: me.permissions.includes("records.delete") };
  const { items, total } = read.links();

  const refused = failed ? stateOfFailure(failed) : undefined;
  if (refused && refused.unplaced.length === 0) notice = { ok: false, text: "Not saved: correct the fields marked below." };
  let editing: Editing | undefined;
  if (failed?.action === "update") {
    const id = failed.field("id") ?? "";
    editing = { id, slug: items.find((l) => l.id === id)?.slug ?? refused!.draft.slug, state: refused! };
  } else if (c.req.query("edit") !== undefined) {
    if (!can.write) throw permissionDenied("content.write");
    const link = items.find((l) => l.id === c.req.query("edit"));
    if (!link) throw linkNotFound();
    editing = { id: link.id, slug: link.slug, state: stateOfLink(link) };
  }
  const created = failed?.action === "create" ? refused! : EMPTY_LINK;
  const pageQuery = pageNo > 1 ? `page=${pageNo}&` : "";

  return c.html(
    <AdminPage title="Links" chrome={chrome}>
      <h1>Short links</h1>
      <p class="muted">
        A short link <code>/l/&lt;slug&gt;</code> on the storefront counts a click and sends the shopper to its target with the UTM tags added
        (they replace the target's own tags of the same name). Views are storefront pages seen after arriving through the link.
      </p>
      <Notice notice={notice} />
      {editing ? (
        <LinkForm csrf={chrome.csrf} action="update" id={editing.id} heading={`Edit /l/${editing.slug}`} submit="Save link" state={editing.state} />
      ) : null}
      <table>
        <thead>
          <tr>
            <th scope="col">Short link</th>
            <th scope="col">Target</th>
            <th scope="col">UTM</th>
            <th scope="col">Clicks</th>
            <th scope="col">Views</th>
            {can.write || can.delete ? <th scope="col">Actions</th> : null}
          </tr>
        </thead>
        <tbody>
          {items.map((l) => (
            <tr data-slug={l.slug}>
              <td>
                <strong>{l.slug}</strong>
                <br />
                <code>{l.shortUrl ?? `/l/${l.slug}`}</code>
              </td>
              <td>
                <code>{l.target}</code>
              </td>
              <td>
                {[l.utm.source, l.utm.medium, l.utm.campaign, l.utm.term, l.utm.content].filter((t) => t !== null).join(" · ")}
              </td>
              <td data-clicks>{l.clicks}</td>
              <td>{l.views}</td>
              {can.write || can.delete ? (
                <td>
                  {can.write ? (
                    <a href={`/links?${pageQuery}edit=${l.id}#edit`} aria-label={`Edit ${l.slug}`}>
                      Edit
                    </a>
                  ) : null}{" "}
                  {can.delete ? (
                    <RowAction to="/links" csrf={chrome.csrf} fields={{ id: l.id }} action="delete" label="Delete" ariaLabel={`Delete ${l.slug}`} />
                  ) : null}
                </td>
              ) : null}
            </tr>
          ))}
        </tbody>
      </table>
      {total > items.length ? <p class="muted">{`Showing ${items.length} of ${total}.`}</p> : null}
      {can.write ? <LinkForm csrf={chrome.csrf} action="create" heading="New short link" submit="Create link" state={created} /> : null}
    </AdminPage>,
    status,
  );
}

const DONE: Record<string, string> = { created: "Short link created.", updated: "Short link saved.", deleted: "Short link deleted." };

// GET /links (content.read; without it the 403 page). `?edit=<id>` opens a link of this page for editing (content.write).
linksPage.get("/links", async (c) => render(c, doneNotice(c, DONE)));

// POST /links: create, update or delete (session CSRF token required). Another store's link id is the 404 page.
linksPage.post("/links", (c) =>
  handleFormPost(
    c,
    render,
    (action) => `/links?done=${action === "create" ? "created" : action === "update" ? "updated" : "deleted"}`,
    {
      create: (signedIn, field) => pageCall(c, signedIn, createLink, linkInput(field), ["BAD_REQUEST", "CONFLICT"]),
      update: (signedIn, field) => pageCall(c, signedIn, updateLink, { id: field("id"), ...linkInput(field) }, ["BAD_REQUEST", "CONFLICT", "NOT_FOUND"]),
      delete: (signedIn, field) => pageCall(c, signedIn, deleteLink, { id: field("id") }, ["BAD_REQUEST", "NOT_FOUND"]),
    },
    "Choose create, update or delete.",
  ),
);
