import { and, desc, eq, sql } from "drizzle-orm";
import { z } from "zod";
import { ensure } from "../db/changes";
import { plan } from "../db/plan";
import { aiApproval, APPROVAL_STATUSES } from "../db/schema";
import { grantById } from "../db/statements";
import { fixedRowsOn, inSavepoint } from "../db/with-store";
import { isAppError, AppError } from "../core/errors";
import { grantCaller, type Caller } from "../pipeline/principal";
import { runChecked, type ProposalView, type Proposer } from "../pipeline/run";
import type { Door } from "../pipeline/check";
import { storeProcedure, procedureKey, type StoreContext, type StoreProcedure } from "../procedures/define";
import { findBaseProcedure } from "../procedures/registry";
import { readChanges } from "./changes";
import { changeToolFor, describeCall, type Proposal } from "./tools";
import * as out from "../procedures/outputs";

/**
 * AI approvals (SPEC "Grants, tokens and approvals"; docs/decisions/0004-mcp-oauth.md, 0024). A change tool
 * called over MCP stores a proposal that waits for the member who connected the client: only that member
 * approves or rejects it; every other member of the store sees it, read-only. Approving re-checks the
 * grant and the member's role at that moment, runs the change at most once (the row is locked and leaves
 * `pending` in the same transaction), and keeps the result or the error. Proposals expire after 24 hours,
 * and at once when their member is removed from the store (staff.remove; nobody else may decide them).
 */
export const APPROVAL_TTL_HOURS = 24;

export type ApprovalRow = typeof aiApproval.$inferSelect;

export function approvalState(row: Pick<ApprovalRow, "status" | "expiresAt">, now = new Date()): ApprovalRow["status"] | "expired" {
  return row.status === "pending" && row.expiresAt.getTime() <= now.getTime() ? "expired" : row.status;
}

/** A stored proposal as its readers see it: its diff in the current shape and its state (expired when past its time). */
export const view = (row: ApprovalRow) => ({ ...row, diff: readChanges(row.diff), state: approvalState(row) });

/**
 * Runs a proposal's change once, inside a savepoint of the caller's transaction, through the one
 * pipeline as the connection's caller (the grant's member, role read now, capped by the grant's areas),
 * and records the outcome on the row.
 */
async function execute(ctx: StoreContext, caller: Caller, row: ApprovalRow, decidedBy: string | null): Promise<ApprovalRow> {
  const proc = findBaseProcedure(row.procedure);
  let result: unknown = null;
  let error: string | null = null;
  if (!proc || !proc.mutates) error = `The change ${row.procedure} no longer exists.`;
  else {
    try {
      const outcome = await inSavepoint(ctx.tx, "ai_approval_run", () =>
        runChecked(ctx.tx, caller, proc, row.input, { door: "approval", log: ctx.log, ...(ctx.services ? { services: ctx.services } : {}) }),
      );
      result = outcome.kind === "done" ? outcome.output : null;
    } catch (e) {
      if (!isAppError(e)) throw e;
      error = e.message;
    }
  }
  const [updated] = await ctx.tx
    .update(aiApproval)
    .set({ status: error ? "failed" : "approved", decidedAt: sql`now()`, decidedBy, result: error ? null : (JSON.parse(JSON.stringify(result ?? null)) as unknown), error })
    .where(and(eq(aiApproval.storeId, ctx.tx.storeId), eq(aiApproval.id, row.id)))
    .returning();
  return updated!;
}

/**
 * The propose step (SPEC "MCP tools" 2; the pipeline's step 7): describes the change from what it would
 * touch, stores the proposal for the member who connected the client; with 'Changes need approval' off,
 * approves it at once with the connection's permissions. The input is already validated. This is the
 * step on an open transaction, for procedures without a write plan; ./proposal-units.ts takes the others
 * in two round trips, storing the same row.
 */
export const propose: Proposer = async (ctx, caller, proc, input, door) => {
  const assistant = door === "assistant";
  if (!caller.grant && !assistant) throw new TypeError("Only an API grant's or the assistant's changes become proposals");
  const tool = changeToolFor(proc);
  const proposal = tool ? await tool.describe(ctx, input as Record<string, unknown>) : describeCall(proc, input as Record<string, unknown>);
  const [row] = await ctx.tx
    .insert(aiApproval)
    .values({ storeId: ctx.tx.storeId, grantId: assistant ? null : caller.grant!.id, memberId: ctx.member.id, ...proposalColumns(proc, input, proposal, door) })
    .returning();
  // The assistant's member is in the conversation: they confirm every change there, whatever the setting.
  const done = ctx.store.mcpChangesNeedApproval || assistant ? row! : await execute(ctx, caller, row!, null);
  return view(done);
};

/** A proposal's row but for its store, grant and member (the step-by-step path and ./proposal-units.ts store the same). */
export function proposalColumns(proc: StoreProcedure, input: unknown, proposal: Proposal, door: Door) {
  return {
    source: door === "mcp" ? ("mcp" as const) : door === "assistant" ? ("assistant" as const) : ("api" as const),
    tool: changeToolFor(proc)?.name ?? null,
    procedure: procedureKey(proc),
    input: input as Record<string, unknown>,
    summary: proposal.summary.slice(0, 2000),
    diff: JSON.parse(JSON.stringify(proposal.diff)) as unknown[],
    expiresAt: sql`now() + make_interval(hours => ${APPROVAL_TTL_HOURS})`,
  };
}

/** A proposal as a client is told about it (the MCP tool's answer, /api/v1's 202). */
export function proposalAnswer(p: ProposalView) {
  const base = { approvalId: p.id, status: p.state, summary: p.summary, diff: p.diff };
  if (p.state === "pending") {
    return {
      ...base,
      expiresAt: p.expiresAt,
      next:
        p.source === "assistant"
          ? "Waiting for you to approve or reject it in this conversation. Nothing has changed yet."
          : "Waiting for the member who connected this client to approve it in the admin (AI approvals). Nothing has changed yet.",
    };
  }
  return p.state === "approved" ? { ...base, result: p.result } : { ...base, error: p.error };
}

const approvalNotFound = () => new AppError("NOT_FOUND", "AI approval not found in this store.");
const notPending = (state: string) => new AppError("CONFLICT", `This proposal is ${state}; it can be decided only once, while pending.`, { state });
const mayNotDecide = () =>
  new AppError("FORBIDDEN", "Only the member who connected the AI client can decide on this proposal; it waits for them.", { reason: "not_your_proposal" });

/** The error a proposal's approval stores when the connection that proposed it no longer admits anyone. */
export const GRANT_GONE = "The AI client's connection was revoked or has expired.";

/** Why `decider` may not decide on `row` now (not found, no longer pending, not theirs), in the order approve checks; null when they may. */
export function decideRefusal(row: ApprovalRow | undefined, decider: { id: string }): AppError | null {
  if (!row) return approvalNotFound();
  const state = approvalState(row);
  if (state !== "pending") return notPending(state);
  if (row.memberId !== decider.id) return mayNotDecide();
  return null;
}

/** approvalState in SQL. */
const stateSql = sql`(case when ${aiApproval.status} = 'pending' and ${aiApproval.expiresAt} <= now() then 'expired' else ${aiApproval.status} end)`;

/** The proposal, locked, if the calling member may decide on it now. */
async function lockDecidable(ctx: StoreContext, id: string): Promise<ApprovalRow> {
  const [row] = await ctx.tx.select().from(aiApproval).where(and(eq(aiApproval.storeId, ctx.tx.storeId), eq(aiApproval.id, id))).for("update");
  const refusal = decideRefusal(row, ctx.member);
  if (refusal) throw refusal;
  return row!;
}

/** A proposal's diff (./changes.ts Change): a value before and after, or a long text with its line diff. */
const shown = z.union([z.string(), z.number(), z.boolean(), z.null()]);
export const changesOutput = z.array(
  z.discriminatedUnion("kind", [
    z.object({ kind: z.literal("value"), field: z.string(), label: z.string(), from: shown, to: shown }),
    z.object({
      kind: z.literal("text"),
      field: z.string(),
      label: z.string(),
      from: z.string(),
      to: z.string(),
      hunks: z.array(z.object({ oldStart: z.number().int(), newStart: z.number().int(), lines: z.array(z.object({ op: z.enum(["same", "removed", "added"]), text: z.string() })) })),
    }),
  ]),
);

const approvalStates = z.enum([...APPROVAL_STATUSES, "expired"]);

/** An AI approval as its procedures answer it: the stored row, its diff and its state now. */
const approvalOutput = z.object({
  id: out.id,
  storeId: out.id,
  memberId: out.id,
  grantId: out.id.nullable(),
  source: z.enum(["mcp", "api", "assistant"]),
  tool: z.string().nullable(),
  procedure: z.string(),
  input: z.record(z.string(), z.unknown()),
  summary: z.string(),
  diff: changesOutput,
  status: z.enum(APPROVAL_STATUSES),
  state: approvalStates,
  result: z.unknown().describe("The change's answer once approved (the procedure's output); null before"),
  error: z.string().nullable(),
  expiresAt: out.instant,
  createdAt: out.instant,
  decidedAt: out.instant.nullable(),
  decidedBy: out.id.nullable(),
});

/**
 * A proposal's answer to the AI client (proposalAnswer), as MCP change tools declare their outputSchema:
 * `expiresAt` and `next` while pending, the change's `result` once approved, its `error` once failed.
 */
export const proposalAnswerOutput = z.object({
  approvalId: out.id,
  status: approvalStates,
  summary: z.string(),
  diff: changesOutput,
  expiresAt: out.instant.optional(),
  next: z.string().optional(),
  result: z.unknown().optional().describe("The change's answer (its procedure's output), once approved"),
  error: z.string().nullable().optional(),
});

export const listApprovals = storeProcedure({
  router: "aiApprovals",
  name: "list",
  description:
    "Changes AI clients proposed in this store, newest first. `yours` marks the ones that wait for you (made through a client you connected): only you decide those; the others are shown read-only. Filter by `state`.",
  access: "none",
  mutates: false,
  output: z.object({ items: z.array(approvalOutput.extend({ yours: z.boolean() })) }),
  input: z.strictObject({ state: z.enum(["pending", "approved", "rejected", "failed", "expired"]).optional() }),
  read: (q, { store, memberId }, input) =>
    plan(
      [
        q
          .select({ row: aiApproval, yours: sql<boolean>`${aiApproval.memberId} = ${memberId}` })
          .from(aiApproval)
          .where(eq(aiApproval.storeId, store))
          .orderBy(desc(aiApproval.createdAt), desc(aiApproval.id))
          .limit(200),
      ] as const,
      ([rows]) => ({ items: rows.map(({ row, yours }) => ({ ...view(row), yours })).filter((r) => !input.state || r.state === input.state) }),
    ),
});

export const approveApproval = storeProcedure({
  router: "aiApprovals",
  name: "approve",
  description: "Approve a pending proposal: the change runs once, now, with the connection's permissions as they are at this moment.",
  // The doors send it in units of its own (./approval-units.ts); `run` is the open-transaction path.
  access: "none",
  mutates: true,
  output: approvalOutput,
  input: z.strictObject({ id: z.uuid() }),
  async run(ctx, input) {
    const row = await lockDecidable(ctx, input.id);
    // The assistant's proposal runs as its member, who is deciding now (lockDecidable): their role as it is now.
    if (row.source === "assistant") return view(await execute(ctx, { store: ctx.store, member: ctx.member, permissions: ctx.permissions }, row, ctx.member.id));
    let caller: Caller;
    try {
      if (row.grantId === null) throw new Error("the grant is gone with its member");
      caller = grantCaller(await fixedRowsOn(ctx.tx, grantById(row.grantId)));
    } catch {
      const [failed] = await ctx.tx
        .update(aiApproval)
        .set({ status: "failed", decidedAt: sql`now()`, decidedBy: ctx.member.id, error: GRANT_GONE })
        .where(eq(aiApproval.id, row.id))
        .returning();
      return view(failed!);
    }
    return view(await execute(ctx, caller, row, ctx.member.id));
  },
});

export const rejectApproval = storeProcedure({
  router: "aiApprovals",
  name: "reject",
  description: "Reject a pending proposal; nothing changes.",
  access: "none",
  mutates: true,
  output: approvalOutput,
  input: z.strictObject({ id: z.uuid(), reason: z.string().trim().max(500).optional() }),
  write: {
    apply(q, { store, memberId }, input) {
      const approval = and(eq(aiApproval.storeId, store), eq(aiApproval.id, input.id));
      // Found (and locked), still pending, and the caller's own: the same refusals, in the same order, as approve's.
      const guards = [
        ensure(q, sql`exists (select 1 from ${aiApproval} where ${approval} for update)`, approvalNotFound()),
        ...(["approved", "rejected", "failed", "expired"] as const).map((state) =>
          ensure(q, sql`not exists (select 1 from ${aiApproval} where ${approval} and ${stateSql} = ${state})`, notPending(state)),
        ),
        ensure(q, sql`exists (select 1 from ${aiApproval} where ${approval} and ${aiApproval.memberId} = ${memberId})`, mayNotDecide()),
      ];
      const rejected = plan(
        [
          q
            .update(aiApproval)
            .set({ status: "rejected", decidedAt: sql`now()`, decidedBy: memberId, error: input.reason ?? null })
            .where(approval)
            .returning(),
        ] as const,
        ([[row]]) => view(row!),
      );
      return plan([...guards, ...rejected.steps], (results) => rejected.finish(results.slice(guards.length)));
    },
  },
});

export const approvalProcedures = [listApprovals, approveApproval, rejectApproval];
