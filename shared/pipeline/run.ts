import type { Database } from "../db/database";
import { clientErrorFromConstraint } from "../db/pg-errors";
import { constant } from "../db/plan";
import { changeOn, withStore, StoreUnresolved, type StoreTx } from "../db/with-store";
import { badRequest } from "../core/errors";
import { issuesOf } from "../core/errors";
import type { Logger } from "../core/log";
import {
  isSessionProcedure,
  parseProcedureInput,
  procedureKey,
  type Procedure,
  type SessionContext,
  type SessionInfo,
  type SessionProcedure,
  type StoreContext,
  type StoreProcedure,
} from "../procedures/define";
import { recordWrite } from "./activity";
import { keyPlan } from "./idempotency-key";
import { boundBySettings, checkCaller, viaOf, type Door } from "./check";
import { tooManyRequests, withHeaders, type Outcome, type RunOptions } from "./outcome";
import { callerFrom, invalidToken, openingFor, type Caller, type Principal } from "./principal";
import { runRead, sendCallerUnit } from "./read";
import { mayPropose, runWrite, writesDirectly, type ProposalOptions } from "./write";

export type { Door } from "./check";
export { boundBySettings, checkCaller } from "./check";
export { tooManyRequests, withHeaders, type Outcome, type ProposalView, type Proposer, type RunOptions } from "./outcome";
export type { ProposalOptions, ProposalUnits } from "./write";

/**
 * The one executor pipeline (ARCHITECTURE §4-§7, STYLE 13). Every procedure call runs these steps in
 * this order, whatever the door; doors differ only in how they find the principal, which limiter they
 * ask and what they do with the outcome:
 *
 *   1. limit      the per-grant limiter decides before any database work (a refused call opens no connection)
 *   2. caller     one unit opens with the principal's fixed statement: store, member (role read now), grant
 *   3. callable   grants cannot call session-only or member-only procedures
 *   4. permission role ∩ grant areas
 *   5. settings   the store's AI-client settings, for calls they bind (OAuth grants, MCP, approvals)
 *   6. input      zod, 400 naming each field (after the permission, so a refused caller learns nothing)
 *   7. proposal   a change an AI client makes waits in AI approvals when the door or the store says so
 *   8. run        in the same transaction, read-only unless the procedure changes something
 *   9. log        an API change is logged in the same transaction; reads are folded by the door afterwards
 */


export function parseInput(proc: Procedure, raw: unknown): unknown {
  const parsed = parseProcedureInput(proc, raw);
  if (!parsed.success) throw badRequest(issuesOf(parsed.error));
  return parsed.data;
}






/** Steps 3-9 for a caller already resolved inside `tx` (also the approval runner's entry). */
export async function runChecked(tx: StoreTx, caller: Caller, proc: Procedure, rawInput: unknown, options: RunOptions): Promise<Outcome> {
  const key = procedureKey(proc);
  checkCaller(caller, proc, options.door);
  const aiClient = boundBySettings(caller, options.door);
  const input = parseInput(proc, rawInput);
  const ctx: StoreContext = {
    tx,
    store: caller.store,
    member: caller.member,
    permissions: caller.permissions,
    via: viaOf(options.door),
    aiClient,
    log: options.log,
    ...(options.services ? { services: options.services } : {}),
  };
  const proposes = proc.mutates && (options.door === "mcp" || options.door === "assistant" || (options.door === "token" && caller.grant?.kind === "oauth" && caller.store.mcpChangesNeedApproval));
  // An API door's change call is logged with it (the approval runner's change was logged when proposed).
  const logChange = async () => {
    if (caller.grant && (options.door === "token" || options.door === "mcp")) await recordWrite(tx, caller.grant.id, key, options.door);
  };
  // The call's Idempotency-Key, taken first in the change's transaction (./idempotency-key.ts).
  if (proc.mutates && options.idempotency) await changeOn(tx, (q) => keyPlan(q, options.idempotency));
  if (proposes) {
    if (!options.propose) throw new TypeError(`The ${options.door} door has no proposal step`);
    const proposal = await options.propose(ctx, caller, proc, input, options.door);
    await logChange();
    return { kind: "proposed", proposal, caller };
  }
  const output = await proc.run(ctx, input);
  if (proc.mutates) await logChange();
  return { kind: "done", output, caller };
}

/**
 * A procedure that sends its own units because it runs another procedure inside it (aiApprovals.approve:
 * shared/assistant/approval-units.ts), given the call as runProcedure got it. It keeps the pipeline's
 * steps and words; `runStepByStep` is its way back to the open-transaction path.
 */
export type OwnUnits = (db: Database, principal: Principal, proc: StoreProcedure, rawInput: unknown, options: ProposalOptions) => Promise<Outcome>;

const ownUnits = new WeakMap<StoreProcedure, OwnUnits>();

/** Registers `proc`'s own units (by the module that joins the procedures, shared/registry/procedures.ts). */
export function sendsOwnUnits(proc: StoreProcedure, units: OwnUnits): void {
  ownUnits.set(proc, units);
}

/** Steps 1-9: limit, then one store unit for the principal, then the checks and the work. */
export async function runProcedure(db: Database, principal: Principal, proc: Procedure, rawInput: unknown, options: ProposalOptions): Promise<Outcome> {
  // A read with a plan goes in one round trip: the opening admits the caller, the plan follows it; a
  // change with a write plan in at most two (./write.ts), a proposal too where the door gives its units.
  if (!isSessionProcedure(proc) && proc.read) return runRead(db, principal, { ...proc, read: proc.read }, rawInput, options);
  if (!isSessionProcedure(proc) && proc.write && writesDirectly(principal, options)) return runWrite(db, principal, { ...proc, write: proc.write }, rawInput, options);
  if (!isSessionProcedure(proc) && proc.write && options.proposeInUnits && mayPropose(principal, options)) {
    return options.proposeInUnits(db, principal, { ...proc, write: proc.write }, rawInput, options);
  }
  const own = isSessionProcedure(proc) ? undefined : ownUnits.get(proc);
  if (own) return own(db, principal, proc as StoreProcedure, rawInput, options);
  return runStepByStep(db, principal, proc, rawInput, options);
}

/** Steps 1-9 on one open transaction (a WebSocket connection): for procedures with neither plan. */
export async function runStepByStep(db: Database, principal: Principal, proc: Procedure, rawInput: unknown, options: ProposalOptions): Promise<Outcome> {
  const decision = options.limit ? await options.limit() : undefined;
  if (decision && !decision.allowed) throw tooManyRequests(decision);
  // A session known by its cookie's hash is resolved first for the step-by-step path.
  if (principal.kind === "session") principal = await memberOfSession(db, principal);
  const { store, opening } = openingFor(principal);
  try {
    const outcome = await withStore(db, store, (tx, rows) => runChecked(tx, callerFrom(principal, rows), proc, rawInput, options), {
      readOnly: !proc.mutates,
      opening,
    });
    return { ...outcome, decision };
  } catch (e) {
    if (e instanceof StoreUnresolved) throw withHeaders(invalidToken(), decision);
    throw withHeaders(clientErrorFromConstraint(e) ?? e, decision);
  }
}

/** Runs a session procedure (account, store picking): a signed-in person, no store unit of its own. */
export async function runSessionProcedure(
  db: Database,
  session: SessionInfo,
  proc: SessionProcedure,
  rawInput: unknown,
  options: { log: Logger },
): Promise<unknown> {
  const input = parseInput(proc, rawInput);
  const membershipIn = (storeId: string) => resolveCaller(db, { kind: "member", userId: session.userId, storeId }, "session");
  const ctx: SessionContext = { db, session, log: options.log, membershipIn };
  return proc.run(ctx, input);
}

/** The member principal behind a session (its person in its active store): one round trip. */
async function memberOfSession(db: Database, principal: Extract<Principal, { kind: "session" }>): Promise<Principal> {
  const { caller } = await sendCallerUnit(db, { principal, procs: [], door: "session", plan: () => constant(undefined) });
  return { kind: "member", userId: caller.member.userId, storeId: caller.store.id };
}

/** Resolves a principal without running a procedure (the MCP door lists tools for it): one round trip. */
export async function resolveCaller(db: Database, principal: Principal, door: Door, slug: string | null = null): Promise<Caller> {
  const { caller } = await sendCallerUnit(db, { principal, procs: [], door, slug, plan: () => constant(undefined) });
  return caller;
}

