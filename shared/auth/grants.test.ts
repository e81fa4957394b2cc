import { describe, expect, it } from "vitest";
import { PERMISSIONS, RESERVED_PERMISSIONS } from "./permissions";
import { AREA_SCOPES, effectivePermissions, grantableScopes, grantStatus, newTokenSecret, normaliseAreas, permissionsOfAreas, TOKEN_PATTERN } from "./grants";
import { sha256Hex } from "../core/tokens";

describe("grants", () => {
  it("makes tokens with the live prefix, 32 random bytes, a hash and a 4-character hint", async () => {
    const a = await newTokenSecret();
    const b = await newTokenSecret();
    expect(a.token).toMatch(TOKEN_PATTERN);
    expect(a.token).not.toBe(b.token);
    expect(a.hash).toBe(await sha256Hex(a.token));
    expect(a.hint).toBe(a.token.slice(-4));
  });

  it("has 14 area scopes; write implies read; no area ever yields a reserved permission", () => {
    expect(AREA_SCOPES).toHaveLength(14);
    expect([...permissionsOfAreas(["orders:write"])]).toEqual(["orders.read", "orders.write"]);
    const all = permissionsOfAreas(AREA_SCOPES);
    for (const reserved of RESERVED_PERMISSIONS) expect(all.has(reserved)).toBe(false);
    expect(all.size).toBe(PERMISSIONS.length - RESERVED_PERMISSIONS.length);
  });

  it("normalises areas: one per area, write winning, in a stable order", () => {
    expect(normaliseAreas(["orders:read", "products:read", "orders:write", "products:read"])).toEqual(["products:read", "orders:write"]);
  });

  it("caps a grant by the member's role", () => {
    expect([...effectivePermissions("staff", ["products:write", "analytics:read", "discounts:write"])].sort()).toEqual(
      ["discounts.read", "products.read", "products.write"].sort(),
    );
    expect(grantableScopes("staff")).not.toContain("analytics:read");
    expect(grantableScopes("staff")).toContain("discounts:read");
    expect(grantableScopes("staff")).not.toContain("discounts:write");
    expect(grantableScopes("owner")).toEqual(AREA_SCOPES);
  });

  it("knows active, expired and revoked", () => {
    const now = new Date("2026-01-01T00:00:00Z");
    expect(grantStatus({ revokedAt: null, expiresAt: null }, now)).toBe("active");
    expect(grantStatus({ revokedAt: null, expiresAt: new Date("2026-01-01T00:00:00Z") }, now)).toBe("expired");
    expect(grantStatus({ revokedAt: now, expiresAt: new Date("2027-01-01T00:00:00Z") }, now)).toBe("revoked");
  });
});
