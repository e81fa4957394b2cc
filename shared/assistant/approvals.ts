import { and, desc, eq, sql } from "drizzle-orm";
import { z } from "zod";
import { effectivePermissions, grantStatus } from "../api/grants";
import { isAppError, AppError } from "../http/errors";
import { aiApproval, apiGrant, member } from "../db/schema";
import type { StoreTx } from "../db/with-store";
import { storeProcedure, procedureKey, type StoreContext } from "../procedures/define";
import { parseInput } from "../procedures/execute";
import { readChanges, type Proposal } from "./changes";
import { findTool, permissionOf, type ChangeTool } from "./tools";

/**
 * AI approvals (SPEC "Grants, tokens and approvals"; docs/decisions/0004-mcp-oauth.md). A change tool
 * called over MCP stores a proposal for the member who connected the client. That member, or an
 * Owner, approves or rejects it. Approving re-checks the grant and the member's role at that moment,
 * runs the change at most once (the row is locked and leaves `pending` in the same transaction), and
 * keeps the result or the error. Proposals expire after 24 hours.
 */
export const APPROVAL_TTL_HOURS = 24;

type ApprovalRow = typeof aiApproval.$inferSelect;

export function approvalState(row: Pick<ApprovalRow, "status" | "expiresAt">, now = new Date()): ApprovalRow["status"] | "expired" {
  return row.status === "pending" && row.expiresAt.getTime() <= now.getTime() ? "expired" : row.status;
}

const view = (row: ApprovalRow) => ({ ...row, diff: readChanges(row.diff), state: approvalState(row) });

/**
 * Runs a proposal's change inside a savepoint of the caller's transaction, as `actor` (the grant's
 * member with the grant's effective permissions), and records the outcome on the row.
 */
async function execute(ctx: StoreContext, row: ApprovalRow, decidedBy: string | null): Promise<ApprovalRow> {
  const tool = findTool(row.tool);
  let result: unknown = null;
  let error: string | null = null;
  if (!tool || tool.kind !== "change") error = `The tool ${row.tool} no longer exists.`;
  else if (!ctx.permissions.has(permissionOf(tool))) error = `The connection no longer has ${permissionOf(tool)} (the grant's areas or the member's role changed).`;
  else {
    await ctx.tx.$client.query("savepoint ai_approval_run");
    try {
      result = await tool.procedure.run(ctx, parseInput(tool.procedure, row.input));
      await ctx.tx.$client.query("release savepoint ai_approval_run");
    } catch (e) {
      await ctx.tx.$client.query("rollback to savepoint ai_approval_run");
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
 * The propose step of an MCP change tool (source `mcp`): validates the input, describes the change,
 * stores the proposal; with 'Changes need approval' off, approves it at once with the grant's permissions.
 */
export async function propose(ctx: StoreContext, tool: ChangeTool, rawInput: unknown, grantId: string): Promise<{ approval: ReturnType<typeof view>; proposal: Proposal }> {
  const input = parseInput(tool.procedure, rawInput) as Record<string, unknown>;
  const proposal = await tool.describe(ctx.tx, input, ctx.store);
  const [row] = await ctx.tx
    .insert(aiApproval)
    .values({
      storeId: ctx.tx.storeId,
      grantId,
      memberId: ctx.member.id,
      tool: tool.name,
      procedure: procedureKey(tool.procedure),
      input,
      summary: proposal.summary.slice(0, 2000),
      diff: JSON.parse(JSON.stringify(proposal.diff)) as unknown[],
      expiresAt: sql`now() + make_interval(hours => ${APPROVAL_TTL_HOURS})`,
    })
    .returning();
  const done = ctx.store.mcpChangesNeedApproval ? row! : await execute(ctx, row!, null);
  return { approval: view(done), proposal };
}

async function lockPending(tx: StoreTx, id: string): Promise<ApprovalRow> {
  const [row] = await tx.select().from(aiApproval).where(and(eq(aiApproval.storeId, tx.storeId), eq(aiApproval.id, id))).for("update");
  if (!row) throw new AppError("NOT_FOUND", "AI approval not found in this store.");
  const state = approvalState(row);
  if (state !== "pending") throw new AppError("CONFLICT", `This proposal is ${state}; it can be decided only once, while pending.`, { state });
  return row;
}

function mayDecide(ctx: StoreContext, row: ApprovalRow): void {
  if (row.memberId !== ctx.member.id && ctx.member.role !== "owner") {
    throw new AppError("FORBIDDEN", "Only the member who connected the AI client, or an Owner, can decide on this proposal.");
  }
}

const mine = (ctx: StoreContext) => (ctx.member.role === "owner" ? undefined : eq(aiApproval.memberId, ctx.member.id));

export const listApprovals = storeProcedure({
  router: "aiApprovals",
  name: "list",
  description: "Changes AI clients proposed, newest first: yours (Owners see all). Filter by `state`.",
  access: "none",
  mutates: false,
  input: z.strictObject({ state: z.enum(["pending", "approved", "rejected", "failed", "expired"]).optional() }),
  async run(ctx, input) {
    const rows = await ctx.tx
      .select()
      .from(aiApproval)
      .where(and(eq(aiApproval.storeId, ctx.tx.storeId), mine(ctx)))
      .orderBy(desc(aiApproval.createdAt), desc(aiApproval.id))
      .limit(200);
    return { items: rows.map(view).filter((r) => !input.state || r.state === input.state) };
  },
});

export const approveApproval = storeProcedure({
  router: "aiApprovals",
  name: "approve",
  description: "Approve a pending proposal: the change runs once, now, with the connection's permissions as they are at this moment.",
  access: "none",
  mutates: true,
  input: z.strictObject({ id: z.uuid() }),
  async run(ctx, input) {
    const row = await lockPending(ctx.tx, input.id);
    mayDecide(ctx, row);
    const [grant] = await ctx.tx
      .select({ areas: apiGrant.areas, revokedAt: apiGrant.revokedAt, expiresAt: apiGrant.expiresAt, memberId: member.id, userId: member.userId, role: member.role })
      .from(apiGrant)
      .innerJoin(member, and(eq(member.storeId, apiGrant.storeId), eq(member.id, apiGrant.memberId)))
      .where(and(eq(apiGrant.storeId, ctx.tx.storeId), eq(apiGrant.id, row.grantId)));
    if (!grant || grantStatus(grant) !== "active") {
      const [failed] = await ctx.tx
        .update(aiApproval)
        .set({ status: "failed", decidedAt: sql`now()`, decidedBy: ctx.member.id, error: "The AI client's connection was revoked or has expired." })
        .where(eq(aiApproval.id, row.id))
        .returning();
      return view(failed!);
    }
    const actor: StoreContext = {
      ...ctx,
      member: { id: grant.memberId, userId: grant.userId, role: grant.role },
      permissions: effectivePermissions(grant.role, grant.areas),
      via: "mcp",
    };
    return view(await execute(actor, row, ctx.member.id));
  },
});

export const rejectApproval = storeProcedure({
  router: "aiApprovals",
  name: "reject",
  description: "Reject a pending proposal; nothing changes.",
  access: "none",
  mutates: true,
  input: z.strictObject({ id: z.uuid(), reason: z.string().trim().max(500).optional() }),
  async run(ctx, input) {
    const row = await lockPending(ctx.tx, input.id);
    mayDecide(ctx, row);
    const [updated] = await ctx.tx
      .update(aiApproval)
      .set({ status: "rejected", decidedAt: sql`now()`, decidedBy: ctx.member.id, error: input.reason ?? null })
      .where(eq(aiApproval.id, row.id))
      .returning();
    return view(updated!);
  },
});

export const approvalProcedures = [listApprovals, approveApproval, rejectApproval];
