import { Hono } from "hono";
import { isAppError } from "#shared/http/errors";
import { currentStore, updateStore } from "#shared/procedures/store";
import { crossSiteRefused, isCrossSite, pageCall, type AdminContext, type AdminEnv, postSession } from "../context";
import { csrfTokenMatches } from "../auth/session";
import { call, storePage } from "./chrome";
import { AdminPage } from "./layout";

export const settingsPage = new Hono<AdminEnv>();

async function render(c: AdminContext, notice?: { ok: boolean; text: string }, status: 200 | 400 = 200) {
  const { chrome, read } = await storePage(c, { store: call(currentStore, {}) });
  const s = read.store();
  return c.html(
    <AdminPage title="Settings" chrome={chrome}>
      <h1>Settings</h1>
      {notice ? (
        <p class={notice.ok ? "notice" : "alert"} role={notice.ok ? "status" : "alert"}>
          {notice.text}
        </p>
      ) : null}
      <form method="post" action="/settings" class="card">
        <input type="hidden" name="csrf" value={chrome.csrf} />
        <h2>Store</h2>
        <label for="name">Store name</label>
        <input id="name" name="name" required maxlength={200} value={s.name} />
        <p class="muted">
          Address: {s.slug} · currency {s.currency} (fixed) · domains:{" "}
          {s.domains.map((d) => `${d.hostname}${d.status === "pending" ? " (pending)" : ""}`).join(", ") || "none"} ·{" "}
          <a href="/settings/domains">manage domains</a> · <a href="/settings/apps">apps &amp; webhooks</a>
        </p>
        <h2>Storefront password</h2>
        <p class="muted">{s.storefrontPasswordEnabled ? "On: shoppers need the password." : "Off: the storefront is open."}</p>
        <label for="storefrontPassword">New password (8 characters or more; leave empty to keep)</label>
        <input id="storefrontPassword" name="storefrontPassword" type="password" autocomplete="new-password" minlength={8} maxlength={128} />
        {s.storefrontPasswordEnabled ? (
          <label class="check">
            <input type="checkbox" name="removeStorefrontPassword" /> Turn the storefront password off
          </label>
        ) : null}
        <h2>AI clients (MCP)</h2>
        <p class="muted">
          What connected AI clients may do in this store. Tokens and connections themselves are on <a href="/settings/api">MCP &amp; API</a>.
        </p>
        <label class="check">
          <input type="checkbox" name="mcpReadCustomerDetails" checked={s.mcpReadCustomerDetails} /> Let clients read customer details
        </label>
        <label class="check">
          <input type="checkbox" name="mcpAllowChanges" checked={s.mcpAllowChanges} /> Allow AI clients to make changes
        </label>
        <label class="check">
          <input type="checkbox" name="mcpChangesNeedApproval" checked={s.mcpChangesNeedApproval} /> Changes need approval
        </label>
        <button type="submit">Save settings</button>
      </form>
    </AdminPage>,
    status,
  );
}

// GET /settings: the store's settings (store.current; Staff lack settings.read and get the 403 page).
settingsPage.get("/settings", async (c) => {
  const saved = c.req.query("saved") === "1";
  return render(c, saved ? { ok: true, text: "Settings saved." } : undefined);
});

// POST /settings: save the form through store.update (session CSRF token required).
settingsPage.post("/settings", async (c) => {
  if (isCrossSite(c)) throw crossSiteRefused();
  const signedIn = await postSession(c);
  const form = await c.req.parseBody();
  const field = (name: string) => (typeof form[name] === "string" ? (form[name] as string) : undefined);
  if (!(await csrfTokenMatches(signedIn.id, field("csrf")))) throw crossSiteRefused();
  const password = field("storefrontPassword");
  const input = {
    name: field("name") ?? "",
    mcpReadCustomerDetails: field("mcpReadCustomerDetails") !== undefined,
    mcpAllowChanges: field("mcpAllowChanges") !== undefined,
    mcpChangesNeedApproval: field("mcpChangesNeedApproval") !== undefined,
    ...(field("removeStorefrontPassword") !== undefined ? { storefrontPassword: null } : password ? { storefrontPassword: password } : {}),
  };
  try {
    await pageCall(c, signedIn, updateStore, input, ["BAD_REQUEST"]);
  } catch (e) {
    if (isAppError(e) && e.code === "BAD_REQUEST") return render(c, { ok: false, text: e.message }, 400);
    throw e;
  }
  return c.redirect("/settings?saved=1", 303);
});
