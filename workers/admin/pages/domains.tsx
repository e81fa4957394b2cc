import { Hono } from "hono";
import { addDomain, listDomains, removeDomain, setPrimaryDomain } from "#shared/procedures/domains";
import { pageCall, type AdminContext, type AdminEnv } from "../context";
import { storePage } from "./chrome";
import { handleFormPost, Notice, type FormNotice } from "./form-post";
import { AdminPage } from "./layout";

/**
 * Settings → Domains (`/settings/domains`): each domain's state, the DNS record to create, and add /
 * remove / make primary through the domains procedures. The record's target is the deployment's
 * storefront hostname (`STOREFRONT_DNS_TARGET`); verification is the domains job's.
 */
export const domainsPage = new Hono<AdminEnv>();

const targetOf = (c: AdminContext) => (c.env as { STOREFRONT_DNS_TARGET?: string }).STOREFRONT_DNS_TARGET || "the storefront's hostname";

async function render(c: AdminContext, notice?: FormNotice, status: 200 | 400 | 409 = 200) {
  const { chrome, signedIn } = await storePage(c);
  const { items } = await pageCall(c, signedIn, listDomains);
  const target = targetOf(c);
  return c.html(
    <AdminPage title="Domains" chrome={chrome}>
      <h1>Domains</h1>
      <p class="muted">
        Shoppers reach the store on these hostnames. A new domain stays <strong>pending</strong> and serves nothing until its DNS points
        here and is verified; removing one stops it at once.
      </p>
      <Notice notice={notice} />
      <table>
        <thead>
          <tr>
            <th scope="col">Hostname</th>
            <th scope="col">State</th>
            <th scope="col">DNS record to create</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {items.map((d) => (
            <tr>
              <td>
                {d.hostname}
                {d.isPrimary ? <strong> · primary</strong> : null}
              </td>
              <td>{d.status === "verified" ? "Verified" : "Pending DNS"}</td>
              <td>
                <code>
                  {d.hostname} CNAME {target}
                </code>
              </td>
              <td>
                <form method="post" action="/settings/domains" class="inline">
                  <input type="hidden" name="csrf" value={chrome.csrf} />
                  <input type="hidden" name="id" value={d.id} />
                  {d.status === "verified" && !d.isPrimary ? (
                    <button type="submit" name="action" value="primary" class="secondary">
                      Make primary
                    </button>
                  ) : null}{" "}
                  <button type="submit" name="action" value="remove" class="secondary" aria-label={`Remove ${d.hostname}`}>
                    Remove
                  </button>
                </form>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <form method="post" action="/settings/domains" class="card">
        <input type="hidden" name="csrf" value={chrome.csrf} />
        <input type="hidden" name="action" value="add" />
        <h2>Add a domain</h2>
        <label for="hostname">Hostname</label>
        <input id="hostname" name="hostname" required maxlength={253} placeholder="shop.example.com" />
        <button type="submit">Add domain</button>
      </form>
    </AdminPage>,
    status,
  );
}

// GET /settings/domains (settings.read; Staff get the 403 page).
domainsPage.get("/settings/domains", async (c) => render(c, c.req.query("done") ? { ok: true, text: "Domains saved." } : undefined));

// POST /settings/domains: add, remove or make primary (session CSRF token required).
domainsPage.post("/settings/domains", (c) =>
  handleFormPost(
    c,
    render,
    "/settings/domains?done=1",
    {
      add: (signedIn, field) => pageCall(c, signedIn, addDomain, { hostname: field("hostname") ?? "" }, ["BAD_REQUEST", "CONFLICT"]),
      remove: (signedIn, field) => pageCall(c, signedIn, removeDomain, { id: field("id") }, ["BAD_REQUEST", "CONFLICT"]),
      primary: (signedIn, field) => pageCall(c, signedIn, setPrimaryDomain, { id: field("id") }, ["BAD_REQUEST", "CONFLICT"]),
    },
    "Choose add, remove or make primary.",
  ),
);
