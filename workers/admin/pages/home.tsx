import { Hono } from "hono";
import type { AdminEnv } from "../context";
import { storePage } from "./chrome";
import { AdminPage } from "./layout";

export const home = new Hono<AdminEnv>();

// GET /: the admin home, guarded by staff.me (every role passes; no store → the store picker).
home.get("/", async (c) => {
  const { me, chrome } = await storePage(c);
  const areas = [...new Set(me.permissions.map((p) => p.split(".")[0]))];
  return c.html(
    <AdminPage title="Home" chrome={chrome}>
      <h1>{me.store.name}</h1>
      <p>
        Signed in as {me.user?.name ?? me.user?.email} · your role: <strong data-testid="role">{me.member.roleLabel}</strong>
      </p>
      <div class="grid">
        {chrome.canSee.products ? (
          <a class="card" href="/products">
            <strong>Products</strong>
            <p class="muted">Catalog, variants, prices and stock.</p>
          </a>
        ) : null}
        {chrome.canSee.orders ? (
          <a class="card" href="/orders">
            <strong>Orders</strong>
            <p class="muted">Orders with their payments, parcels and GST; mark paid or cancel.</p>
          </a>
        ) : null}
        {chrome.canSee.settings ? (
          <a class="card" href="/settings">
            <strong>Settings</strong>
            <p class="muted">Store details, storefront password, MCP &amp; API.</p>
          </a>
        ) : null}
      </div>
      <p class="muted">Your role covers: {areas.join(", ")}.</p>
    </AdminPage>,
  );
});
