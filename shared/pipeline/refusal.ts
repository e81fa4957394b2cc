import { pgErrorOf, unitFailure } from "../db/pg-errors";
import { AppError, isAppError, noActiveStore } from "../core/errors";
import type { Procedure } from "../procedures/define";
import { checkCaller, type Door } from "./check";
import { callerFrom, invalidToken, type Caller, type Principal } from "./principal";

// The caller a unit found before it failed (refused for a permission, or a plan's NOT_FOUND): the MCP
// door decides from it which tools the caller sees, without a round trip of its own.
const callers = new WeakMap<object, Caller>();

/** Remembers that `e` happened to a caller the opening had found. */
export function withCaller<E>(e: E, caller: Caller): E {
  if (typeof e === "object" && e !== null) callers.set(e, caller);
  return e;
}

/** The caller behind a unit's error, when its opening found one. */
export function callerBehind(e: unknown): Caller | undefined {
  return typeof e === "object" && e !== null ? callers.get(e) : undefined;
}

/**
 * What a one-round-trip unit's failure means to the caller (migration 0024):
 *   CR001  the opening refused the caller; DETAIL holds the caller it found, and the pipeline's own checks
 *          (./run.ts checkCaller) say why in the words the step-by-step path uses;
 *   CR002  the session is unknown, idle too long or past its lifetime;
 *   CExxx  a statement of the plan refused the work (unit.fail): xxx is the HTTP status of the error code.
 */
export function noSession(): AppError {
  return new AppError("UNAUTHORIZED", "Sign in first: your session is missing or has expired.");
}

interface RefusedDetail {
  session?: { activeStoreId: string | null } | null;
  caller?: Record<string, unknown> | null;
}

function parseDetail(detail: string | undefined): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(detail ?? "{}");
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The AppError a unit's failure stands for, or undefined when it is not one of these. */
export function unitRefusal(e: unknown, who: { principal: Principal; procs: readonly Procedure[]; door: Door; slug: string | null }): AppError | undefined {
  const pg = pgErrorOf(e);
  if (!pg) return undefined;
  if (pg.code === "CR002") return noSession();
  const failed = unitFailure(e);
  if (failed) return failed;
  if (pg.code !== "CR001") return undefined;
  const detail = parseDetail(pg.detail) as RefusedDetail;
  let caller: Caller | undefined;
  try {
    if (who.principal.kind === "session" && detail.session && !detail.session.activeStoreId) return noActiveStore();
    caller = callerFrom(who.principal, detail.caller ? [detail.caller] : []);
    if (who.slug !== null && caller.store.slug !== who.slug) return invalidToken("This token belongs to another store.");
    for (const proc of who.procs) checkCaller(caller, proc, who.door);
  } catch (refusal) {
    if (!isAppError(refusal)) throw refusal;
    return caller ? withCaller(refusal, caller) : refusal;
  }
  // The database and the pipeline disagree: a bug, never an answer to guess at.
  throw new Error("A unit's opening refused a caller that the pipeline's checks admit");
}
