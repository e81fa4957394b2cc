import { Hono } from "hono";
import { AREA_SCOPES, TOKEN_LIFETIMES } from "#shared/auth/grants";
import { isAppError, type AppError, type FieldIssue } from "#shared/core/errors";
import { createToken, revokeGrant } from "#shared/procedures/api-grants";
import { updateMcpSettings, type McpSettings } from "#shared/procedures/mcp-settings";
import { pageCall, type AdminEnv, postSession } from "../context";
import { sessionForm } from "../session-form";
import { DEFAULT_LIFETIME, render, type Created, type Draft } from "./api-settings-view";

/**
 * Settings → MCP & API: the store's MCP URL to paste into an AI client, the store's AI-client settings
 * (mcpSettings.*: Owner and Admin change them, others see them or are told who can), and every
 * member's own script tokens, AI-client connections and activity (Owner and Admin see the whole
 * store's; only the Owner revokes another member's grant). The rules live in the procedures
 * (shared/procedures/api-grants.ts, mcp-settings.ts); this page only shows them.
 * A new token is answered in the page body of the POST (201), never through a redirect or a URL.
 * These are the routes; the page is drawn in ./api-settings-view.tsx and ./api-settings-grants.tsx.
 */
export const apiSettingsPage = new Hono<AdminEnv>();

/** A friendlier sentence for the create form's 400s; the procedure's own message otherwise. */
function createErrorText(e: AppError): string {
  if (e.code !== "BAD_REQUEST") return e.message;
  const issues = e.data?.issues as readonly FieldIssue[] | undefined;
  const path = issues?.[0]?.path ?? "";
  if (path === "name") return "Give the token a name (1 to 100 characters).";
  if (path.startsWith("areas")) return "Choose at least one area the token may use.";
  if (path === "lifetimeDays") return "Choose how long the token lasts: 30, 90 or 365 days, or never.";
  return e.message;
}

/** Form values as strings only (a file or a repeated single field counts as missing). */
function textOf(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function listOf(value: unknown): string[] {
  const all = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return all.filter((v): v is string => typeof v === "string");
}

/** "never" → null, "30"/"90"/"365" → a number; anything else is passed on for the procedure to refuse (400). */
function lifetimeOf(value: string | undefined): number | null | string | undefined {
  if (value === "never") return null;
  const n = Number(value);
  return (TOKEN_LIFETIMES as readonly number[]).includes(n) ? n : value;
}

// GET /settings/api: MCP URL, AI-client settings, tokens, connections and activity (any member; what each sees is the procedures' rule).
apiSettingsPage.get("/settings/api", async (c) => {
  const notice =
    c.req.query("revoked") === "1"
      ? "Token revoked. It stops working on its next call."
      : c.req.query("mcp") === "saved"
        ? "AI client settings saved."
        : undefined;
  return render(c, notice ? { notice } : {});
});

// POST /settings/api/tokens: apiGrants.createToken. The token is answered in this page (201), once.
apiSettingsPage.post("/settings/api/tokens", async (c) => {
  const { signedIn, form } = await sessionForm(c, postSession, { all: true });
  const areas = listOf(form.areas);
  const lifetime = textOf(form.lifetimeDays);
  const draft: Draft = {
    name: textOf(form.name) ?? "",
    areas: areas.filter((a) => (AREA_SCOPES as readonly string[]).includes(a)),
    lifetimeDays: lifetime ?? DEFAULT_LIFETIME,
  };
  let created: Created;
  try {
    created = await pageCall(
      c,
      signedIn,
      createToken,
      { name: textOf(form.name) ?? "", areas, lifetimeDays: lifetimeOf(lifetime) },
      ["BAD_REQUEST", "FORBIDDEN"],
    );
  } catch (e) {
    if (isAppError(e) && (e.code === "BAD_REQUEST" || e.code === "FORBIDDEN")) {
      return render(c, { alert: createErrorText(e), draft }, e.code === "BAD_REQUEST" ? 400 : 403);
    }
    throw e;
  }
  return render(c, { created }, 201);
});

// POST /settings/api/revoke: apiGrants.revoke, then back to the page (303) with a notice.
apiSettingsPage.post("/settings/api/revoke", async (c) => {
  const { signedIn, form } = await sessionForm(c, postSession);
  try {
    await pageCall(c, signedIn, revokeGrant, { id: textOf(form.id) ?? "" }, ["NOT_FOUND", "FORBIDDEN", "BAD_REQUEST"]);
  } catch (e) {
    if (isAppError(e) && (e.code === "NOT_FOUND" || e.code === "FORBIDDEN" || e.code === "BAD_REQUEST")) {
      const status = e.code === "NOT_FOUND" ? 404 : e.code === "FORBIDDEN" ? 403 : 400;
      const text = e.code === "BAD_REQUEST" ? "That is not a token of this store." : e.message;
      return render(c, { alert: text }, status);
    }
    throw e;
  }
  return c.redirect("/settings/api?revoked=1", 303);
});

// POST /settings/api/mcp: mcpSettings.update with all three switches (an unticked box is false), then back (303).
apiSettingsPage.post("/settings/api/mcp", async (c) => {
  const { signedIn, form } = await sessionForm(c, postSession);
  const input: McpSettings = {
    readCustomerDetails: textOf(form.readCustomerDetails) !== undefined,
    allowChanges: textOf(form.allowChanges) !== undefined,
    changesNeedApproval: textOf(form.changesNeedApproval) !== undefined,
  };
  try {
    await pageCall(c, signedIn, updateMcpSettings, input, ["FORBIDDEN", "BAD_REQUEST"]);
  } catch (e) {
    if (isAppError(e) && (e.code === "FORBIDDEN" || e.code === "BAD_REQUEST")) {
      return render(c, { alert: e.message, mcpDraft: e.code === "BAD_REQUEST" ? input : undefined }, e.code === "FORBIDDEN" ? 403 : 400);
    }
    throw e;
  }
  return c.redirect("/settings/api?mcp=saved", 303);
});
