import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { HonoEnv } from "#shared/http/app";
import { isAppError, isNoStoreError, type ErrorCode } from "#shared/core/errors";
import { logReporter } from "#shared/http/report";
import { errorFields } from "#shared/core/log";
import { procedureServices, type Providers } from "#shared/pipeline/providers";
import { runSessionProcedure } from "#shared/pipeline/run";
import { runIdempotent, type Answer, type Answered } from "#shared/pipeline/idempotent";
import type { Outcome } from "#shared/pipeline/outcome";
import { isSessionProcedure, type Procedure, type SessionInfo, type StoreProcedure } from "#shared/procedures/define";
import { csrfTokenFor, findSession, sessionIdFrom, sessionPrincipal, touchSession } from "./auth/session";
import type { Principal } from "#shared/pipeline/principal";
import { noSession } from "#shared/pipeline/refusal";
import type { AdminBindings } from "./env";
import { revokeProviderGrant } from "./oauth/server";
import { writeHostEntry } from "#shared/storefront/hosts";
import { mediaServiceOf } from "#shared/media/store";

export interface SignedIn {
  /** The plain session id from the cookie (never logged); forms derive their CSRF token from it. */
  id: string;
  info: SessionInfo;
}

/** The provider services the admin calls: the procedures' gateway, courier, app webhooks and UCP keys' root, sign-in's person check, the domains page's DNS. */
export type AdminProviders = Pick<Providers, "gateway" | "courier" | "appWebhooks" | "ucpSigning" | "challenge" | "dnsConfig">;

export type AdminEnv = HonoEnv<AdminBindings, { signedIn: Promise<SignedIn | null> }, AdminProviders>;
export type AdminContext = Context<AdminEnv>;

/** The request's session, looked up once per request (one round trip) and remembered. */
export function currentSession(c: AdminContext): Promise<SignedIn | null> {
  let lookup = c.get("signedIn");
  if (!lookup) {
    const id = sessionIdFrom(c);
    lookup = id ? findSession(c.var.db, id).then((info) => (info ? { id, info } : null)) : Promise.resolve(null);
    c.set("signedIn", lookup);
  }
  return lookup;
}

type OutputOf<P> = P extends { run(ctx: never, input: never): Promise<infer O> } ? O : never;

/**
 * Runs a registered procedure for a signed-in member (the /api/rpc door and the pages): a session
 * procedure with the session looked up, a store procedure with the session's cookie hash as its principal
 * (its unit finds the session itself: no round trip of its own).
 */
export async function runForSession(c: AdminContext, signedIn: SignedIn, proc: Procedure, input: unknown): Promise<unknown> {
  if (isSessionProcedure(proc)) return runSessionProcedure(c.var.db, signedIn.info, proc, input, { log: c.var.log });
  const principal = await sessionPrincipal(signedIn.id);
  if (!principal) throw noSession();
  return runForPrincipal(c, principal, proc, input);
}

/** A store procedure for a session principal, with the admin's services; the session is touched after the answer when due. */
export async function runForPrincipal(c: AdminContext, principal: Principal, proc: StoreProcedure, input: unknown): Promise<unknown> {
  const { outcome } = await answerForPrincipal(c, principal, proc, input, undefined, () => ({ status: 200, json: "" }));
  return outcome!.kind === "done" ? outcome!.output : outcome!.proposal;
}

/**
 * runForPrincipal with the call's Idempotency-Key (the /api/rpc door): the answer as the door sends it,
 * replayed from the key when it repeats a request (shared/pipeline/idempotent.ts).
 */
export async function answerForPrincipal(
  c: AdminContext,
  principal: Principal,
  proc: StoreProcedure,
  input: unknown,
  key: string | undefined,
  answerOf: (outcome: Outcome) => Answer,
): Promise<Answered> {
  // Host entries are written once the change has committed: a rolled-back change leaves KV alone.
  const hosts: { hostname: string; storeId: string | null }[] = [];
  const options = {
    door: "session" as const,
    log: c.var.log,
    // Work after the answer (an approved proposal's result): off the answer's path.
    defer: c.var.defer,
    services: {
      ...procedureServices(c.var.providers),
      ...mediaServiceOf(c.env),
      revokeOAuthTokens: (grant: { storeSlug: string; memberId: string; apiGrantId: string }) => revokeProviderGrant(c.env, new URL(c.req.url).origin, grant),
      hostsChanged: async (entries: { hostname: string; storeId: string | null }[]) => {
        hosts.push(...entries);
      },
    },
  };
  const answered = await runIdempotent(c.var.db, principal, proc, input, options, key, answerOf);
  // A KV write that fails never fails the committed change: the entries' 60 s hold bounds it.
  await Promise.all(hosts.map((e) => writeHostEntry(c.env.HOSTS, e.hostname, e.storeId))).catch((e: unknown) =>
    c.var.log.warn("storefront.hosts_write_failed", { hostnames: hosts.map((h) => h.hostname), ...errorFields(e) }),
  );
  const outcome = answered.outcome;
  if (outcome?.kind === "done" && outcome.session?.touch && principal.kind === "session") c.var.defer(() => touchSession(c.var.db, principal.idHash));
  return answered;
}

function redirect(location: string): HTTPException {
  return new HTTPException(302, { res: new Response(null, { status: 302, headers: { location, "cache-control": "no-store" } }) });
}

const returnPath = (c: Context) => {
  const url = new URL(c.req.url);
  return url.pathname + url.search;
};

/** The redirect to sign in and come back here. */
export function requireSignIn(c: AdminContext): HTTPException {
  return redirect(`/login?next=${encodeURIComponent(returnPath(c))}`);
}

/** A page's session, or a redirect to sign in and come back. */
export async function requirePageSession(c: AdminContext): Promise<SignedIn> {
  const signedIn = await currentSession(c);
  if (!signedIn) throw requireSignIn(c);
  return signedIn;
}

/**
 * What a page's failed read becomes (SPEC "Admin RPC errors" rule 2): only the three 'no store' errors
 * send the member to the store picker; every other failure (a missing permission included) is reported
 * to error tracking and goes to the error page with its own status, so the picker can never loop.
 */
export function pageFailure(c: AdminContext, e: unknown, proc?: { router: string; name: string }): unknown {
  if (isNoStoreError(e)) return redirect(`/select-store?next=${encodeURIComponent(returnPath(c))}`);
  // A page's unit found no session (expired, signed out elsewhere): sign in again and come back.
  if (isAppError(e) && e.code === "UNAUTHORIZED") return requireSignIn(c);
  logReporter(c.var.log).report(e, { path: c.req.path, ...(proc ? { procedure: `${proc.router}.${proc.name}` } : {}) });
  return e;
}

/**
 * Runs a procedure for a page. SPEC "Admin RPC errors" rule 2: only the three 'no store' errors send
 * the member to the store picker; every other failure (a missing permission included) is reported to
 * error tracking and rethrown to the error page with its own status, so the picker can never loop.
 */
export async function pageCall<P extends StoreProcedure>(
  c: AdminContext,
  /** A store procedure needs only the cookie's session id: its unit finds the session itself. */
  signedIn: Pick<SignedIn, "id">,
  proc: P,
  input: unknown = {},
  /** Error codes the page handles itself (a form's 400): rethrown without a report. */
  expected: readonly ErrorCode[] = [],
): Promise<OutputOf<P>> {
  try {
    const principal = await sessionPrincipal(signedIn.id);
    if (!principal) throw noSession();
    return (await runForPrincipal(c, principal, proc, input)) as OutputOf<P>;
  } catch (e) {
    if (isAppError(e) && expected.includes(e.code) && !isNoStoreError(e)) throw e;
    throw pageFailure(c, e, proc);
  }
}

export const csrfOf = (signedIn: Pick<SignedIn, "id">) => csrfTokenFor(signedIn.id);

/**
 * A form post's session as its cookie names it, without the database: its CSRF token is derived from the
 * cookie, and the change's own unit finds the session (a signed-out one is sent to sign in from there).
 */
export async function postSession(c: AdminContext): Promise<Pick<SignedIn, "id">> {
  const id = sessionIdFrom(c);
  if (!id || !(await sessionPrincipal(id))) throw requireSignIn(c);
  return { id };
}
