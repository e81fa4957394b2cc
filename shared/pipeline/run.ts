import type { Database } from "../db/database";
import { clientErrorFromConstraint } from "../db/pg-errors";
import { withStore, StoreUnresolved, type StoreTx } from "../db/with-store";
import { AppError, badRequest } from "../http/errors";
import { issuesOf } from "../http/validate";
import { rateLimitHeaders, type LimitDecision } from "../limits/window";
import type { Logger } from "../log";
import {
  isSessionProcedure,
  procedureKey,
  type Procedure,
  type Services,
  type SessionContext,
  type SessionInfo,
  type SessionProcedure,
  type StoreContext,
  type StoreProcedure,
  type Via,
} from "../procedures/define";
import { recordWrite } from "./activity";
import { callerFrom, grantPermissionDenied, invalidToken, openingFor, permissionDenied, type Caller, type Principal } from "./principal";

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
export type Door = "session" | "token" | "mcp" | "approval";

/** What a proposal step answers: the stored proposal, and its outcome when it ran at once. */
export interface ProposalView {
  id: string;
  state: string;
  summary: string;
  diff: unknown;
  expiresAt: Date;
  result?: unknown;
  error?: string | null;
}

/** Stores a proposal for a change (AI approvals); the assistant provides it to the doors that need it. */
export type Proposer = (ctx: StoreContext, caller: Caller, proc: StoreProcedure, input: unknown, door: Door) => Promise<ProposalView>;

export interface RunOptions {
  door: Door;
  log: Logger;
  services?: Services;
  /** Step 1: counts this call against its limiter. Absent for doors without one (sessions, approvals). */
  limit?: () => Promise<LimitDecision>;
  /** Step 7: required by doors where a change can become a proposal. */
  propose?: Proposer;
}

export type Outcome =
  | { kind: "done"; output: unknown; caller: Caller; decision?: LimitDecision | undefined }
  | { kind: "proposed"; proposal: ProposalView; caller: Caller; decision?: LimitDecision | undefined };

export function parseInput(proc: Procedure, raw: unknown): unknown {
  const parsed = proc.input.safeParse(raw === undefined ? {} : raw);
  if (!parsed.success) throw badRequest(issuesOf(parsed.error));
  return parsed.data;
}

export function tooManyRequests(decision: LimitDecision, what = "this grant"): AppError {
  const wait = decision.retryAfterSeconds ?? 1;
  return new AppError(
    "TOO_MANY_REQUESTS",
    `Rate limit reached: ${decision.limit} requests per ${decision.windowSeconds} s for ${what} (MCP and /api/v1 together). Retry after ${wait} s.`,
    { retryAfterSeconds: wait },
    rateLimitHeaders(decision),
  );
}

/** The store's AI-client settings bind OAuth grants at every door, and everything over MCP (SPEC "Store settings"). */
export function boundBySettings(caller: Caller, door: Door): boolean {
  return door === "mcp" || door === "approval" || caller.grant?.kind === "oauth";
}

function viaOf(door: Door): Via {
  return door === "approval" ? "mcp" : door;
}

function refused(reason: string, message: string): AppError {
  return new AppError("FORBIDDEN", message, { reason });
}

/** Steps 3-9 for a caller already resolved inside `tx` (also the approval runner's entry). */
export async function runChecked(tx: StoreTx, caller: Caller, proc: Procedure, rawInput: unknown, options: RunOptions): Promise<Outcome> {
  const key = procedureKey(proc);
  if (isSessionProcedure(proc)) {
    if (caller.grant) throw refused("session_only", `${key} needs a signed-in member session; tokens cannot call it.`);
    throw new TypeError(`${key} is a session procedure: run it without a store unit`);
  }
  if (proc.access === "none" && caller.grant) throw refused("member_only", `${key} is for members in the admin only; tokens cannot call it.`);
  if (proc.access !== "none" && !caller.permissions.has(proc.access)) {
    throw caller.grant ? grantPermissionDenied(caller, proc.access) : permissionDenied(proc.access);
  }
  const aiClient = boundBySettings(caller, options.door);
  if (aiClient && proc.customerDetails && !caller.store.mcpReadCustomerDetails) {
    throw refused("customer_details_off", "This store does not let AI clients read customer details. An Owner or Admin can allow it in Settings → MCP & API.");
  }
  if (aiClient && proc.mutates && !caller.store.mcpAllowChanges) {
    throw refused("ai_changes_off", "This store does not let AI clients make changes. An Owner or Admin can allow it in Settings → MCP & API.");
  }
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
  const proposes = proc.mutates && (options.door === "mcp" || (options.door === "token" && caller.grant?.kind === "oauth" && caller.store.mcpChangesNeedApproval));
  // An API door's change call is logged with it (the approval runner's change was logged when proposed).
  const logChange = async () => {
    if (caller.grant && (options.door === "token" || options.door === "mcp")) await recordWrite(tx, caller.grant.id, key, options.door);
  };
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

/** Steps 1-9: limit, then one store unit for the principal, then the checks and the work. */
export async function runProcedure(db: Database, principal: Principal, proc: Procedure, rawInput: unknown, options: RunOptions): Promise<Outcome> {
  const decision = options.limit ? await options.limit() : undefined;
  if (decision && !decision.allowed) throw tooManyRequests(decision);
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
  const membershipIn = (storeId: string) => resolveCaller(db, { kind: "member", userId: session.userId, storeId });
  const ctx: SessionContext = { db, session, log: options.log, membershipIn };
  return proc.run(ctx, input);
}

/** Resolves a principal without running a procedure (the MCP door lists tools for it). One read-only unit. */
export async function resolveCaller(db: Database, principal: Principal): Promise<Caller> {
  const { store, opening } = openingFor(principal);
  try {
    return await withStore(db, store, async (_tx, rows) => callerFrom(principal, rows), { readOnly: true, opening });
  } catch (e) {
    if (e instanceof StoreUnresolved) throw invalidToken();
    throw e;
  }
}

/** The limiter's headers on an error answer, so a client sees its budget on refusals too. */
function withHeaders(e: unknown, decision: LimitDecision | undefined): unknown {
  if (!decision || !(e instanceof AppError)) return e;
  return new AppError(e.code, e.message, e.data, { ...rateLimitHeaders(decision), ...e.headers });
}
