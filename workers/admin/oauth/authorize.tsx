import { AuthorizationError, type ConsentDescription } from "@cloudflare/workers-oauth-provider";
import { and, eq, isNull, sql } from "drizzle-orm";
import { Hono, type Context } from "hono";
import type { FC } from "hono/jsx";
import { AREA_SCOPES, grantableScopes, isAreaScope, normaliseAreas, type AreaScope } from "#shared/auth/grants";
import { mcpResourceUrl, slugOfResource } from "#shared/auth/mcp-urls";
import { ROLE_LABELS } from "#shared/auth/permissions";
import type { Database } from "#shared/db/database";
import { storeIdBySlug } from "#shared/db/privileged";
import { apiGrant } from "#shared/db/schema";
import { withStore } from "#shared/db/with-store";
import { AppError, isNoStoreError } from "#shared/core/errors";
import type { MemberInfo, StoreInfo } from "#shared/procedures/define";
import { resolveCaller } from "#shared/pipeline/run";
import { listMyStores } from "#shared/procedures/store";
import { csrfOf, currentSession, requirePageSession, runForSession, type AdminContext, type AdminEnv } from "../context";
import { PlainPage } from "../pages/layout";
import { sessionForm } from "../session-form";
import { badRequestPage, checkAuthRequest } from "./authorize-request";
import { authServer, OAUTH_PATHS, userIdFor } from "./server";

/**
 * GET/POST /oauth/authorize: the consent page (SPEC "MCP and OAuth"). The request is checked before
 * anyone signs in (authorize-request.ts); then the member signs in, chooses the store when the client
 * named none, narrows the areas (never beyond their role), and approves or denies. Approval writes
 * the `api_grant` row (kind oauth) and hands its id to the provider in `props`; Postgres stays the
 * authority on what the connection may do.
 */
export const authorize = new Hono<AdminEnv>();

const AREA_LABELS: Record<string, string> = {
  products: "Products",
  orders: "Orders",
  customers: "Customers",
  inventory: "Inventory",
  discounts: "Discounts",
  content: "Pages",
  analytics: "Analytics",
};

const originOf = (c: Context) => new URL(c.req.url).origin;

/** Which areas to show and pre-tick: those asked for (or the read areas when none), within the role. */
export function offeredAreas(requested: readonly string[], grantable: readonly AreaScope[]): { offered: AreaScope[]; refused: string[] } {
  const asked = requested.filter(isAreaScope);
  const wanted = asked.length > 0 ? normaliseAreas(asked) : AREA_SCOPES.filter((s) => s.endsWith(":read"));
  const allowed = new Set(grantable);
  const offered: AreaScope[] = [];
  const refused: string[] = [];
  for (const scope of wanted) {
    if (allowed.has(scope)) offered.push(scope);
    else if (scope.endsWith(":write") && allowed.has(scope.replace(":write", ":read") as AreaScope)) {
      offered.push(scope.replace(":write", ":read") as AreaScope);
      refused.push(scope);
    } else refused.push(scope);
  }
  return { offered: normaliseAreas(offered), refused };
}

const ConsentPage: FC<{
  details: ConsentDescription;
  store: StoreInfo;
  member: MemberInfo;
  email: string;
  handle: string;
  csrf: string;
  resource: string;
  offered: AreaScope[];
  refused: string[];
}> = (p) => (
  <PlainPage title={`Connect ${p.details.clientName}`}>
    <div class="card">
      <h1>
        Connect {p.details.clientName} to {p.store.name}?
      </h1>
      <p class="muted">
        {p.details.clientDomain ? (
          <>
            Published by <strong>{p.details.clientDomain}</strong>.
          </>
        ) : (
          "This app registered itself; its name is not verified."
        )}{" "}
        Access will be sent to <strong>{p.details.redirectHost}</strong>.
      </p>
      {p.details.redirectIsLoopback ? (
        <p class="alert" role="alert">
          This sends access to an app on your computer. Continue only if you just started connecting from it.
        </p>
      ) : null}
      <p>
        It will act as you ({p.email}, {ROLE_LABELS[p.member.role]}) in <strong>{p.store.name}</strong>, only in the areas you tick, and
        never beyond your role. You can disconnect it any time in Settings → MCP &amp; API.
      </p>
      <form method="post" action={OAUTH_PATHS.authorize}>
        <input type="hidden" name="handle" value={p.handle} />
        <input type="hidden" name="csrf" value={p.csrf} />
        <input type="hidden" name="resource" value={p.resource} />
        <fieldset>
          <legend>Areas</legend>
          {p.offered.map((scope) => {
            const [area, level] = scope.split(":") as [string, string];
            return (
              <label class="check">
                <input type="checkbox" name="areas" value={scope} checked /> {AREA_LABELS[area] ?? area}: {level === "write" ? "read and change" : "read"}
              </label>
            );
          })}
          {p.refused.length > 0 ? <p class="muted">Not offered (beyond your role): {p.refused.join(", ")}.</p> : null}
        </fieldset>
        <p>
          <button type="submit" name="decision" value="approve">
            Approve
          </button>{" "}
          <button type="submit" name="decision" value="deny" class="secondary">
            Deny
          </button>
        </p>
      </form>
    </div>
  </PlainPage>
);

async function storeFor(db: Database, slug: string, userId: string) {
  const storeId = await storeIdBySlug(db, slug);
  if (!storeId) throw new AppError("NOT_FOUND", "No store has this MCP address. Check the URL you gave your AI client.");
  try {
    return await resolveCaller(db, { kind: "member", userId, storeId }, "session");
  } catch (e) {
    if (isNoStoreError(e)) throw new AppError("FORBIDDEN", "You are not a member of this store, so you cannot connect an app to it. Sign in with another account.");
    throw e;
  }
}

// GET /oauth/authorize: the request is checked first (authorize-request.ts), then the member signs in.
authorize.get(OAUTH_PATHS.authorize, async (c) => {
  c.header("cache-control", "no-store");
  const checked = await checkAuthRequest(c);
  if (checked instanceof Response) return checked;
  const signedIn = await requirePageSession(c);
  const url = new URL(c.req.url);
  const origin = url.origin;
  const { request, slug } = checked;
  if (!slug) {
    // No resource (RFC 8707): ask which of the member's stores to connect, then come back with one.
    const stores = (await runForSession(c, signedIn, listMyStores, {})) as { name: string; slug: string; roleLabel: string }[];
    return c.html(
      <PlainPage title="Choose a store to connect">
        <div class="card">
          <h1>Which store should this app work in?</h1>
          <ul class="stores">
            {stores.map((s) => {
              const next = new URL(url);
              next.searchParams.set("resource", mcpResourceUrl(origin, s.slug));
              return (
                <li>
                  <a class="card" href={next.pathname + next.search}>
                    <strong>{s.name}</strong> <span class="muted">· {s.roleLabel}</span>
                  </a>
                </li>
              );
            })}
          </ul>
          {stores.length === 0 ? <p>You are not a member of any store.</p> : null}
        </div>
      </PlainPage>,
    );
  }
  const { store, member } = await storeFor(c.var.db, slug, signedIn.info.userId);
  const api = authServer(origin, slug).getOAuthApi(c.env);
  const details = await api.describeConsent(request);
  const consent = await api.beginConsent(request);
  const { offered, refused } = offeredAreas(request.scope, grantableScopes(member.role));
  const html = await c.html(
    <ConsentPage
      details={details}
      store={store}
      member={member}
      email={signedIn.info.email}
      handle={consent.handle}
      csrf={await csrfOf(signedIn)}
      resource={mcpResourceUrl(origin, slug)}
      offered={offered}
      refused={refused}
    />,
  );
  consent.headers.forEach((value, name) => html.headers.append(name, value));
  return html;
});

/** Writes the grant row; an earlier connection of the same client by the same member is revoked. */
async function writeGrant(db: Database, storeId: string, memberId: string, client: { id: string; name: string }, areas: AreaScope[]): Promise<string> {
  return withStore(db, storeId, async (tx) => {
    await tx
      .update(apiGrant)
      .set({ revokedAt: sql`now()` })
      .where(and(eq(apiGrant.storeId, storeId), eq(apiGrant.memberId, memberId), eq(apiGrant.kind, "oauth"), eq(apiGrant.clientId, client.id), isNull(apiGrant.revokedAt)));
    const [row] = await tx
      .insert(apiGrant)
      .values({ storeId, kind: "oauth", memberId, name: client.name.slice(0, 100) || "AI client", areas: normaliseAreas(areas), clientId: client.id.slice(0, 200), clientName: client.name.slice(0, 200) })
      .returning({ id: apiGrant.id });
    return row!.id;
  });
}

/** The consent form's session: none is a 401 that sends the member back to their app. */
async function consentSession(c: AdminContext) {
  const signedIn = await currentSession(c);
  if (!signedIn) throw new AppError("UNAUTHORIZED", "Your session ended. Start connecting again from your app.");
  return signedIn;
}

// POST /oauth/authorize: approve or deny.
authorize.post(OAUTH_PATHS.authorize, async (c) => {
  const { signedIn, form, text: field } = await sessionForm(c, consentSession, { all: true });
  const text = (name: string) => field(name) ?? "";
  const origin = originOf(c);
  const slug = slugOfResource(origin, text("resource"));
  if (!slug) throw badRequestPage("This connection request is not valid any more. Start again from your app.");
  const api = authServer(origin, slug).getOAuthApi(c.env);
  const handle = text("handle");
  try {
    if (text("decision") !== "approve") {
      const denied = await api.denyConsent(c.req.raw, handle);
      return new Response(null, { status: 302, headers: denied.headers });
    }
    const { store, member } = await storeFor(c.var.db, slug, signedIn.info.userId);
    const grantable = new Set(grantableScopes(member.role));
    const chosen = [form["areas"]].flat().filter((v): v is string => typeof v === "string").filter(isAreaScope).filter((s) => grantable.has(s));
    if (chosen.length === 0) throw badRequestPage("Tick at least one area to approve, or deny. Start again from your app.");
    const approved = await api.approveConsent(c.req.raw, handle, { scope: normaliseAreas(chosen) });
    const client = (await api.lookupClient(approved.request.clientId)) ?? { clientName: undefined };
    const clientName = client.clientName ?? approved.request.clientId;
    const grantId = await writeGrant(c.var.db, store.id, member.id, { id: approved.request.clientId, name: clientName }, chosen);
    const { redirectTo } = await api.completeAuthorization({
      request: approved.request,
      userId: userIdFor(slug, member.id),
      metadata: { apiGrantId: grantId },
      scope: normaliseAreas(chosen),
      props: { apiGrantId: grantId, storeId: store.id },
    });
    approved.headers.set("location", redirectTo);
    return new Response(null, { status: 302, headers: approved.headers });
  } catch (e) {
    if (e instanceof AuthorizationError) {
      throw badRequestPage(`This consent page has expired or was already used (${e.description}). Start connecting again from your app.`);
    }
    throw e;
  }
});
