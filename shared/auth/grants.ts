import { AREAS, permissionsOfArea, ROLE_PERMISSIONS, type Area, type Permission } from "./permissions";
import { randomSecret, sha256Hex } from "../core/tokens";
import type { RoleName } from "../db/schema";

/**
 * Grants: what an API caller (a created token or an OAuth connection) may do, for one member of one
 * store (SPEC "api_grant", Authentication 5-6; ARCHITECTURE §4).
 */

/** Created tokens start with this, so secret scanners (GitHub, GitGuardian) can recognise them. */
export const TOKEN_PREFIX = "wc_live_";
/** `wc_live_` + 43 base64url characters (32 random bytes). */
export const TOKEN_PATTERN = /^wc_live_[A-Za-z0-9_-]{43}$/;

export const AREA_SCOPES = AREAS.flatMap((a) => [`${a}:read`, `${a}:write`] as const);
export type AreaScope = (typeof AREA_SCOPES)[number];

export const TOKEN_LIFETIMES = [30, 90, 365] as const;

export interface NewTokenSecret {
  token: string;
  hash: string;
  hint: string;
}

export async function newTokenSecret(): Promise<NewTokenSecret> {
  const token = `${TOKEN_PREFIX}${randomSecret(32)}`;
  return { token, hash: await sha256Hex(token), hint: token.slice(-4) };
}

export function isAreaScope(value: string): value is AreaScope {
  return (AREA_SCOPES as readonly string[]).includes(value);
}

/** One entry per area, the higher level winning (write implies read), in the order of AREAS. */
export function normaliseAreas(scopes: readonly AreaScope[]): AreaScope[] {
  const level = new Map<Area, "read" | "write">();
  for (const scope of scopes) {
    const [area, l] = scope.split(":") as [Area, "read" | "write"];
    if (l === "write" || !level.has(area)) level.set(area, l);
  }
  return AREAS.filter((a) => level.has(a)).map((a) => `${a}:${level.get(a)!}` as AreaScope);
}

/** The permissions a grant's areas yield. Never refunds, cancels, deletes, settings, staff or billing. */
export function permissionsOfAreas(scopes: readonly string[]): Set<Permission> {
  const out = new Set<Permission>();
  for (const scope of scopes) {
    if (!isAreaScope(scope)) continue;
    const [area, level] = scope.split(":") as [Area, "read" | "write"];
    for (const p of permissionsOfArea(area, level)) out.add(p);
  }
  return out;
}

/** Effective permissions of an API call: the member's role (read fresh) ∩ the grant's areas. */
export function effectivePermissions(role: RoleName, scopes: readonly string[]): Set<Permission> {
  const role_ = ROLE_PERMISSIONS[role];
  return new Set([...permissionsOfAreas(scopes)].filter((p) => role_.has(p)));
}

const ROLES = Object.keys(ROLE_PERMISSIONS) as RoleName[];

/** The roles whose permissions include `permission`. */
export function rolesWith(permission: Permission): RoleName[] {
  return ROLES.filter((r) => ROLE_PERMISSIONS[r].has(permission));
}

/** The grant areas that yield `permission` (none for the reserved ones). */
export function areasYielding(permission: Permission): AreaScope[] {
  return AREA_SCOPES.filter((scope) => permissionsOfAreas([scope]).has(permission));
}

/** The area scopes a role can hand out (a member cannot grant beyond their own role). */
export function grantableScopes(role: RoleName): AreaScope[] {
  const perms = ROLE_PERMISSIONS[role];
  return AREA_SCOPES.filter((scope) => [...permissionsOfAreas([scope])].every((p) => perms.has(p)));
}

export type GrantStatus = "active" | "expired" | "revoked";

export function grantStatus(g: { revokedAt: Date | null; expiresAt: Date | null }, now: Date = new Date()): GrantStatus {
  if (g.revokedAt) return "revoked";
  if (g.expiresAt && g.expiresAt.getTime() <= now.getTime()) return "expired";
  return "active";
}
