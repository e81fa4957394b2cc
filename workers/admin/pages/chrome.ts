import { constant, together, type Plan } from "#shared/db/plan";
import type { Q } from "#shared/db/steps";
import { badRequest, isAppError, type ErrorCode } from "#shared/core/errors";
import { issuesOf } from "#shared/core/errors";
import { sendCallerUnit } from "#shared/pipeline/read";
import { parseProcedureInput, type StoreProcedure } from "#shared/procedures/define";
import { gatedScope, type Scope } from "#shared/procedures/scope";
import { me as staffMe } from "#shared/procedures/staff";
import { sessionIdFrom, sessionPrincipal, touchSession } from "../auth/session";
import { csrfOf, pageFailure, requireSignIn, type AdminContext, type SignedIn } from "../context";
import type { Chrome } from "./layout";

/**
 * What every store page needs: the session, `staff.me` (who the member is, for the chrome and the
 * page's choices) and the page's own lists, read in ONE round trip (docs/decisions/0015-one-round-trip.md):
 * one unit opens with the session cookie's hash, admits the member against every procedure the page
 * reads, and runs their plans side by side.
 */
export interface StorePage {
  signedIn: SignedIn;
  me: Awaited<ReturnType<typeof staffMe.run>>;
  chrome: Chrome;
}

/** One list or record a page shows: a procedure's read with its input, or a plan the page builds itself. */
export interface PageRead<T> {
  /** The procedure whose permission the read needs (checked in the unit's opening); none for a page-built plan. */
  proc?: StoreProcedure;
  /** Input that failed validation: the read answers this 400 (the page shows it by the field) and sends nothing. */
  invalid?: unknown;
  expected: readonly ErrorCode[];
  build(q: Q, scope: Scope): Plan<T>;
}

type OutputOf<P> = P extends StoreProcedure<infer _I, infer O> ? O : never;

/**
 * A procedure's read for a page. `expected` lists the error codes the page handles itself (a filter
 * form's 400, a record's 404): those come back from the read as they are, others go to the error page.
 */
export function call<P extends StoreProcedure>(proc: P, input: unknown = {}, expected: readonly ErrorCode[] = []): PageRead<OutputOf<P>> {
  const read = proc.read;
  if (!read) throw new TypeError(`${proc.router}.${proc.name} has no read plan`);
  const parsed = parseProcedureInput(proc, input);
  return {
    proc,
    expected,
    ...(parsed.success ? {} : { invalid: badRequest(issuesOf(parsed.error)) }),
    build: (q, scope) => (parsed.success ? (read(q, scope, parsed.data) as Plan<OutputOf<P>>) : constant(undefined as never)),
  };
}

/** The page needs `proc`'s permission but reads nothing of it this time (its form was refused). */
export function checkOnly(proc: StoreProcedure): PageRead<undefined> {
  return { proc, expected: [], build: () => constant(undefined) };
}

/**
 * A read the page shows only to callers with its permission (a section some roles do not see). It is not
 * part of the unit's check: for a caller without the permission its statements find no store (their
 * `scope.store` is null) and it answers null.
 */
export function optional<P extends StoreProcedure>(proc: P, input: unknown = {}): PageRead<OutputOf<P> | null> {
  const read = proc.read;
  if (!read || proc.access === "none") throw new TypeError(`${proc.router}.${proc.name} has no read plan or no permission`);
  const permission = proc.access;
  const input_ = proc.input.parse(input);
  return {
    expected: [],
    build: (q, scope) => {
      const p = read(q, gatedScope(scope, permission), input_) as Plan<OutputOf<P>>;
      return { steps: p.steps, finish: (results) => (scope.caller().permissions.has(permission) ? p.finish(results) : null) };
    },
  };
}

/** A plan the page builds itself (a record's related rows); it checks its own permissions in SQL (`scope.can`). */
export function planned<T>(build: (q: Q, scope: Scope) => Plan<T>, expected: readonly ErrorCode[] = []): PageRead<T> {
  return { expected, build };
}

type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** A plan whose `finish` failure is kept for the page to meet, not thrown at the whole unit. */
const settled = <T>(p: Plan<T>): Plan<Settled<T>> => ({
  steps: p.steps,
  finish(results) {
    try {
      return { ok: true, value: p.finish(results) };
    } catch (error) {
      return { ok: false, error };
    }
  },
});

export type Reads = Record<string, PageRead<unknown>>;
type ReadOf<R extends Reads> = { [K in keyof R]: () => R[K] extends PageRead<infer T> ? T : never };

/**
 * The page's unit. A missing or expired session goes to sign-in, the 'no store' errors to the store
 * picker, anything else (a missing permission) to the error page with its status, as `pageCall` does.
 * `read.<name>()` answers a read or throws its error (reported unless the page expects its code).
 */
export async function storePage<R extends Reads = Record<never, never>>(c: AdminContext, reads: R = {} as R): Promise<StorePage & { read: ReadOf<R> }> {
  const sessionId = sessionIdFrom(c);
  const principal = await sessionPrincipal(sessionId);
  if (!principal || !sessionId) throw requireSignIn(c);
  const entries = Object.entries(reads);
  const procs = [staffMe, ...entries.flatMap(([, r]) => (r.proc ? [r.proc] : []))];
  let unit;
  try {
    unit = await sendCallerUnit(c.var.db, {
      principal,
      procs,
      door: "session",
      plan: (q, scope) =>
        together({
          me: staffMe.read!(q, scope, {}),
          reads: together(Object.fromEntries(entries.map(([name, r]) => [name, settled(r.build(q, scope))]))),
        }),
    });
  } catch (e) {
    if (isAppError(e) && e.code === "UNAUTHORIZED") throw requireSignIn(c);
    throw pageFailure(c, e, procs.at(-1));
  }
  const { session, output } = unit;
  if (!session) throw new Error("A session unit answered no session");
  if (session.touch) c.var.defer(() => touchSession(c.var.db, principal.idHash));
  const signedIn: SignedIn = { id: sessionId, info: session };
  c.set("signedIn", Promise.resolve(signedIn));
  c.header("cache-control", "no-store");
  const { me } = output;
  const read = Object.fromEntries(
    entries.map(([name, r]) => [
      name,
      () => {
        if (r.invalid) throw r.expected.includes("BAD_REQUEST") ? r.invalid : pageFailure(c, r.invalid, r.proc);
        const result = (output.reads as Record<string, Settled<unknown>>)[name]!;
        if (result.ok) return result.value;
        if (isAppError(result.error) && r.expected.includes(result.error.code)) throw result.error;
        throw pageFailure(c, result.error, r.proc);
      },
    ]),
  ) as ReadOf<R>;
  return { signedIn, me, chrome: chromeOf(me, session.email, await csrfOf(signedIn)), read };
}

function chromeOf(me: StorePage["me"], email: string, csrf: string): Chrome {
  const can = (p: string) => me.permissions.includes(p as (typeof me.permissions)[number]);
  return {
    storeName: me.store.name,
    roleLabel: me.member.roleLabel,
    email,
    csrf,
    canSee: {
      products: can("products.read"),
      inventory: can("inventory.read"),
      orders: can("orders.read"),
      customers: can("customers.read"),
      discounts: can("discounts.read"),
      pages: can("content.read"),
      settings: can("settings.read"),
      links: can("content.read"),
      marketing: can("customers.read"),
      team: can("staff.read"),
    },
  };
}
