import { Hono } from "hono";
import { createLink, deleteLink, listLinks } from "#shared/procedures/links";
import { PAGE_SIZE_MAX } from "#shared/procedures/paging";
import { pageCall, type AdminContext, type AdminEnv } from "../context";
import { storePage } from "./chrome";
import { handleFormPost, Notice, type FormNotice } from "./form-post";
import { AdminPage } from "./layout";

/**
 * Links (`/links`): the store's short links with their short URL on the primary domain, target, UTM
 * tags, clicks and credited page views; create and delete through the links procedures.
 */
export const linksPage = new Hono<AdminEnv>();

async function render(c: AdminContext, notice?: FormNotice, status: 200 | 400 | 409 = 200) {
  const { chrome, signedIn } = await storePage(c);
  const pageNo = Math.max(1, Math.min(100_000, Number.parseInt(c.req.query("page") ?? "1", 10) || 1));
  const { items, total } = await pageCall(c, signedIn, listLinks, { page: pageNo, pageSize: PAGE_SIZE_MAX });
  return c.html(
    <AdminPage title="Links" chrome={chrome}>
      <h1>Short links</h1>
      <p class="muted">
        A short link <code>/l/&lt;slug&gt;</code> on the storefront counts a click and sends the shopper to its target with the UTM tags added
        (they replace the target's own tags of the same name). Views are storefront pages seen after arriving through the link.
      </p>
      <Notice notice={notice} />
      <table>
        <thead>
          <tr>
            <th scope="col">Short link</th>
            <th scope="col">Target</th>
            <th scope="col">UTM</th>
            <th scope="col">Clicks</th>
            <th scope="col">Views</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {items.map((l) => (
            <tr>
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
              <td>{l.clicks}</td>
              <td>{l.views}</td>
              <td>
                <form method="post" action="/links" class="inline">
                  <input type="hidden" name="csrf" value={chrome.csrf} />
                  <input type="hidden" name="id" value={l.id} />
                  <button type="submit" name="action" value="delete" class="secondary" aria-label={`Delete ${l.slug}`}>
                    Delete
                  </button>
                </form>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {total > items.length ? <p class="muted">{`Showing ${items.length} of ${total}.`}</p> : null}
      <form method="post" action="/links" class="card">
        <input type="hidden" name="csrf" value={chrome.csrf} />
        <input type="hidden" name="action" value="create" />
        <h2>New short link</h2>
        <label for="slug">Slug</label>
        <input id="slug" name="slug" required maxlength={64} pattern="[a-z0-9\-]{1,64}" placeholder="summer-sale" />
        <label for="target">Target</label>
        <input id="target" name="target" required maxlength={2048} placeholder="/collections/sale or https://example.com/page" />
        {UTM_FIELDS.map(([name, label, required]) => (
          <>
            <label for={name}>{label}</label>
            <input id={name} name={name} required={required} maxlength={200} />
          </>
        ))}
        <button type="submit">Create link</button>
      </form>
    </AdminPage>,
    status,
  );
}

const UTM_FIELDS: [string, string, boolean][] = [
  ["utm_source", "UTM source", true],
  ["utm_medium", "UTM medium", true],
  ["utm_campaign", "UTM campaign", true],
  ["utm_term", "UTM term (optional)", false],
  ["utm_content", "UTM content (optional)", false],
];

// GET /links (content.read; without it the 403 page).
linksPage.get("/links", async (c) => render(c, c.req.query("done") ? { ok: true, text: "Links saved." } : undefined));

// POST /links: create or delete (session CSRF token required).
linksPage.post("/links", (c) =>
  handleFormPost(
    c,
    render,
    "/links?done=1",
    {
      create: (signedIn, field) => {
        const optional = (name: string) => field(name)?.trim() || undefined;
        const utm = { source: field("utm_source") ?? "", medium: field("utm_medium") ?? "", campaign: field("utm_campaign") ?? "", term: optional("utm_term"), content: optional("utm_content") };
        return pageCall(c, signedIn, createLink, { slug: field("slug") ?? "", target: field("target") ?? "", utm }, ["BAD_REQUEST", "CONFLICT"]);
      },
      delete: (signedIn, field) => pageCall(c, signedIn, deleteLink, { id: field("id") }, ["BAD_REQUEST"]),
    },
    "Choose create or delete.",
  ),
);
