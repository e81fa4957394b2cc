import { areasYielding, rolesWith } from "../auth/grants";
import type { CallCheck } from "../db/openings";
import { AppError } from "../core/errors";
import { isSessionProcedure, procedureKey, type Procedure, type StoreProcedure, type Via } from "../procedures/define";
import { grantPermissionDenied, permissionDenied, type Caller } from "./principal";

/**
 * The pipeline's checks (./run.ts checkCaller) as data for a unit's opening (migration 0024
 * unit.caller_allowed): the database admits the caller in the same round trip as the work. Both sides
 * read the one definition of roles and grant areas (shared/auth/permissions.ts, shared/auth/grants.ts);
 * shared/pipeline/check.test.ts proves they decide alike for every role, grant and setting.
 */
export type Door = "session" | "token" | "mcp" | "approval" | "assistant";

/**
 * Doors where the store's AI-client settings bind every caller: MCP, the approval runner, and the store's
 * own assistant (a model chooses its calls, though the member is present).
 */
export const settingsBind = (door: Door): boolean => door === "mcp" || door === "approval" || door === "assistant";

/** The check a procedure call makes at a door; `slug` when the door was addressed to one store. */
export function checkFor(proc: StoreProcedure, door: Door, slug: string | null = null): CallCheck {
  const permission = proc.access === "none" ? null : proc.access;
  return {
    roles: permission ? rolesWith(permission) : null,
    areas: permission ? areasYielding(permission) : [],
    memberOnly: proc.access === "none",
    doorBinds: settingsBind(door),
    customerDetails: proc.customerDetails === true,
    mutates: proc.mutates,
    slug,
  };
}

/**
 * One check for several procedures read in one unit (an admin page's lists): the caller must pass each.
 * Roles and grant areas intersect; the flags hold when any procedure has them.
 */
export function checkForAll(procs: readonly StoreProcedure[], door: Door, slug: string | null = null): CallCheck {
  const checks = procs.map((p) => checkFor(p, door, slug));
  const gated = checks.filter((c) => c.roles !== null);
  const intersect = (lists: readonly (readonly string[])[]) => lists.reduce<readonly string[]>((acc, l) => acc.filter((x) => l.includes(x)), lists[0] ?? []);
  return {
    roles: gated.length ? intersect(gated.map((c) => c.roles!)) : null,
    areas: gated.length ? intersect(gated.map((c) => c.areas)) : [],
    memberOnly: checks.some((c) => c.memberOnly),
    doorBinds: settingsBind(door),
    customerDetails: checks.some((c) => c.customerDetails),
    mutates: checks.some((c) => c.mutates),
    slug,
  };
}

/** Resolve the caller only (MCP tools/list, a page's chrome): no procedure to check against. */
export function resolveOnly(door: Door, slug: string | null = null): CallCheck {
  return { roles: null, areas: [], memberOnly: false, doorBinds: settingsBind(door), customerDetails: false, mutates: false, slug };
}

/** The store's AI-client settings bind OAuth grants at every door, and everything over MCP (SPEC "Store settings"). */
export function boundBySettings(caller: Caller, door: Door): boolean {
  return settingsBind(door) || caller.grant?.kind === "oauth";
}

export function viaOf(door: Door): Via {
  return door === "approval" ? "mcp" : door === "assistant" ? "session" : door;
}

function refused(reason: string, message: string): AppError {
  return new AppError("FORBIDDEN", message, { reason });
}

/**
 * Steps 3-5: may this caller run this procedure at this door? Throws the refusal. The one-round-trip
 * path asks the database the same question (./check.ts, migration 0024) and comes back here for the
 * words of a refusal.
 */
export function checkCaller(caller: Caller, proc: Procedure, door: Door): asserts proc is StoreProcedure {
  const key = procedureKey(proc);
  if (isSessionProcedure(proc)) {
    if (caller.grant) throw refused("session_only", `${key} needs a signed-in member session; tokens cannot call it.`);
    throw new TypeError(`${key} is a session procedure: run it without a store unit`);
  }
  if (proc.access === "none" && caller.grant) throw refused("member_only", `${key} is for members in the admin only; tokens cannot call it.`);
  if (proc.access !== "none" && !caller.permissions.has(proc.access)) {
    throw caller.grant ? grantPermissionDenied(caller, proc.access) : permissionDenied(proc.access);
  }
  const aiClient = boundBySettings(caller, door);
  if (aiClient && proc.customerDetails && !caller.store.mcpReadCustomerDetails) {
    throw refused("customer_details_off", "This store does not let AI clients read customer details. An Owner or Admin can allow it in Settings → MCP & API.");
  }
  if (aiClient && proc.mutates && !caller.store.mcpAllowChanges) {
    throw refused("ai_changes_off", "This store does not let AI clients make changes. An Owner or Admin can allow it in Settings → MCP & API.");
  }
}
