import { and, eq } from "drizzle-orm";
import { describePermission, ROLE_PERMISSIONS, type Permission } from "../auth/permissions";
import type { Database } from "../db/database";
import { clientErrorFromConstraint } from "../db/pg-errors";
import { member, store } from "../db/schema";
import { withStore, type StoreTx } from "../db/with-store";
import { AppError, badRequest, noActiveStore, notAMember, storeNotFound } from "../http/errors";
import { issuesOf } from "../http/validate";
import type { Logger } from "../log";
import type { MemberInfo, Procedure, SessionContext, StoreInfo, StoreProcedure, Via } from "./define";

/** A signed-in person working in the session's active store (null when none is chosen yet). */
export interface SessionCaller {
  kind: "session";
  userId: string;
  storeId: string | null;
}

export type StoreCaller = SessionCaller;

export function permissionDenied(permission: Permission): AppError {
  return new AppError("FORBIDDEN", `Your role does not allow ${describePermission(permission)} (${permission}).`, { permission });
}

/** Parses a procedure's input; a failure is a 400 naming each field. An absent input counts as {}. */
export function parseInput<P extends Procedure>(proc: P, raw: unknown): unknown {
  const parsed = proc.input.safeParse(raw === undefined ? {} : raw);
  if (!parsed.success) throw badRequest(issuesOf(parsed.error));
  return parsed.data;
}

/** The store and the caller's membership in it, in one query. Throws the 'no store' errors. */
async function loadMembership(tx: StoreTx, userId: string): Promise<{ store: StoreInfo; member: MemberInfo }> {
  const [row] = await tx
    .select({
      store: {
        id: store.id,
        slug: store.slug,
        name: store.name,
        currency: store.currency,
        mcpReadCustomerDetails: store.mcpReadCustomerDetails,
        mcpAllowChanges: store.mcpAllowChanges,
        mcpChangesNeedApproval: store.mcpChangesNeedApproval,
      },
      member: { id: member.id, userId: member.userId, role: member.role },
    })
    .from(store)
    .leftJoin(member, and(eq(member.storeId, store.id), eq(member.userId, userId)))
    .where(eq(store.id, tx.storeId))
    .limit(1);
  if (!row) throw storeNotFound();
  if (!row.member) throw notAMember();
  return { store: row.store, member: row.member };
}

/**
 * Runs a store procedure for a caller, in one store-scoped transaction (read-only unless the
 * procedure mutates). Order: store chosen → store exists → caller is a member → permission → input →
 * run. The permission is checked before the input, so a caller without it learns nothing from 400s.
 *
 * Round trips: BEGIN+set_config, the membership query, the procedure's own statements, COMMIT.
 */
export async function runStoreProcedure(
  db: Database,
  caller: StoreCaller,
  proc: StoreProcedure,
  rawInput: unknown,
  log: Logger,
  via: Via = "session",
): Promise<unknown> {
  if (!caller.storeId) throw noActiveStore();
  return await withStore(
    db,
    caller.storeId,
    async (tx) => {
      const { store: storeInfo, member: memberInfo } = await loadMembership(tx, caller.userId);
      const permissions = ROLE_PERMISSIONS[memberInfo.role];
      if (proc.access !== "none" && !permissions.has(proc.access)) throw permissionDenied(proc.access);
      const input = parseInput(proc, rawInput);
      return proc.run({ tx, store: storeInfo, member: memberInfo, permissions, via, log }, input);
    },
    { readOnly: !proc.mutates },
  ).catch((e: unknown) => {
    throw clientErrorFromConstraint(e) ?? e;
  });
}

/** Runs a session procedure (account, store picking): no store transaction is opened for it. */
export async function runSessionProcedure(ctx: SessionContext, proc: Procedure & { access: "session" }, rawInput: unknown): Promise<unknown> {
  const input = parseInput(proc, rawInput);
  return proc.run(ctx, input);
}

/**
 * Whether a person belongs to a store, checked inside that store (for the store picker and
 * store.switch). Throws storeNotFound / notAMember like a procedure call would.
 */
export function membershipIn(db: Database, storeId: string, userId: string): Promise<{ store: StoreInfo; member: MemberInfo }> {
  return withStore(db, storeId, (tx) => loadMembership(tx, userId), { readOnly: true });
}
