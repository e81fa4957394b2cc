import { isUuid } from "../db/ids";
import { SESSION_LIFETIMES } from "../auth/sessions";
import { openGrant, openMember, openSession, openToken, type CallCheck, type OpenedRow } from "../db/openings";
import { clientErrorFromConstraint } from "../db/pg-errors";
import { constant, type Plan } from "../db/plan";
import type { Q, Step } from "../db/steps";
import { sendUnit } from "../db/unit";
import type { Database } from "../db/database";
import { badRequest, isAppError, noActiveStore, storeNotFound, type AppError } from "../core/errors";
import { issuesOf } from "../core/errors";
import { parseProcedureInput, type SessionInfo, type StoreProcedure } from "../procedures/define";
import { unitScope, type Scope } from "../procedures/scope";
import { checkFor, checkForAll, resolveOnly, settingsBind, type Door } from "./check";
import { callerFrom, type Caller, type Principal } from "./principal";
import { unitRefusal, withCaller } from "./refusal";
import { tooManyRequests, withHeaders, type Outcome, type RunOptions } from "./outcome";

/**
 * The one-round-trip path of the pipeline (ARCHITECTURE §3-§4, docs/decisions/0015-one-round-trip.md).
 * The same steps as ./run.ts, in the same order, but the database takes the ones that need it in one
 * request: the opening admits the caller (store, member, role, grant, settings: the checks of
 * `checkCaller`, from ./check.ts) and the procedure's plan runs right after it in the same read-only
 * transaction. Input is parsed before the request; when it is invalid the unit carries the opening only,
 * so a caller the checks refuse still hears the refusal, not the validation error.
 */

/** A session as the opening of its unit found it; `touch` asks the door to refresh its last use after the answer. */
export interface OpenedSession extends SessionInfo {
  touch: boolean;
}

export type ReadOutcome = Extract<Outcome, { kind: "done" }> & { session?: OpenedSession };

interface Opened {
  caller?: Record<string, unknown> | null;
  session?: OpenedSession;
}

/** The opening statement that admits `principal` against `check`. */
function openingOf(q: Q, principal: Principal, check: CallCheck | null): Step<OpenedRow[]> {
  switch (principal.kind) {
    case "session":
      return openSession(q, principal.idHash, SESSION_LIFETIMES, check);
    case "member":
      // SPEC "Admin RPC errors": no active store, then a store that does not exist; neither reaches the database.
      if (!principal.storeId) throw noActiveStore();
      if (!isUuid(principal.storeId)) throw storeNotFound();
      return openMember(q, principal.storeId, principal.userId, check);
    case "token":
      return openToken(q, principal.tokenHash, check);
    case "oauth":
      return openGrant(q, principal.storeId, principal.grantId, check);
  }
}

/** Whether the store's AI-client settings bind this principal at this door, as known before the unit. */
function aiClientAt(principal: Principal, door: Door): boolean {
  return settingsBind(door) || principal.kind === "oauth";
}

export interface UnitCall<O> {
  principal: Principal;
  /** The procedures the unit runs for (the caller must pass each one's check); none resolves the caller only. */
  procs: readonly StoreProcedure[];
  door: Door;
  /** The store the door was addressed to (an MCP URL), checked in the opening. */
  slug?: string | null;
  /** A change's unit (read-write); reads are read-only. */
  writes?: boolean;
  plan(q: Q, scope: Scope): Plan<O>;
}

/** One unit: the opening for the principal, then the plan. Throws the pipeline's own errors. */
export async function sendCallerUnit<O>(db: Database, call: UnitCall<O>): Promise<{ caller: Caller; session?: OpenedSession; output: O }> {
  const sent = await sendOpenedUnit(db, call, false);
  if ("refused" in sent) throw sent.refused;
  return sent;
}

/**
 * sendCallerUnit, except that the unit's own refusal of the change (an AppError of the unit: unit.ensure's,
 * or one its plan threw while it was built) comes back as a value, so a proposal applied with its change
 * can be stored as failed with its words. A refused caller and a broken constraint still throw.
 */
export function sendCallerUnitOrRefusal<O>(db: Database, call: UnitCall<O>): Promise<{ caller: Caller; session?: OpenedSession; output: O } | { refused: AppError }> {
  return sendOpenedUnit(db, call, true);
}

async function sendOpenedUnit<O>(
  db: Database,
  call: UnitCall<O>,
  keepRefusal: boolean,
): Promise<{ caller: Caller; session?: OpenedSession; output: O } | { refused: AppError }> {
  const slug = call.slug ?? null;
  const check = call.procs.length === 1 ? checkFor(call.procs[0]!, call.door, slug) : call.procs.length ? checkForAll(call.procs, call.door, slug) : resolveOnly(call.door, slug);
  let admitted: Caller | undefined;
  const scope = unitScope(aiClientAt(call.principal, call.door), () => {
    if (!admitted) throw new Error("A plan asked for its caller before its unit came back");
    return admitted;
  });
  let sent;
  try {
    sent = await sendUnit(db, {
      opening: (q) => openingOf(q, call.principal, check),
      plan: (q) => call.plan(q, scope),
      options: { readOnly: !call.writes },
    });
  } catch (e) {
    // The openings raise no AppError of their own (a refused caller is CR001): this one is the unit's.
    if (keepRefusal && isAppError(e)) return { refused: e };
    throw unitRefusal(e, { principal: call.principal, procs: call.procs, door: call.door, slug }) ?? clientErrorFromConstraint(e) ?? e;
  }
  const opened = sent.opened.opened as Opened;
  const caller = callerFrom(call.principal, opened.caller ? [opened.caller] : []);
  admitted = caller;
  try {
    return { caller, output: sent.finish(), ...(opened.session ? { session: opened.session } : {}) };
  } catch (e) {
    throw withCaller(e, caller);
  }
}

/** Steps 1-8 for a procedure with a read plan: the limiter, then one round trip. */
export async function runRead(
  db: Database,
  principal: Principal,
  proc: StoreProcedure & Required<Pick<StoreProcedure, "read">>,
  rawInput: unknown,
  options: RunOptions & { slug?: string | null },
): Promise<ReadOutcome> {
  const decision = options.limit ? await options.limit() : undefined;
  if (decision && !decision.allowed) throw tooManyRequests(decision);
  const parsed = parseProcedureInput(proc, rawInput);
  try {
    const { caller, session, output } = await sendCallerUnit(db, {
      principal,
      procs: [proc],
      door: options.door,
      slug: options.slug ?? null,
      plan: (q, scope) => (parsed.success ? proc.read(q, scope, parsed.data) : constant(undefined)),
    });
    if (!parsed.success) throw withCaller(badRequest(issuesOf(parsed.error)), caller);
    return { kind: "done", output, caller, decision, ...(session ? { session } : {}) };
  } catch (e) {
    throw withHeaders(e, decision);
  }
}
