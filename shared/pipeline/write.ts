import type { Database } from "../db/database";
import { constant, plan, together } from "../db/plan";
import { pgErrorOf } from "../db/pg-errors";
import { collector, type Q } from "../db/steps";
import { unitScope } from "../procedures/scope";
import { AppError, badRequest } from "../core/errors";
import { issuesOf } from "../core/errors";
import { errorFields } from "../core/log";
import { parseProcedureInput, procedureKey, type StoreProcedure, type WritePlan } from "../procedures/define";
import { keyPlan } from "./idempotency-key";
import { tooManyRequests, withHeaders, type Outcome, type RunOptions } from "./outcome";
import type { Caller, Principal } from "./principal";
import { sendCallerUnit, type UnitCall } from "./read";
import { withCaller } from "./refusal";
import { logUnitWrite } from "./statements";

/**
 * A change in at most two round trips (ARCHITECTURE §3, docs/decisions/0015-one-round-trip.md): the
 * same steps as ./run.ts, with the database taking the ones that need it.
 *
 *   1. the limiter, before any database work;
 *   2. `prepare` (when the change needs a decision): the caller's opening and the reads, one read-only unit;
 *   3. `apply`: the caller's opening again (a role changed in between is seen), the guarded statements of
 *      the change, its outbox events and, for an API door, its activity row; one read-write unit.
 *
 * Nothing is locked across the network: a guard of the second unit that finds the first unit's reading
 * out of date (`unchanged`, SQLSTATE CR409) rolls it back, and the pair runs again, up to RETRIES times.
 * A plan with `claim` (a first unit that writes, e.g. a refund's gateway keys) runs it and `decide` once;
 * after a lost race only `apply` runs again, on what `reread` read.
 */
export const RETRIES = 3;

/** Doors where a change never becomes a proposal: a member's session, a created token at /api/v1. */
export function writesDirectly(principal: Principal, options: Pick<RunOptions, "door">): boolean {
  return options.door === "session" || (options.door === "token" && principal.kind === "token");
}

/** Doors where a change may become a proposal (AI approvals): anything over MCP, an OAuth connection at /api/v1. */
export function mayPropose(principal: Principal, options: Pick<RunOptions, "door">): boolean {
  return options.door === "mcp" || (options.door === "token" && principal.kind === "oauth");
}

export type WriteProcedure = StoreProcedure & { write: WritePlan<unknown, unknown> };

/**
 * Step 7 for a change with a write plan, in at most two round trips: the assistant's
 * (shared/assistant/proposal-units.ts), given by the doors where a change may become a proposal.
 */
export type ProposalUnits = (db: Database, principal: Principal, proc: WriteProcedure, rawInput: unknown, options: ProposalOptions) => Promise<Outcome>;

export interface ProposalOptions extends RunOptions {
  proposeInUnits?: ProposalUnits;
  /** Work after the answer (the door's), e.g. storing an approved proposal's result. */
  defer?: (work: () => Promise<unknown>) => void;
}

/** A unit's guard found what its first trip read out of date (`unchanged`, SQLSTATE CR409). */
export const lostRace = (e: unknown): boolean => pgErrorOf(e)?.code === "CR409";

/** A change that lost its race RETRIES times. */
export const concurrentChange = () => new AppError("CONFLICT", "This changed while it was being saved; reload and try again.", { reason: "concurrent_change" });

export async function runWrite(db: Database, principal: Principal, proc: WriteProcedure, rawInput: unknown, options: RunOptions): Promise<Outcome> {
  const decision = options.limit ? await options.limit() : undefined;
  if (decision && !decision.allowed) throw tooManyRequests(decision);
  const base = { principal, procs: [proc], door: options.door } as const;
  const parsed = parseProcedureInput(proc, rawInput);
  try {
    if (!parsed.success) {
      // The caller's checks first, so a refused caller learns nothing from the validation (one trip).
      const { caller } = await sendCallerUnit(db, { ...base, plan: () => constant(undefined) });
      throw withCaller(badRequest(issuesOf(parsed.error)), caller);
    }
    const input = parsed.data;
    const { prepare, decide, claim, reread } = proc.write;
    // The change's unit: the caller's opening, `apply`'s statements and, for an API door, its activity row.
    const applied = async (prepared: unknown): Promise<Outcome> => {
      const { caller, output, session } = await sendCallerUnit(db, {
        ...base,
        writes: true,
        plan: (q, scope) => {
          const change = proc.write.apply(q, scope, input, prepared);
          const logged = activityStep(principal, proc, options.door);
          // The key first: a second request with it waits there and rolls back before its change runs.
          return together({ key: keyPlan(q, options.idempotency), change, logged: logged ? plan([logged(q)] as const, () => undefined) : constant(undefined) });
        },
      });
      if (proc.write.after && options.services) await afterCommit(() => proc.write.after!(output.change, options.services!, input), options);
      return { kind: "done", output: output.change, caller, decision, ...(session ? { session } : {}) };
    };
    if (claim) {
      // The claim commits before `decide`'s outside call; neither runs again: a lost race reads and applies again.
      const claimed = await sendCallerUnit(db, { ...base, writes: true, plan: (q, scope) => claim(q, scope, input) });
      let decided = decide ? await decide(claimed.output, options.services ?? {}, input, claimed.caller.store.id) : claimed.output;
      for (let attempt = 1; ; attempt++) {
        try {
          return await applied(decided);
        } catch (e) {
          if (!lostRace(e)) throw e;
          if (attempt >= RETRIES || !reread) throw concurrentChange();
          decided = (await sendCallerUnit(db, { ...base, plan: (q, scope) => reread(q, scope, input, decided) })).output;
        }
      }
    }
    for (let attempt = 1; ; attempt++) {
      const read = prepare ? await prepared_(db, base, (q, scope) => prepare(q, scope, input, options.services ?? {})) : undefined;
      // A decision outside Postgres (a courier's booking) comes between the units, never inside one.
      const prepared = decide ? await decide(read?.value, options.services ?? {}, input, storeOf(read?.caller, principal)) : read?.value;
      try {
        return await applied(prepared);
      } catch (e) {
        if (!lostRace(e)) throw e;
        if (attempt >= RETRIES) throw concurrentChange();
      }
    }
  } catch (e) {
    throw withHeaders(e, decision);
  }
}

/** What `prepare` answers, awaited: from its own unit, or at once when it needs nothing read (e.g. a handle given). */
export async function prepared_<P>(db: Database, base: Omit<UnitCall<P>, "plan">, build: UnitCall<P>["plan"]): Promise<{ value: P; caller?: Caller }> {
  const probe = build(collector().q, unitScope(false, () => {
    throw new Error("prepare's plan asked for its caller");
  }));
  if (probe.steps.length === 0) return { value: await probe.finish([]) };
  const { output, caller } = await sendCallerUnit(db, { ...base, plan: build });
  return { value: await output, caller };
}

/** The store a decision works for: the first unit's caller's, or the principal's own when it names one. */
function storeOf(caller: Caller | undefined, principal: Principal): string {
  if (caller) return caller.store.id;
  if (principal.kind === "oauth" || (principal.kind === "member" && principal.storeId)) return principal.storeId!;
  throw new Error("A write plan with `decide` needs a `prepare` that reads (its first unit names the store)");
}

/** A committed change's outside work: a failure is logged, never turned into a failed change. */
export async function afterCommit(work: () => Promise<void>, options: RunOptions): Promise<void> {
  try {
    await work();
  } catch (e) {
    options.log.warn("Work after a committed change failed", errorFields(e));
  }
}

/**
 * An API door's change is logged in the change's own unit (./activity.ts recordWrite): the grant comes
 * from the unit's opening (app.grant_id), so it costs no trip of its own.
 */
export function activityStep(principal: Principal, proc: StoreProcedure, door: RunOptions["door"]) {
  if (principal.kind !== "token" && principal.kind !== "oauth") return undefined;
  if (door !== "token" && door !== "mcp") return undefined;
  return (q: Q) => logUnitWrite(q, procedureKey(proc), door);
}
