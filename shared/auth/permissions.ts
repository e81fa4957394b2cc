import type { RoleName } from "../db/schema";

/**
 * Roles and permissions, defined in code in this one module (ARCHITECTURE §4). A role is a set of
 * permission strings; a procedure names at most one permission. The role × permission table in docs/admin.md
 * is generated from ROLE_PERMISSIONS (`npm run docs`, shared/registry/docs.ts) and shared/registry/docs.test.ts keeps the two equal.
 */

/** The areas a grant can cover (SPEC "api_grant"), each granted as read or write. */
export const AREAS = ["products", "orders", "customers", "inventory", "discounts", "content", "analytics"] as const;
export type Area = (typeof AREAS)[number];

const areaPermissions = AREAS.flatMap((a) => [`${a}.read`, `${a}.write`] as const);

/**
 * Permissions no area ever yields (SPEC: write never includes refunds, cancels, deletes, settings, staff
 * or billing). They belong to roles only. `marketing.send` schedules, changes or cancels a campaign, an
 * email to every consenting customer: never inside a grant's `content` write (issue 20 item 15).
 */
export const RESERVED_PERMISSIONS = [
  "orders.refund",
  "orders.cancel",
  "marketing.send",
  "records.delete",
  "settings.read",
  "settings.write",
  "staff.read",
  "staff.write",
  "billing.read",
  "billing.write",
] as const;

export const PERMISSIONS = [...areaPermissions, ...RESERVED_PERMISSIONS] as const;
export type Permission = `${Area}.read` | `${Area}.write` | (typeof RESERVED_PERMISSIONS)[number];

const all = (...excluded: Permission[]): Permission[] => PERMISSIONS.filter((p) => !excluded.includes(p));

export const ROLE_PERMISSIONS: Record<RoleName, ReadonlySet<Permission>> = {
  // Everything, billing and staff management included.
  owner: new Set(all()),
  // Runs the store: everything but billing and managing staff (they may see who the staff are).
  admin: new Set(all("billing.read", "billing.write", "staff.write")),
  // Day-to-day work: catalog, orders, customers and stock; reads discounts and pages. No settings,
  // analytics, staff, billing, refunds, cancels or deletes.
  staff: new Set<Permission>([
    "products.read",
    "products.write",
    "orders.read",
    "orders.write",
    "customers.read",
    "customers.write",
    "inventory.read",
    "inventory.write",
    "discounts.read",
    "content.read",
  ]),
};

export const ROLE_LABELS: Record<RoleName, string> = { owner: "Owner", admin: "Admin", staff: "Staff" };

export function roleAllows(role: RoleName, permission: Permission): boolean {
  return ROLE_PERMISSIONS[role].has(permission);
}

export function isPermission(value: string): value is Permission {
  return (PERMISSIONS as readonly string[]).includes(value);
}

/** The permissions a grant area yields: read gives `<area>.read`; write adds `<area>.write`. */
export function permissionsOfArea(area: Area, level: "read" | "write"): Permission[] {
  return level === "read" ? [`${area}.read`] : [`${area}.read`, `${area}.write`];
}

/** Permissions in a stable, readable order (the order of PERMISSIONS). */
export function sortedPermissions(set: ReadonlySet<Permission>): Permission[] {
  return PERMISSIONS.filter((p) => set.has(p));
}

/** A sentence for the 'Missing permission' error (SPEC "Admin RPC errors": begins 'Your role does not allow'). */
export function describePermission(permission: Permission): string {
  const [area, action] = permission.split(".") as [string, string];
  const verbs: Record<string, string> = {
    read: "viewing",
    write: "changing",
    refund: "refunding",
    cancel: "cancelling",
    delete: "deleting",
    send: "sending",
  };
  if (permission === "records.delete") return "deleting records";
  return `${verbs[action] ?? action} ${area}`;
}
