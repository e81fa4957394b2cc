import { and, eq, sql } from "drizzle-orm";
import { unchanged } from "../db/changes";
import { constant, plan, together, type Plan } from "../db/plan";
import { aiApproval } from "../db/schema";
import type { Q } from "../db/steps";
import type { Database } from "../db/database";
import { AppError, badRequest, isAppError } from "../core/errors";
import { issuesOf } from "../core/errors";
import type { Caller, Principal } from "../pipeline/principal";
import { sendCallerUnit } from "../pipeline/read";
import { withCaller } from "../pipeline/refusal";
import { runStepByStep, tooManyRequests, withHeaders, type Outcome, type ProposalOptions } from "../pipeline/run";
import { afterCommit, concurrentChange, lostRace, prepared_, RETRIES, type WriteProcedure } from "../pipeline/write";
import { parseProcedureInput, type StoreProcedure } from "../procedures/define";
import { checkOutput } from "../procedures/outputs";
import { findBaseProcedure } from "../procedures/registry";
import type { Scope } from "../procedures/scope";
import { decideRefusal, GRANT_GONE, view, type ApprovalRow } from "./approvals";
import { asJsonb, sendApplying, storeResult } from "./proposal-steps";

/**
 * A member's approval of an AI client's proposal (`aiApprovals.approve`) in units, as every other change
 * (docs/decisions/0015-one-round-trip.md, 0018): two round trips on the answer's path, three when the
 * proposed change reads before it decides, where the open-transaction runner took 17.
 *
 *   1. the member's unit (read-only): the member admitted, the proposal read; TypeScript refuses what
 *      approve refuses, with its words (not found, no longer pending, not theirs: only the member who
 *      connected the client decides);
 *   2. the connection's unit (read-only, only when the change has a `prepare`): the grant admitted as the
 *      approval runner admits it (the member's role now, the grant's areas, the store's AI settings: the
 *      door `approval`), and what the change reads;
 *   3. the connection's unit (read-write): the proposal locked and checked to be still pending and the
 *      member's own (a lost race otherwise, read again from 1), the change's guarded statements, the
 *      proposal marked approved.
 *
 * A refusal of the change (the connection gone, a permission lost, the stored input no longer valid, the
 * change's own refusal) is stored as the proposal's failure with its words, as the runner stores it: one
 * unit more, on that error path. The change's answer is stored as the proposal's result after the answer
 * (one round trip off its path). A proposal of a change without a write plan, or one with an outside
 * call (`decide`, `claim`), is approved on the open-transaction path as before.
 */
export async function approveInUnits(db: Database, principal: Principal, approve: StoreProcedure, rawInput: unknown, options: ProposalOptions): Promise<Outcome> {
  const decision = options.limit ? await options.limit() : undefined;
  if (decision && !decision.allowed) throw tooManyRequests(decision);
  const once = { ...options, limit: undefined };
  try {
    const base = { principal, procs: [approve], door: options.door } as const;
    const parsed = parseProcedureInput(approve, rawInput);
    if (!parsed.success) {
      const { caller } = await sendCallerUnit(db, { ...base, plan: () => constant(undefined) });
      throw withCaller(badRequest(issuesOf(parsed.error)), caller);
    }
    const { id } = parsed.data as { id: string };
    for (let attempt = 1; ; attempt++) {
      const { caller, output: row } = await sendCallerUnit(db, { ...base, plan: (q, scope) => proposalOf(q, scope, id) });
      const refusal = decideRefusal(row, caller.member);
      if (refusal) throw withCaller(refusal, caller);
      const proc = findBaseProcedure(row!.procedure);
      // The assistant's proposals run as the deciding member, on the open-transaction path (./approvals.ts).
      if (!proc || !("write" in proc) || !proc.write || proc.write.claim || proc.write.decide || row!.source === "assistant") {
        return { ...(await runStepByStep(db, principal, approve, rawInput, once)), decision };
      }
      const approved = await approveRow(db, { ...once, caller, row: row!, proc: proc as WriteProcedure });
      // Its own units bypass the procedure's plans: its answer is checked here (tests; docs/api.md "Output schemas").
      if (approved) return { kind: "done", output: checkOutput(approve, approved), caller, decision };
      if (attempt >= RETRIES) throw concurrentChange();
    }
  } catch (e) {
    throw withHeaders(e, decision);
  }
}

/** The proposal, as the member's unit reads it (RLS keeps it to the member's store). */
function proposalOf(q: Q, scope: Scope, id: string): Plan<ApprovalRow | undefined> {
  return plan([q.select().from(aiApproval).where(and(eq(aiApproval.storeId, scope.store), eq(aiApproval.id, id)))] as const, ([[row]]) => row);
}

interface Approving extends ProposalOptions {
  /** The member deciding. */
  caller: Caller;
  row: ApprovalRow;
  proc: WriteProcedure;
}

type Approved = ReturnType<typeof view>;

/** Units 2 and 3 for a proposal read as `row`; null when it lost a race (decided meanwhile, or the change's guard). */
async function approveRow(db: Database, a: Approving): Promise<Approved | null> {
  const { row, proc } = a;
  // A proposal outlives its grant when its member is removed (migration 0035); it is expired by then.
  if (row.grantId === null) return failedWith(db, a, new AppError("UNAUTHORIZED", GRANT_GONE));
  // The connection's caller, checked as the approval runner checks it (door `approval`).
  const grant = { principal: { kind: "oauth", grantId: row.grantId, storeId: a.caller.store.id } as const, proc, door: "approval" as const, slug: null };
  const input = proc.input.safeParse(row.input);
  let prepared: unknown;
  try {
    if (!input.success) {
      // The connection's checks first, as the runner makes them before it parses the input.
      await sendCallerUnit(db, { principal: grant.principal, procs: [proc], door: "approval", plan: () => constant(undefined) });
      return await failedWith(db, a, badRequest(issuesOf(input.error)));
    }
    const { prepare } = proc.write;
    // A `prepare` that reads nothing (a handle given) answers without a unit of its own.
    if (prepare) prepared = (await prepared_(db, { principal: grant.principal, procs: [proc], door: "approval" }, (q, scope) => prepare(q, scope, input.data, a.services ?? {}))).value;
  } catch (e) {
    if (!isAppError(e)) throw e;
    return failedWith(db, a, e);
  }
  let sent;
  try {
    sent = await sendApplying(db, grant, (q, scope) =>
      together({
        still: stillDecidable(q, scope, a),
        change: proc.write.apply(q, scope, input.data, prepared),
        row: plan(
          [
            q
              .update(aiApproval)
              .set({ status: "approved", decidedAt: sql`now()`, decidedBy: a.caller.member.id, error: null })
              .where(and(eq(aiApproval.storeId, scope.store), eq(aiApproval.id, row.id)))
              .returning(),
          ] as const,
          ([[updated]]) => updated!,
        ),
      }),
    );
  } catch (e) {
    if (lostRace(e)) return null;
    if (!isAppError(e)) throw e;
    return failedWith(db, a, e);
  }
  if ("refused" in sent) return failedWith(db, a, sent.refused);
  const { change, row: updated } = sent.output;
  if (proc.write.after && a.services) await afterCommit(() => proc.write.after!(change, a.services!, input.data), a);
  const result = asJsonb(change);
  const store = () => storeResult(db, updated.storeId, updated.id, result);
  if (a.defer) a.defer(store);
  else await store();
  return { ...view(updated), result };
}

/**
 * A lost race unless the proposal is still pending, unexpired and the deciding member's own, locked
 * first, as the runner locks it before the change.
 */
function stillDecidable(q: Q, scope: Scope, a: Approving): Plan<undefined> {
  return plan(
    [
      unchanged(
        q,
        sql`exists (select 1 from ${aiApproval} where ${aiApproval.storeId} = ${scope.store} and ${aiApproval.id} = ${a.row.id}
              and ${aiApproval.status} = 'pending' and ${aiApproval.expiresAt} > now() and ${aiApproval.memberId} = ${a.caller.member.id}
              for update)`,
      ),
    ] as const,
    () => undefined,
  );
}

/**
 * The proposal stored as failed with the refusal's words (a connection that no longer admits anyone with
 * the runner's own), in the member's unit; null when it was decided meanwhile (read again).
 */
async function failedWith(db: Database, a: Approving, refusal: AppError): Promise<Approved | null> {
  const error = refusal.code === "UNAUTHORIZED" ? GRANT_GONE : refusal.message;
  const { output } = await sendCallerUnit(db, {
    principal: memberPrincipal(a),
    procs: [],
    door: "session",
    writes: true,
    plan: (q, scope) =>
      plan(
        [
          q
            .update(aiApproval)
            .set({ status: "failed", decidedAt: sql`now()`, decidedBy: a.caller.member.id, error, result: null })
            .where(and(eq(aiApproval.storeId, scope.store), eq(aiApproval.id, a.row.id), eq(aiApproval.status, "pending")))
            .returning(),
        ] as const,
        ([[updated]]) => updated,
      ),
  });
  return output ? view(output) : null;
}

const memberPrincipal = (a: Approving): Principal => ({ kind: "member", userId: a.caller.member.userId, storeId: a.caller.store.id });
