import { sql, type SQL } from "drizzle-orm";
import { areasYielding, rolesWith } from "../auth/grants";
import type { Permission } from "../auth/permissions";
import { CURRENT_STORE } from "../db/openings";
import type { RoleName } from "../db/schema";

/** The store a procedure runs in, as the pipeline read it. */
export interface StoreInfo {
  id: string;
  slug: string;
  name: string;
  currency: string;
  mcpReadCustomerDetails: boolean;
  mcpAllowChanges: boolean;
  mcpChangesNeedApproval: boolean;
}

/** The calling member. */
export interface MemberInfo {
  id: string;
  userId: string;
  role: RoleName;
}

/** The caller as a plan's `finish` may read it (after its unit came back). */
export interface CallerFacts {
  store: StoreInfo;
  member: MemberInfo;
  permissions: ReadonlySet<Permission>;
}

/**
 * Who is calling, as SQL a plan's statements can use (a plan is built before its unit runs, so it
 * cannot read the caller in TypeScript). In a one-round-trip unit these read the settings the opening
 * left (migration 0024 unit.admit); on a WebSocket transaction (tests, the approval runner) they are the
 * resolved caller's values.
 */
export interface Scope {
  /** The unit's store (uuid). */
  readonly store: SQL;
  /** The calling member (uuid). */
  readonly memberId: SQL;
  /** Whether customers' contact details may be shown to this caller (boolean). */
  readonly contact: SQL<boolean>;
  /** The store's AI-client settings bind this call (an OAuth connection, anything over MCP). */
  readonly aiClient: boolean;
  /** Whether the caller holds `permission` (boolean). */
  can(permission: Permission): SQL<boolean>;
  /** The signed-in person (uuid). */
  readonly userId: SQL;
  /** The caller the unit admitted. Only a plan's `finish` may ask: when the plan is built, nobody knows yet. */
  caller(): CallerFacts;
}


/** The scope of a unit opened by a unit.open_* function; `admitted` answers the caller once it is known. */
export function unitScope(aiClient: boolean, admitted: () => CallerFacts): Scope {
  return {
    store: CURRENT_STORE,
    memberId: sql`nullif(current_setting('app.member_id', true), '')::uuid`,
    userId: sql`nullif(current_setting('app.user_id', true), '')::uuid`,
    caller: admitted,
    contact: sql<boolean>`(current_setting('app.contact', true) = 'on')`,
    aiClient,
    can: (permission) => sql<boolean>`unit.caller_can(${sql.param(rolesWith(permission))}::text[], ${sql.param(areasYielding(permission))}::text[])`,
  };
}

/** The scope of a procedure run on an open transaction, from its resolved caller. */
export function txScope(ctx: CallerFacts & { aiClient: boolean }): Scope {
  const contact = !ctx.aiClient || ctx.store.mcpReadCustomerDetails;
  return {
    store: CURRENT_STORE,
    memberId: sql`${ctx.member.id}::uuid`,
    userId: sql`${ctx.member.userId}::uuid`,
    caller: () => ({ store: ctx.store, member: ctx.member, permissions: ctx.permissions }),
    contact: contact ? sql<boolean>`true` : sql<boolean>`false`,
    aiClient: ctx.aiClient,
    can: (permission) => (ctx.permissions.has(permission) ? sql<boolean>`true` : sql<boolean>`false`),
  };
}

/**
 * The same caller, for statements that must find nothing unless the caller holds `permission`: their
 * store becomes null without it (every plan filters on `scope.store`, and RLS finds no rows for null).
 */
export function gatedScope(scope: Scope, permission: Permission): Scope {
  return { ...scope, store: sql`(case when ${scope.can(permission)} then ${scope.store} end)` };
}
