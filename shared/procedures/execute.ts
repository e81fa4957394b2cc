import { describePermission, ROLE_PERMISSIONS, type Permission } from "../auth/permissions";
import type { Database } from "../db/database";
import { clientErrorFromConstraint } from "../db/pg-errors";
import { isUuid } from "../db/ids";
import type { RoleName } from "../db/schema";
import { withStore } from "../db/with-store";
import { AppError, badRequest, noActiveStore, notAMember, storeNotFound } from "../http/errors";
import { issuesOf } from "../http/validate";
import type { Logger } from "../log";
import type { MemberInfo, Procedure, Services, SessionContext, StoreInfo, StoreProcedure, Via } from "./define";

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

/**
 * The store and the caller's membership in it, as one statement that rides in the transaction's
 * opening message (no round trip of its own). Both ids are checked to be UUIDs before inlining.
 */
function membershipSql(storeId: string, userId: string): string {
  if (!isUuid(storeId) || !isUuid(userId)) throw new TypeError("membershipSql: ids must be UUIDs");
  return `select s.id, s.slug, s.name, s.currency, s.mcp_read_customer_details, s.mcp_allow_changes,
    s.mcp_changes_need_approval, m.id as member_id, m.user_id, m.role
    from store s left join member m on m.store_id = s.id and m.user_id = '${userId.toLowerCase()}'
    where s.id = '${storeId.toLowerCase()}'`;
}

interface MembershipRow {
  id: string;
  slug: string;
  name: string;
  currency: string;
  mcp_read_customer_details: boolean;
  mcp_allow_changes: boolean;
  mcp_changes_need_approval: boolean;
  member_id: string | null;
  user_id: string | null;
  role: RoleName | null;
}

/** Reads the membership row; throws the 'no store' errors (store gone, not a member). */
function membershipFrom(rows: Record<string, unknown>[]): { store: StoreInfo; member: MemberInfo } {
  const row = rows[0] as MembershipRow | undefined;
  if (!row) throw storeNotFound();
  if (!row.member_id || !row.user_id || !row.role) throw notAMember();
  return {
    store: {
      id: row.id,
      slug: row.slug,
      name: row.name,
      currency: row.currency,
      mcpReadCustomerDetails: row.mcp_read_customer_details,
      mcpAllowChanges: row.mcp_allow_changes,
      mcpChangesNeedApproval: row.mcp_changes_need_approval,
    },
    member: { id: row.member_id, userId: row.user_id, role: row.role },
  };
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
  services?: Services,
): Promise<unknown> {
  if (!caller.storeId) throw noActiveStore();
  if (!isUuid(caller.storeId)) throw storeNotFound();
  return await withStore(
    db,
    caller.storeId,
    async (tx, preludeRows) => {
      const { store: storeInfo, member: memberInfo } = membershipFrom(preludeRows);
      const permissions = ROLE_PERMISSIONS[memberInfo.role];
      if (proc.access !== "none" && !permissions.has(proc.access)) throw permissionDenied(proc.access);
      const input = parseInput(proc, rawInput);
      return proc.run({ tx, store: storeInfo, member: memberInfo, permissions, via, log, ...(services ? { services } : {}) }, input);
    },
    { readOnly: !proc.mutates, prelude: membershipSql(caller.storeId, caller.userId) },
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
  if (!isUuid(storeId)) return Promise.reject(storeNotFound());
  return withStore(db, storeId, async (_tx, rows) => membershipFrom(rows), { readOnly: true, prelude: membershipSql(storeId, userId) });
}
