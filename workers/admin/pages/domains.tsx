import { Hono } from "hono";
import type { FC } from "hono/jsx";
import { localDnsEntryFor, LOCAL_DNS_CHOICES, setLocalDnsEntry, type LocalDnsChoice } from "#shared/domains/dns-local";
import { localKvOf } from "#shared/domains/local-kv";
import { badRequest } from "#shared/core/errors";
import { addDomain, listDomains, removeDomain, setPrimaryDomain } from "#shared/procedures/domains";
import { pageCall, type AdminContext, type AdminEnv, type SignedIn } from "../context";
import { call, storePage } from "./chrome";
import { handleFormPost, Notice, type FormNotice } from "./form-post";
import { AdminPage } from "./layout";
import { IstTime } from "./order-words";

/**
 * Settings → Domains (`/settings/domains`): each domain's state, the DNS records to create (the TXT record
 * that verifies it, the CNAME that routes it), its last check and the edge routing, and add / remove /
 * make primary through the domains procedures. The CNAME's target is the deployment's storefront hostname
 * (`STOREFRONT_DNS_TARGET`); verification is the {domains}-verify job's (docs/domains.md). While the local
 * DNS is on (development), each pending domain also has buttons that set what the local DNS answers.
 */
export const domainsPage = new Hono<AdminEnv>();

type Domain = Awaited<ReturnType<typeof listDomains.run>>["items"][number];

const targetOf = (c: AdminContext) => (c.env as { STOREFRONT_DNS_TARGET?: string }).STOREFRONT_DNS_TARGET || "the storefront's hostname";

/** Whether this deployment verifies against the local DNS (never in production: select.ts refuses it). */
function localDnsOn(c: AdminContext): boolean {
  try {
    return c.var.providers.dnsConfig().provider === "local";
  } catch {
    return false;
  }
}

const STATE: Record<Domain["status"], string> = { pending: "Pending DNS", verified: "Verified", failed: "Verification failed" };
const FAILED_STATE: Record<NonNullable<Domain["failure"]>["reason"], string> = { lapsed: "Verification failed", taken: "Taken by another store" };

const LastCheck: FC<{ d: Domain }> = ({ d }) => {
  if (d.failure) return <span>{d.failure.message}</span>;
  if (!d.lastCheck) return <span class="muted">{d.status === "pending" ? "Not checked yet" : "—"}</span>;
  return (
    <span>
      <IstTime at={d.lastCheck.at} />: {d.lastCheck.message}
      {d.lastCheck.nextAt ? (
        <span class="muted">
          {" "}
          (next check <IstTime at={d.lastCheck.nextAt} />)
        </span>
      ) : null}
    </span>
  );
};

const DEV_LABELS: Record<LocalDnsChoice, string> = {
  txt: "Create the TXT record",
  wrong: "Wrong value",
  servfail: "SERVFAIL",
  timeout: "Timeout",
  none: "No record",
};

const LocalDnsButtons: FC<{ d: Domain; csrf: string }> = ({ d, csrf }) => (
  <form method="post" action="/settings/domains" class="inline">
    <input type="hidden" name="csrf" value={csrf} />
    <input type="hidden" name="action" value="dns" />
    <input type="hidden" name="id" value={d.id} />
    <span class="muted">Local DNS: </span>
    {LOCAL_DNS_CHOICES.map((choice) => (
      <button type="submit" name="record" value={choice} class="secondary">
        {DEV_LABELS[choice]}
      </button>
    ))}
  </form>
);

async function render(c: AdminContext, notice?: FormNotice, status: 200 | 400 | 409 = 200) {
  const { chrome, read } = await storePage(c, { domains: call(listDomains, {}) });
  const { items } = read.domains();
  const target = targetOf(c);
  const dev = localDnsOn(c);
  return c.html(
    <AdminPage title="Domains" chrome={chrome}>
      <h1>Domains</h1>
      <p class="muted">
        Shoppers reach the store on these hostnames. A new domain stays <strong>pending</strong> and serves nothing until its TXT record
        is found (checked every few minutes, for up to 7 days); point its CNAME here so the edge can route it. If another store verifies
        the same hostname first, it serves that store and this one fails. Removing one stops it at once.
      </p>
      <Notice notice={notice} />
      <table>
        <thead>
          <tr>
            <th scope="col">Hostname</th>
            <th scope="col">State</th>
            <th scope="col">DNS records to create</th>
            <th scope="col">Last check</th>
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
              <td>
                {d.failure ? FAILED_STATE[d.failure.reason] : STATE[d.status]}
                {d.routing ? <span class="muted"> · edge: {d.routing.sslStatus ? `${d.routing.status}, certificate ${d.routing.sslStatus}` : d.routing.status}</span> : null}
              </td>
              <td>
                <code>
                  {d.verification.name} TXT "{d.verification.value}"
                </code>
                <br />
                <code>
                  {d.hostname} CNAME {target}
                </code>
              </td>
              <td>
                <LastCheck d={d} />
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
                {dev && d.status === "pending" ? <LocalDnsButtons d={d} csrf={chrome.csrf} /> : null}
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

/** Development only: sets what the local DNS answers for one of the store's domains. */
async function setLocalDns(c: AdminContext, signedIn: Pick<SignedIn, "id">, id: string | undefined, record: string | undefined): Promise<void> {
  if (!localDnsOn(c)) throw badRequest([{ path: "action", message: "the local DNS is off" }], "The local DNS is off: DOMAIN_DNS is not local here.");
  const choice = LOCAL_DNS_CHOICES.find((k) => k === record);
  if (!choice) throw badRequest([{ path: "record", message: `one of ${LOCAL_DNS_CHOICES.join(", ")}` }], "Choose what the local DNS answers.");
  // The store's own list: another store's domain id is simply not there.
  const { items } = await pageCall(c, signedIn, listDomains);
  const domain = items.find((d) => d.id === id);
  if (!domain) throw badRequest([{ path: "id", message: "not a domain of this store" }], "No such domain in this store.");
  await setLocalDnsEntry(localKvOf(c.env, "Domain DNS"), domain.verification.name, localDnsEntryFor(choice, domain.verification.value));
}

// GET /settings/domains (settings.read; Staff get the 403 page).
domainsPage.get("/settings/domains", async (c) => render(c, c.req.query("done") ? { ok: true, text: "Domains saved." } : undefined));

// POST /settings/domains: add, remove, make primary, or (development) set the local DNS (session CSRF token required).
domainsPage.post("/settings/domains", (c) =>
  handleFormPost(
    c,
    render,
    "/settings/domains?done=1",
    {
      add: (signedIn, field) => pageCall(c, signedIn, addDomain, { hostname: field("hostname") ?? "" }, ["BAD_REQUEST", "CONFLICT"]),
      remove: (signedIn, field) => pageCall(c, signedIn, removeDomain, { id: field("id") }, ["BAD_REQUEST", "CONFLICT"]),
      primary: (signedIn, field) => pageCall(c, signedIn, setPrimaryDomain, { id: field("id") }, ["BAD_REQUEST", "CONFLICT"]),
      dns: (signedIn, field) => setLocalDns(c, signedIn, field("id"), field("record")),
    },
    "Choose add, remove or make primary.",
  ),
);
