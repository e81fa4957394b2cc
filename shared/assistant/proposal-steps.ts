import { and, eq, sql } from "drizzle-orm";
import { unchanged } from "../db/changes";
import type { Database } from "../db/database";
import { CURRENT_STORE } from "../db/openings";
import { constant, plan, type Plan } from "../db/plan";
import { aiApproval, store as storeTable } from "../db/schema";
import type { Q } from "../db/steps";
import { sendStoreUnit } from "../db/unit";
import type { AppError } from "../core/errors";
import type { Door } from "../pipeline/check";
import type { Caller, Principal } from "../pipeline/principal";
import { sendCallerUnitOrRefusal } from "../pipeline/read";
import { activityStep } from "../pipeline/write";
import type { StoreProcedure } from "../procedures/define";
import type { Scope } from "../procedures/scope";
import { proposalColumns, type ApprovalRow } from "./approvals";
import type { Proposal } from "./changes";

/** The statements of a proposal's units (./proposal-units.ts). */

/** Who a proposal's units open for: the caller, the procedure it is checked against, the door (and its store's slug). */
export interface ProposalCaller {
  principal: Principal;
  proc: StoreProcedure;
  door: Door;
  slug: string | null;
}

/** How a proposal is stored: waiting, or decided at once (approved beside its change, or failed with the refusal's words). */
export type Decision = { status: "pending" } | { status: "approved" } | { status: "failed"; error: string };

/** The grant the unit's opening admitted (app.grant_id, as the activity row reads it). */
const ADMITTED_GRANT = sql`nullif(current_setting('app.grant_id', true), '')::uuid`;

/** The proposal's row for the member behind the admitted grant: the same columns the step-by-step path stores. */
export function insertProposal(q: Q, scope: Scope, who: ProposalCaller, input: unknown, proposal: Proposal, decision: Decision): Plan<ApprovalRow> {
  const decided = decision.status === "pending" ? {} : { status: decision.status, decidedAt: sql`now()`, error: decision.status === "failed" ? decision.error : null };
  return plan(
    [
      q
        .insert(aiApproval)
        .values({ storeId: scope.store, grantId: ADMITTED_GRANT, memberId: scope.memberId, ...proposalColumns(who.proc, input, proposal, who.door), ...decided })
        .returning(),
    ] as const,
    ([[row]]) => row!,
  );
}

/** The API activity row of the call, in its own unit (shared/pipeline/write.ts). */
export function activity(q: Q, who: ProposalCaller): Plan<undefined> {
  const step = activityStep(who.principal, who.proc, who.door);
  return step ? plan([step(q)] as const, () => undefined) : constant(undefined);
}

/** A lost race unless the store still lets AI clients' changes through without approval (read with the caller, a trip ago). */
export function approvalStillOff(q: Q, scope: Scope): Plan<undefined> {
  const needed = sql`exists (select 1 from ${storeTable} where ${storeTable.id} = ${scope.store} and ${storeTable.mcpChangesNeedApproval})`;
  return plan([unchanged(q, sql`not ${needed}`)] as const, () => undefined);
}

/** An approved proposal's result: after the answer, in a unit of its own (the change's answer is built in TypeScript). */
export function storeResult(db: Database, storeId: string, approvalId: string, result: unknown): Promise<undefined> {
  return sendStoreUnit(
    db,
    storeId,
    (q) => plan([q.update(aiApproval).set({ result }).where(and(eq(aiApproval.storeId, CURRENT_STORE), eq(aiApproval.id, approvalId)))] as const, () => undefined),
    { readOnly: false },
  );
}

const UTF8 = new TextEncoder();

/** jsonb's order of an object's keys: the shorter first (in bytes), then byte by byte. */
function jsonbKeyOrder(a: string, b: string): number {
  const x = UTF8.encode(a);
  const y = UTF8.encode(b);
  if (x.length !== y.length) return x.length - y.length;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return 0;
}

function inJsonbOrder(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(inJsonbOrder);
  if (value === null || typeof value !== "object") return value;
  const entries = Object.entries(value as Record<string, unknown>);
  return Object.fromEntries(entries.sort(([a], [b]) => jsonbKeyOrder(a, b)).map(([k, v]) => [k, inJsonbOrder(v)]));
}

/**
 * A value as a jsonb column stores it and hands it back (JSON, each object's keys in jsonb's order): what
 * the approval runner reads back from the row it stored, without reading it.
 */
export function asJsonb(value: unknown): unknown {
  return inJsonbOrder(JSON.parse(JSON.stringify(value ?? null)));
}

export type Applied<O> = { caller: Caller; output: O } | { refused: AppError };

/**
 * The unit of a change applied with its proposal: a refusal of the change itself comes back as a value,
 * so the proposal is stored as failed with its words, as the approval runner stores it
 * (sendCallerUnitOrRefusal). A broken constraint fails the call, as it failed the approval runner's
 * transaction.
 */
export function sendApplying<O>(db: Database, who: ProposalCaller, build: (q: Q, scope: Scope) => Plan<O>): Promise<Applied<O>> {
  return sendCallerUnitOrRefusal(db, { principal: who.principal, procs: [who.proc], door: who.door, slug: who.slug, writes: true, plan: build });
}
