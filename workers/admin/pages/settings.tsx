import { Hono } from "hono";
import { isAppError } from "#shared/core/errors";
import { TRANSFER_HOLD_HOURS } from "#shared/orders/holds";
import { currentStore, updateStore } from "#shared/procedures/store";
import { pageCall, type AdminContext, type AdminEnv, postSession } from "../context";
import { sessionForm } from "../session-form";
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
          <a href="/settings/domains">manage domains</a> · <a href="/settings/locations">locations &amp; GSTINs</a> ·{" "}
          <a href="/settings/apps">apps &amp; webhooks</a> · <a href="/settings/storefront">storefront look</a> ·{" "}
          <a href="/settings/sales-channels">sales channels (AI agents)</a>
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
        <h2>Payments</h2>
        <label class="check">
          <input type="checkbox" name="manualTransferEnabled" checked={s.manualTransferEnabled} /> Offer bank transfer at checkout
        </label>
        <p class="muted">
          A bank-transfer order holds its items until the money arrives or its time runs out, so anyone can hold stock with it: at most 3 unpaid
          orders per email and per network at a time. Orders waiting for payment are listed on <a href="/orders?view=waiting">Orders → Waiting for payment</a>.
        </p>
        <label for="transferHoldHours">
          Hold a bank-transfer order's items for (hours, {TRANSFER_HOLD_HOURS.min} to {TRANSFER_HOLD_HOURS.max}; default {TRANSFER_HOLD_HOURS.default})
        </label>
        <input id="transferHoldHours" name="transferHoldHours" type="number" inputmode="numeric" required min={TRANSFER_HOLD_HOURS.min} max={TRANSFER_HOLD_HOURS.max} value={String(s.transferHoldHours)} />
        <label for="preorderDepositPercent">Pre-order deposit (% of a pre-ordered item's price paid at checkout; 100 pays in full)</label>
        <input id="preorderDepositPercent" name="preorderDepositPercent" type="number" inputmode="numeric" required min={1} max={100} value={String(s.preorderDepositPercent)} />
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
        <h2>Store assistant</h2>
        <label for="assistantDailyTokens">Daily token budget (model tokens the assistant may use a day, India time; 0 switches it off)</label>
        <input id="assistantDailyTokens" name="assistantDailyTokens" type="number" inputmode="numeric" required min={0} max={100_000_000} value={String(s.assistantDailyTokens)} />
        <p class="muted">
          Today's use is on <a href="/settings/api#assistant-usage">MCP &amp; API</a>.
        </p>
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
  const { signedIn, text: field } = await sessionForm(c, postSession);
  const password = field("storefrontPassword");
  // Numbers as typed: store.update's schema says what is wrong with one that is not a whole number in range.
  const number = (name: string) => {
    const text = field(name)?.trim();
    return text ? { [name]: Number.isFinite(Number(text)) ? Number(text) : text } : {};
  };
  const input = {
    name: field("name") ?? "",
    mcpReadCustomerDetails: field("mcpReadCustomerDetails") !== undefined,
    mcpAllowChanges: field("mcpAllowChanges") !== undefined,
    mcpChangesNeedApproval: field("mcpChangesNeedApproval") !== undefined,
    manualTransferEnabled: field("manualTransferEnabled") !== undefined,
    ...number("transferHoldHours"),
    ...number("preorderDepositPercent"),
    ...number("assistantDailyTokens"),
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
