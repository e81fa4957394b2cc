import { describePermission, RESERVED_PERMISSIONS, ROLE_PERMISSIONS, type Permission } from "../auth/permissions";
import { effectivePermissions } from "../auth/grants";
import type { RoleName } from "../db/schema";
import { grantById, grantByTokenHash, membershipOf, type Statement, type StoreKey } from "../db/statements";
import { isUuid } from "../db/ids";
import { AppError, noActiveStore, notAMember, storeNotFound } from "../core/errors";
import type { MemberInfo, StoreInfo } from "../procedures/define";

/**
 * Who is calling (ARCHITECTURE §4), as each door finds them before any database work:
 *   - member: a signed-in person working in the session's active store (/api/rpc, the pages);
 *   - token:  a created token, known by the SHA-256 of its secret (/api/v1, /api/mcp);
 *   - oauth:  an OAuth connection whose access token the provider verified; its props carry the grant
 *             and the store (/api/v1, /api/mcp).
 * The pipeline turns a principal into a Caller with one fixed statement in the unit's opening message.
 */
export type Principal =
  | { kind: "member"; userId: string; storeId: string | null }
  /** A session known only by the SHA-256 of its cookie's id: resolved in the unit's own opening. */
  | { kind: "session"; idHash: string }
  | { kind: "token"; tokenHash: string }
  | { kind: "oauth"; grantId: string; storeId: string };

export interface GrantInfo {
  id: string;
  kind: "token" | "oauth";
  areas: string[];
}

/** A principal resolved inside its store: read fresh in the same transaction as the work. */
export interface Caller {
  store: StoreInfo;
  member: MemberInfo;
  /** The role's permissions, capped by the grant's areas for API callers. */
  permissions: ReadonlySet<Permission>;
  /** Absent for a member's session. */
  grant?: GrantInfo;
}

/** The store key and the opening statement that resolve a principal. */
export function openingFor(principal: Principal): { store: StoreKey; opening: Statement } {
  switch (principal.kind) {
    case "session":
      throw new TypeError("A session principal opens one-round-trip units only (shared/pipeline/read.ts)");
    case "member":
      // SPEC "Admin RPC errors": no active store, then a store that does not exist.
      if (!principal.storeId) throw noActiveStore();
      if (!isUuid(principal.storeId)) throw storeNotFound();
      return { store: { id: principal.storeId }, opening: membershipOf(principal.userId) };
    case "token":
      return { store: { tokenHash: principal.tokenHash }, opening: grantByTokenHash(principal.tokenHash) };
    case "oauth":
      return { store: { id: principal.storeId }, opening: grantById(principal.grantId) };
  }
}

export function invalidToken(message = "The access token is unknown, expired or revoked."): AppError {
  return new AppError("UNAUTHORIZED", message, { reason: "invalid_token" });
}

interface StoreColumns {
  id: string;
  slug: string;
  name: string;
  currency: string;
  mcp_read_customer_details: boolean;
  mcp_allow_changes: boolean;
  mcp_changes_need_approval: boolean;
}

interface MemberColumns {
  member_id: string | null;
  user_id: string | null;
  role: RoleName | null;
}

interface GrantColumns {
  grant_id: string;
  grant_kind: "token" | "oauth";
  areas: string[];
  /** A time (a Date from a row, its text from a unit's JSON) or null. */
  revoked_at: Date | string | null;
  expired: boolean;
}

function storeOf(row: StoreColumns): StoreInfo {
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    currency: row.currency,
    mcpReadCustomerDetails: row.mcp_read_customer_details,
    mcpAllowChanges: row.mcp_allow_changes,
    mcpChangesNeedApproval: row.mcp_changes_need_approval,
  };
}

/** A member's caller from the membership statement; the 'no store' errors when there is none. */
export function memberCaller(rows: Record<string, unknown>[]): Caller {
  const row = rows[0] as (StoreColumns & MemberColumns) | undefined;
  if (!row) throw storeNotFound();
  if (!row.member_id || !row.user_id || !row.role) throw notAMember();
  return { store: storeOf(row), member: { id: row.member_id, userId: row.user_id, role: row.role }, permissions: ROLE_PERMISSIONS[row.role] };
}

/** A grant's caller from a grant statement; 401 invalid_token when it is unknown, revoked or expired. */
export function grantCaller(rows: Record<string, unknown>[]): Caller {
  const row = rows[0] as (StoreColumns & MemberColumns & GrantColumns) | undefined;
  if (!row || !row.member_id || !row.user_id || !row.role) throw invalidToken();
  if (row.revoked_at) throw invalidToken("This token has been revoked.");
  if (row.expired) throw invalidToken("This token has expired.");
  return {
    store: storeOf(row),
    member: { id: row.member_id, userId: row.user_id, role: row.role },
    permissions: effectivePermissions(row.role, row.areas),
    grant: { id: row.grant_id, kind: row.grant_kind, areas: row.areas },
  };
}

export function callerFrom(principal: Principal, rows: Record<string, unknown>[]): Caller {
  return principal.kind === "member" || principal.kind === "session" ? memberCaller(rows) : grantCaller(rows);
}

export function permissionDenied(permission: Permission): AppError {
  return new AppError("FORBIDDEN", `Your role does not allow ${describePermission(permission)} (${permission}).`, { permission });
}

/** Why an API caller lacks a permission: the grant's areas or the member's role (both cap every call). */
export function grantPermissionDenied(caller: Caller, permission: Permission): AppError {
  const byRole = ROLE_PERMISSIONS[caller.member.role].has(permission);
  const what = describePermission(permission);
  const kind = caller.grant?.kind === "oauth" ? "connection" : "token";
  // Refunds, cancels, deletes, settings, staff and billing belong to members only: no area grants them.
  if ((RESERVED_PERMISSIONS as readonly string[]).includes(permission)) {
    return new AppError("FORBIDDEN", `A ${kind} can never be used for ${what} (${permission}): only a member can, in the admin.`, { permission, reason: "members_only" });
  }
  const message = byRole
    ? `This ${kind}'s grant does not allow ${what} (${permission}). ${kind === "connection" ? "Reconnect the client and allow that area." : "Create a token with that area."}`
    : `The member's role does not allow ${what} (${permission}).`;
  return new AppError("FORBIDDEN", message, { permission });
}
