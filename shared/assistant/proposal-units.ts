import type { Database } from "../db/database";
import { constant, plan, together, type Plan } from "../db/plan";
import { badRequest, isAppError, type AppError } from "../core/errors";
import { issuesOf } from "../core/errors";
import { parseProcedureInput } from "../procedures/define";
import type { Outcome } from "../pipeline/outcome";
import type { Caller, Principal } from "../pipeline/principal";
import { isKeyInUse, keyPlan } from "../pipeline/idempotency-key";
import { sendCallerUnit } from "../pipeline/read";
import { withCaller } from "../pipeline/refusal";
import { tooManyRequests, withHeaders } from "../pipeline/run";
import { afterCommit, concurrentChange, lostRace, RETRIES, type ProposalOptions, type ProposalUnits, type WriteProcedure } from "../pipeline/write";
import { view } from "./approvals";
import type { Proposal } from "./changes";
import { activity, approvalStillOff, asJsonb, insertProposal, sendApplying, storeResult, type Decision, type ProposalCaller } from "./proposal-steps";
import { changeToolFor, describeCall } from "./tools";

/**
 * An AI client's change (a change tool over MCP, an OAuth connection's change at /api/v1) in at most two
 * round trips on the answer's path (docs/decisions/0015-one-round-trip.md), for a procedure with a write
 * plan; ./approvals.ts `propose` is the same step on an open transaction, for the others.
 *
 *   1. one read-only unit: the caller's opening with the procedure's check, the change tool's describe
 *      reads and the change's `prepare` reads (used only if it runs at once);
 *   2. TypeScript builds the proposal and decides from the store's 'Changes need approval', which came
 *      back with the caller, whether the change runs now;
 *   3. one read-write unit: the caller's opening again, the proposal's row (pending; or approved, beside
 *      the change's own statements and a guard that approval is still off) and the API activity row.
 *
 * At /api/v1 an OAuth connection's change becomes a proposal only while approval is on; otherwise it is a
 * plain change (the second unit carries the change instead of a proposal). Over MCP a change that runs
 * at once and is refused rolls its unit back whole, so its `failed` proposal costs one more round trip
 * (an error path). An approved proposal's `result` is the change's answer, built in TypeScript from its
 * unit's rows, so no statement of that unit can store it: it is stored after the answer (one round trip
 * off the answer's path), and the answer carries it as the row will hold it (./proposal-steps.ts asJsonb).
 */

export interface ProposalCall extends ProposalCaller {
  db: Database;
  proc: WriteProcedure;
  options: ProposalOptions;
  /** The call's input, parsed. */
  input: unknown;
  /**
   * The input the change runs with if it runs now: over MCP the proposal's as stored and read back,
   * parsed again (as the approval runner runs it); at /api/v1 the call's own.
   */
  runs: { ok: true; input: unknown } | { ok: false; error: AppError };
}

/** What the first unit read. Each answer is made when asked for, so a refusal fails only the path that uses it. */
export interface ProposalReading {
  caller: Caller;
  /** The proposal's summary and diff; throws the describe's refusal. */
  proposal(): Proposal;
  /** What the change's `prepare` answers (a promise when it makes something first); throws its refusal. */
  prepared(): unknown;
}

/** Step 6: the input, parsed; an invalid one is refused after the caller's checks (one round trip), as on every path. */
export async function proposalCall(db: Database, principal: Principal, proc: WriteProcedure, rawInput: unknown, options: ProposalOptions, slug: string | null = null): Promise<ProposalCall> {
  const who = { principal, proc, door: options.door, slug };
  const parsed = parseProcedureInput(proc, rawInput);
  if (!parsed.success) {
    const { caller } = await sendCallerUnit(db, { ...unitOf(who), plan: () => constant(undefined) });
    throw withCaller(badRequest(issuesOf(parsed.error)), caller);
  }
  const again = options.door === "mcp" ? proc.input.safeParse(asJsonb(parsed.data)) : parsed;
  const runs = again.success ? ({ ok: true, input: again.data } as const) : ({ ok: false, error: badRequest(issuesOf(again.error)) } as const);
  return { ...who, db, proc, options, input: parsed.data, runs };
}

/** The opening every unit of the call carries: the caller, checked against the procedure at the door. */
const unitOf = ({ principal, proc, door, slug }: ProposalCaller) => ({ principal, procs: [proc], door, slug });

/** A plan whose answer is made when asked for. */
const later = <O>(p: Plan<O>): Plan<() => O> => ({ steps: p.steps, finish: (results) => () => p.finish(results) });

/** The first unit: the caller's opening, what the proposal describes, what the change's `prepare` reads. */
export async function readProposal(call: ProposalCall): Promise<ProposalReading> {
  const { proc, runs } = call;
  const tool = changeToolFor(proc);
  const { prepare } = proc.write;
  const { caller, output } = await sendCallerUnit(call.db, {
    ...unitOf(call),
    plan: (q, scope) =>
      together({
        proposal: later(tool ? tool.describePlan(q, scope, call.input) : plan([] as const, () => describeCall(proc, call.input as Record<string, unknown>))),
        prepared: later(prepare && runs.ok ? prepare(q, scope, runs.input, call.options.services ?? {}) : constant(undefined)),
      }),
  });
  return { caller, proposal: output.proposal, prepared: output.prepared };
}

/** The rest, once the first unit came back; a lost race reads again (RETRIES times in all). */
export async function finishProposal(call: ProposalCall, first: ProposalReading): Promise<Outcome> {
  let reading = first;
  for (let attempt = 1; ; attempt++) {
    try {
      return await decide(call, reading);
    } catch (e) {
      if (!lostRace(e)) throw e;
      if (attempt >= RETRIES) {
        if (call.door !== "mcp") throw concurrentChange();
        return recorded(call, reading.proposal(), failed(concurrentChange()));
      }
    }
    reading = await readProposal(call);
  }
}

/** Steps 1-9 for a door that gives the pipeline its proposal units (shared/pipeline/run.ts). */
export const proposeInUnits: ProposalUnits = async (db, principal, proc, rawInput, options) => {
  const decision = options.limit ? await options.limit() : undefined;
  if (decision && !decision.allowed) throw tooManyRequests(decision);
  try {
    const call = await proposalCall(db, principal, proc, rawInput, options);
    return { ...(await finishProposal(call, await readProposal(call))), decision };
  } catch (e) {
    throw withHeaders(e, decision);
  }
};

const failed = (e: AppError): Decision => ({ status: "failed", error: e.message });

function asCaller<O>(caller: Caller, answer: () => O): O {
  try {
    return answer();
  } catch (e) {
    throw withCaller(e, caller);
  }
}

async function decide(call: ProposalCall, reading: ProposalReading): Promise<Outcome> {
  const { caller } = reading;
  const needsApproval = caller.store.mcpChangesNeedApproval;
  if (call.door === "token" && !needsApproval) return changeAtOnce(call, reading);
  const proposal = asCaller(caller, reading.proposal);
  if (needsApproval) return recorded(call, proposal, { status: "pending" });
  return proposalAtOnce(call, reading, proposal);
}

/** The second unit of a proposal decided without its change: the row and the activity row. */
async function recorded(call: ProposalCall, proposal: Proposal, decision: Decision): Promise<Outcome> {
  const { caller, output } = await sendCallerUnit(call.db, {
    ...unitOf(call),
    writes: true,
    plan: (q, scope) => together({ key: keyPlan(q, call.options.idempotency), row: insertProposal(q, scope, call, call.input, proposal, decision), logged: activity(q, call) }),
  });
  return { kind: "proposed", proposal: view(output.row), caller };
}

async function preparedOf(call: ProposalCall, reading: ProposalReading): Promise<unknown> {
  return Promise.resolve()
    .then(reading.prepared)
    .catch((e: unknown) => {
      throw withCaller(e, reading.caller);
    });
}

/** An OAuth connection's change at /api/v1 while approval is off: a plain change, no proposal (./write.ts runWrite's second unit). */
async function changeAtOnce(call: ProposalCall, reading: ProposalReading): Promise<Outcome> {
  const { proc, options, runs } = call;
  if (!runs.ok) throw withCaller(runs.error, reading.caller);
  const prepared = await preparedOf(call, reading);
  const { caller, output } = await sendCallerUnit(call.db, {
    ...unitOf(call),
    writes: true,
    plan: (q, scope) => together({ key: keyPlan(q, call.options.idempotency), still: approvalStillOff(q, scope), change: proc.write.apply(q, scope, runs.input, prepared), logged: activity(q, call) }),
  });
  if (proc.write.after && options.services) await afterCommit(() => proc.write.after!(output.change, options.services!, runs.input), options);
  return { kind: "done", output: output.change, caller };
}

/** A change tool's call over MCP while approval is off: the proposal, approved, with its change in the same unit. */
async function proposalAtOnce(call: ProposalCall, reading: ProposalReading, proposal: Proposal): Promise<Outcome> {
  const { db, proc, options, runs } = call;
  // Refused before it runs (its input as stored, or what `prepare` decided): stored as failed, as the approval runner would.
  if (!runs.ok) return recorded(call, proposal, failed(runs.error));
  let prepared: unknown;
  try {
    prepared = await preparedOf(call, reading);
  } catch (e) {
    if (!isAppError(e)) throw e;
    return recorded(call, proposal, failed(e));
  }
  const sent = await sendApplying(db, call, (q, scope) =>
    together({
      key: keyPlan(q, call.options.idempotency),
      still: approvalStillOff(q, scope),
      row: insertProposal(q, scope, call, call.input, proposal, { status: "approved" }),
      change: proc.write.apply(q, scope, runs.input, prepared),
      logged: activity(q, call),
    }),
  );
  // The change refused: its unit rolled back whole, so the failed proposal takes one more.
  if ("refused" in sent) {
    // Another request with the call's Idempotency-Key committed first: its answer is the answer.
    if (isKeyInUse(sent.refused)) throw sent.refused;
    return recorded(call, proposal, failed(sent.refused));
  }
  const { row, change } = sent.output;
  if (proc.write.after && options.services) await afterCommit(() => proc.write.after!(change, options.services!, runs.input), options);
  const result = asJsonb(change);
  const store = () => storeResult(db, sent.caller.store.id, row.id, result);
  if (options.defer) options.defer(store);
  else await store();
  return { kind: "proposed", proposal: { ...view(row), result }, caller: sent.caller };
}
