import { Hono } from "hono";
import { isAppError, isNoStoreError } from "#shared/core/errors";
import { validate } from "#shared/http/validate";
import { storesOfSession, switchStore } from "#shared/procedures/store";
import { nextQuery, safeRedirectPath } from "#shared/http/redirect";
import { sessionIdFrom, sessionPrincipal, touchSession } from "../auth/session";
import { csrfOf, requirePageSession, requireSignIn, runForSession, type AdminContext, type AdminEnv, type SignedIn } from "../context";
import { sessionForm } from "../session-form";
import { PlainPage } from "./layout";

export const selectStorePage = new Hono<AdminEnv>();

/** The picker: the session and the person's stores in one round trip; a missing session goes to sign in. */
async function render(c: AdminContext, next: string, alert?: string, status: 200 | 403 | 404 = 200) {
  const sessionId = sessionIdFrom(c);
  const principal = await sessionPrincipal(sessionId);
  const found = principal && sessionId ? await storesOfSession(c.var.db, principal.idHash) : null;
  if (!found || !sessionId) throw requireSignIn(c);
  if (found.session.touch) c.var.defer(() => touchSession(c.var.db, principal!.idHash));
  const { stores } = found;
  const signedIn: SignedIn = { id: sessionId, info: found.session };
  const csrf = await csrfOf(signedIn);
  c.header("cache-control", "no-store");
  return c.html(
    <PlainPage title="Choose a store · Commerce admin">
      <div class="card">
        <h1>Choose a store</h1>
        <p class="muted">Signed in as {signedIn.info.email}.</p>
        {alert ? (
          <p class="alert" role="alert">
            {alert}
          </p>
        ) : null}
        {stores.length === 0 ? (
          <p>You are not a member of any store yet. Ask a store's Owner to invite you.</p>
        ) : (
          <form method="post" action="/select-store">
            <input type="hidden" name="csrf" value={csrf} />
            <input type="hidden" name="next" value={next} />
            <ul class="stores">
              {stores.map((s) => (
                <li>
                  <button type="submit" name="storeId" value={s.id}>
                    <strong>{s.name}</strong> <span class="muted">· {s.roleLabel}{s.active ? " · current" : ""}</span>
                  </button>
                </li>
              ))}
            </ul>
          </form>
        )}
        <form method="post" action="/logout">
          <input type="hidden" name="csrf" value={csrf} />
          <button type="submit">Sign out</button>
        </form>
      </div>
    </PlainPage>,
    status,
  );
}

// GET /select-store: the member's stores. It never redirects on its own, so it cannot loop.
selectStorePage.get("/select-store", validate("query", nextQuery), async (c) => {
  return render(c, safeRedirectPath(c.req.valid("query").next, new URL(c.req.url).origin));
});

// POST /select-store: make the chosen store active (store.switch) and go back to `next`.
selectStorePage.post("/select-store", async (c) => {
  const { signedIn, text } = await sessionForm(c, requirePageSession);
  const next = safeRedirectPath(text("next"), new URL(c.req.url).origin);
  try {
    await runForSession(c, signedIn, switchStore, { storeId: text("storeId") });
  } catch (e) {
    // Shown on the picker itself: sending these back through a redirect would hide why.
    if (isNoStoreError(e) || (isAppError(e) && e.code === "BAD_REQUEST")) {
      const status = isAppError(e) && e.code === "NOT_FOUND" ? 404 : 403;
      return render(c, next, "That store is not available to you. Choose one of these.", status);
    }
    throw e;
  }
  return c.redirect(next, 303);
});
