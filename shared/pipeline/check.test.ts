import { describe, expect, it } from "vitest";
import { AREA_SCOPES } from "#shared/auth/grants";
import { ROLES } from "#shared/db/schema";
import { isSessionProcedure, procedureKey, type StoreProcedure } from "#shared/procedures/define";
import { PROCEDURES } from "#shared/registry/procedures";
import { testDb } from "../../test/harness";
import { mulberry32 } from "../../test/prng";
import { checkCaller, checkFor, type Door } from "./check";
import { callerFrom, type Principal } from "./principal";

/**
 * The database admits a caller in a one-round-trip unit's opening (migration 0024 unit.caller_allowed)
 * by the same rules as the pipeline's step-by-step checks (checkCaller). Thousands of generated callers,
 * doors, settings and procedures: both must decide alike, or a permission would hold on one path only.
 */
const db = testDb();
const DOORS: Door[] = ["session", "token", "mcp", "approval", "assistant"];
const STORE_PROCEDURES = PROCEDURES.filter((p): p is StoreProcedure => !isSessionProcedure(p));

interface Case {
  principal: Principal;
  caller: Record<string, unknown>;
  check: ReturnType<typeof checkFor>;
  proc: StoreProcedure;
  door: Door;
  label: string;
}

function generate(seed: number, n: number): Case[] {
  const random = mulberry32(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const cases: Case[] = [];
  for (let i = 0; i < n; i++) {
    const kind = pick(["member", "token", "oauth"] as const);
    const role = pick(ROLES);
    const areas = AREA_SCOPES.filter(() => random() < 0.3);
    const store = {
      id: "00000000-0000-4000-8000-000000000001",
      slug: pick(["alpha", "beta"]),
      name: "A store",
      currency: "INR",
      mcp_read_customer_details: random() < 0.5,
      mcp_allow_changes: random() < 0.5,
      mcp_changes_need_approval: random() < 0.5,
    };
    const member = { member_id: "00000000-0000-4000-8000-000000000002", user_id: "00000000-0000-4000-8000-000000000003", role };
    const grant = kind === "member" ? {} : { grant_id: "00000000-0000-4000-8000-000000000004", grant_kind: kind, areas, revoked_at: null, expired: false };
    const principal: Principal =
      kind === "member"
        ? { kind: "member", userId: member.user_id, storeId: store.id }
        : kind === "token"
          ? { kind: "token", tokenHash: "0".repeat(64) }
          : { kind: "oauth", grantId: "00000000-0000-4000-8000-000000000004", storeId: store.id };
    const proc = pick(STORE_PROCEDURES);
    // A member works at their session or through the store's assistant; a grant at the API doors.
    const door = kind === "member" ? pick(["session", "assistant"] as const) : pick(DOORS.filter((d) => d !== "session" && d !== "assistant"));
    const slug = door === "mcp" && random() < 0.5 ? pick(["alpha", "beta"]) : null;
    cases.push({
      principal,
      caller: { ...store, ...member, ...grant },
      check: checkFor(proc, door, slug),
      proc,
      door,
      label: `${kind}/${role}/${areas.join(",")}/${door}/${procedureKey(proc)}/${JSON.stringify(store)}/${slug}`,
    });
  }
  return cases;
}

function pipelineAdmits(c: Case): boolean {
  try {
    const caller = callerFrom(c.principal, [c.caller]);
    if (c.check.slug !== null && caller.store.slug !== c.check.slug) return false;
    checkCaller(caller, c.proc, c.door);
    return true;
  } catch {
    return false;
  }
}

describe("unit openings admit exactly the callers the pipeline admits", () => {
  it.each([1, 2, 3])("agree on 1500 generated calls (seed %i)", async (seed) => {
    const cases = generate(seed, 1500);
    const { rows } = await db.pool.query<{ i: number; allowed: boolean }>(
      `select (c ->> 'i')::int as i, unit.caller_allowed(c -> 'caller', c -> 'check') as allowed
       from jsonb_array_elements($1::jsonb) c`,
      [JSON.stringify(cases.map((c, i) => ({ i, caller: c.caller, check: c.check })))],
    );
    const disagree = rows.filter((r) => r.allowed !== pipelineAdmits(cases[r.i]!)).map((r) => cases[r.i]!.label);
    expect(disagree).toEqual([]);
    // Both answers occur, so the property is not vacuous.
    expect(new Set(rows.map((r) => r.allowed)).size).toBe(2);
  });
});
