import type { BodyData } from "hono/utils/body";
import { crossSiteRefused } from "#shared/http/csrf";
import { csrfTokenMatches } from "./auth/session";
import type { AdminContext, SignedIn } from "./context";

/** A session form post, checked: who sent it, what it holds, and a field's text. */
export interface SessionForm<S> {
  signedIn: S;
  form: BodyData<{ all: true }>;
  /** A field as text: undefined when it is missing, a file, or repeated. */
  text: (name: string) => string | undefined;
}

/**
 * The prologue of every admin form post, written once: the post's session as `session` finds it (the cookie
 * alone, the page's session, or null when signed out), its form, and the form's `csrf` field matched against
 * the session's token (a mismatch is refused like a cross-site post, 403). A form that cannot be read counts
 * as empty, so it carries no token. A signed-out post (the sign-out of an ended session, an invitation's new
 * account) has no token to match. Cross-site posts never get here: the same-site guard in front of every
 * cookie door (app.ts, shared/http/csrf.ts) refused them first.
 */
export async function sessionForm<S extends Pick<SignedIn, "id"> | null>(
  c: AdminContext,
  session: (c: AdminContext) => Promise<S>,
  /** Repeated fields as lists (a form of check boxes). */
  options: { all?: boolean } = {},
): Promise<SessionForm<S>> {
  const signedIn = await session(c);
  const form: BodyData<{ all: true }> = await c.req.parseBody({ all: options.all ?? false }).catch(() => ({}));
  const text = (name: string) => {
    const value = form[name];
    return typeof value === "string" ? value : undefined;
  };
  if (signedIn && !(await csrfTokenMatches(signedIn.id, text("csrf")))) throw crossSiteRefused();
  return { signedIn, form, text };
}
