import { Hono } from "hono";
import { isAppError } from "#shared/http/errors";
import { addDomain, listDomains, removeDomain, setPrimaryDomain } from "#shared/procedures/domains";
import { csrfTokenMatches } from "../auth/session";
import { crossSiteRefused, isCrossSite, pageCall, type AdminContext, type AdminEnv } from "../context";
import { storePage } from "./chrome";
import { AdminPage } from "./layout";

/**
 * Settings → Domains (`/settings/domains`): each domain's state, the DNS record to create, and add /
 * remove / make primary through the domains procedures. The record's target is the deployment's
 * storefront hostname (`STOREFRONT_DNS_TARGET`); verification is the domains job's.
 */
export const domainsPage = new Hono<AdminEnv>();

const targetOf = (c: AdminContext) => (c.env as { STOREFRONT_DNS_TARGET?: string }).STOREFRONT_DNS_TARGET || "the storefront's hostname";

async function render(c: AdminContext, notice?: { ok: boolean; text: string }, status: 200 | 400 | 409 = 200) {
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
      {notice ? (
        <p class={notice.ok ? "notice" : "alert"} role={notice.ok ? "status" : "alert"}>
          {notice.text}
        </p>
      ) : null}
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
domainsPage.post("/settings/domains", async (c) => {
  if (isCrossSite(c)) throw crossSiteRefused();
  const { signedIn } = await storePage(c);
  const form = await c.req.parseBody();
  const field = (name: string) => (typeof form[name] === "string" ? (form[name] as string) : undefined);
  if (!(await csrfTokenMatches(signedIn.id, field("csrf")))) throw crossSiteRefused();
  try {
    const action = field("action");
    if (action === "add") await pageCall(c, signedIn, addDomain, { hostname: field("hostname") ?? "" }, ["BAD_REQUEST", "CONFLICT"]);
    else if (action === "remove") await pageCall(c, signedIn, removeDomain, { id: field("id") }, ["BAD_REQUEST", "CONFLICT"]);
    else if (action === "primary") await pageCall(c, signedIn, setPrimaryDomain, { id: field("id") }, ["BAD_REQUEST", "CONFLICT"]);
    else return render(c, { ok: false, text: "Choose add, remove or make primary." }, 400);
  } catch (e) {
    if (isAppError(e) && (e.code === "BAD_REQUEST" || e.code === "CONFLICT")) return render(c, { ok: false, text: e.message }, e.code === "CONFLICT" ? 409 : 400);
    throw e;
  }
  return c.redirect("/settings/domains?done=1", 303);
});
