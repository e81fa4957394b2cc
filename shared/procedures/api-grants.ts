import { and, desc, eq, or, sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import { AREA_SCOPES, grantableScopes, grantStatus, newTokenSecret, normaliseAreas, TOKEN_LIFETIMES } from "../api/grants";
import { apiActivity, apiGrant, member, userAccount } from "../db/schema";
import type { StoreTx } from "../db/with-store";
import { plan } from "../db/plan";
import type { Q, StatementClient } from "../db/steps";
import { runPlanOn } from "../db/unit";
import { AppError } from "../http/errors";
import { storeProcedure, type StoreContext } from "./define";
import { countColumn, offsetOf, pagePlan, pagingInput } from "./paging";
import type { Scope } from "./scope";

/**
 * Settings → MCP & API (SPEC rule 4). Who may do what (docs/decisions/0003-token-api.md):
 * every member manages their own grants; members with `staff.read` (Owner, Admin) see all of the
 * store's grants and activity; only `staff.write` (Owner) revokes another member's grant. All are
 * `none` procedures, so a token can never mint, list or revoke tokens. No outbox events: the token
 * API sends no events of its own (SPEC "Events").
 */

const grantColumns = {
  id: apiGrant.id,
  kind: apiGrant.kind,
  name: apiGrant.name,
  areas: apiGrant.areas,
  createdAt: apiGrant.createdAt,
  expiresAt: apiGrant.expiresAt,
  revokedAt: apiGrant.revokedAt,
  lastUsedAt: apiGrant.lastUsedAt,
  hint: apiGrant.secretHint,
  clientName: apiGrant.clientName,
  memberId: apiGrant.memberId,
  memberEmail: userAccount.email,
  memberName: userAccount.name,
};

type GrantRow = { [K in keyof typeof grantColumns]: (typeof grantColumns)[K]["_"]["data"] | null } & { id: string; memberId: string };

function view(row: GrantRow, now = new Date()) {
  const { memberId, memberEmail, memberName, ...rest } = row;
  return {
    ...rest,
    member: { id: memberId, email: memberEmail, name: memberName },
    status: grantStatus({ revokedAt: row.revokedAt, expiresAt: row.expiresAt }, now),
  };
}

function selectGrants(q: Q, store: SQL, where: SQL | undefined) {
  return q
    .select(grantColumns)
    .from(apiGrant)
    .innerJoin(member, and(eq(member.storeId, apiGrant.storeId), eq(member.id, apiGrant.memberId)))
    .innerJoin(userAccount, eq(userAccount.id, member.userId))
    .where(and(eq(apiGrant.storeId, store), where));
}

/** One grant as it now is, inside a transaction that is open already (a change answers it). */
function loadGrant(tx: StoreTx, id: string) {
  return runPlanOn(tx.$client as unknown as StatementClient, (q) =>
    plan([selectGrants(q, sql`${tx.storeId}::uuid`, eq(apiGrant.id, id))] as const, ([[row]]) => view(row as GrantRow)),
  );
}

const seesAll = (ctx: StoreContext) => ctx.permissions.has("staff.read");
const ownOnly = (ctx: StoreContext): SQL | undefined => (seesAll(ctx) ? undefined : eq(apiGrant.memberId, ctx.member.id));
/** ownOnly inside a plan, which knows the caller only as SQL. */
const ownOnlyIn = (scope: Scope) => or(scope.can("staff.read"), eq(apiGrant.memberId, scope.memberId));

export const createToken = storeProcedure({
  router: "apiGrants",
  name: "createToken",
  description:
    "Create a script token for yourself in this store, limited to the given areas (never beyond your role). Answers the token once: it is stored only as a hash.",
  access: "none",
  mutates: true,
  input: z.strictObject({
    name: z.string().trim().min(1).max(100),
    areas: z.array(z.enum(AREA_SCOPES)).min(1).max(14).describe('Area scopes such as "products:read" or "orders:write"'),
    lifetimeDays: z.union([z.literal(TOKEN_LIFETIMES[0]), z.literal(TOKEN_LIFETIMES[1]), z.literal(TOKEN_LIFETIMES[2]), z.null()]),
  }),
  async run(ctx, input) {
    const grantable = new Set(grantableScopes(ctx.member.role));
    const beyond = input.areas.filter((a) => !grantable.has(a));
    if (beyond.length) {
      throw new AppError("FORBIDDEN", `Your role does not allow granting ${beyond.join(", ")}.`, {
        issues: [{ path: "areas", message: `beyond your role: ${beyond.join(", ")}` }],
      });
    }
    const secret = await newTokenSecret();
    const [row] = await ctx.tx
      .insert(apiGrant)
      .values({
        storeId: ctx.tx.storeId,
        kind: "token",
        memberId: ctx.member.id,
        name: input.name,
        areas: normaliseAreas(input.areas),
        expiresAt: input.lifetimeDays === null ? null : sql`now() + make_interval(days => ${input.lifetimeDays})`,
        secretHash: secret.hash,
        secretHint: secret.hint,
      })
      .returning({ id: apiGrant.id });
    // The plain token exists only in this answer.
    return { token: secret.token, grant: await loadGrant(ctx.tx, row!.id) };
  },
});

export const listGrants = storeProcedure({
  router: "apiGrants",
  name: "list",
  description: "The store's API grants (script tokens and AI-client connections) with their areas and status. Members without staff.read see their own.",
  access: "none",
  mutates: false,
  input: z.strictObject({ status: z.enum(["active", "expired", "revoked"]).optional() }),
  read(q, scope, input) {
    const grants = selectGrants(q, scope.store, ownOnlyIn(scope)).orderBy(desc(apiGrant.createdAt), desc(apiGrant.id)).limit(500);
    return plan([grants] as const, ([rows]) => {
      const now = new Date();
      const items = rows.map((r) => view(r as GrantRow, now)).filter((g) => !input.status || g.status === input.status);
      return { items, scope: scope.caller().permissions.has("staff.read") ? "store" : "mine" };
    });
  },
});

export const revokeGrant = storeProcedure({
  router: "apiGrants",
  name: "revoke",
  description: "Revoke an API grant: its token stops working on the next call. Your own always; another member's needs staff.write.",
  access: "none",
  mutates: true,
  input: z.strictObject({ id: z.uuid() }),
  async run(ctx, input) {
    const [target] = await ctx.tx
      .select({ memberId: apiGrant.memberId, kind: apiGrant.kind, revokedAt: apiGrant.revokedAt })
      .from(apiGrant)
      .where(and(eq(apiGrant.storeId, ctx.tx.storeId), eq(apiGrant.id, input.id), ownOnly(ctx)))
      .for("update");
    if (!target) throw new AppError("NOT_FOUND", "API grant not found in this store.");
    if (target.memberId !== ctx.member.id && !ctx.permissions.has("staff.write")) {
      throw new AppError("FORBIDDEN", "Your role does not allow revoking another member's grant (staff.write).", { permission: "staff.write" });
    }
    await ctx.tx
      .update(apiGrant)
      .set({ revokedAt: sql`coalesce(${apiGrant.revokedAt}, now())` })
      .where(and(eq(apiGrant.storeId, ctx.tx.storeId), eq(apiGrant.id, input.id)));
    if (target.kind === "oauth" && !target.revokedAt && ctx.services?.revokeOAuthTokens) {
      await ctx.services.revokeOAuthTokens({ storeSlug: ctx.store.slug, memberId: target.memberId, apiGrantId: input.id });
    }
    return loadGrant(ctx.tx, input.id);
  },
});

export const listActivity = storeProcedure({
  router: "apiActivity",
  name: "list",
  description:
    "Recent API activity, newest first: one row per change call, read calls folded per grant and procedure into 10-minute buckets with a count. Kept 90 days.",
  access: "none",
  mutates: false,
  input: z.strictObject({ ...pagingInput, grantId: z.uuid().optional() }),
  read(q, scope, input) {
    const where = and(
      eq(apiActivity.storeId, scope.store),
      input.grantId ? eq(apiActivity.grantId, input.grantId) : undefined,
      ownOnlyIn(scope),
    );
    const rows = q
      .select({
        id: apiActivity.id,
        grantId: apiActivity.grantId,
        grantName: apiGrant.name,
        procedure: apiActivity.procedure,
        kind: apiActivity.kind,
        via: apiActivity.via,
        bucketStart: apiActivity.bucketStart,
        count: apiActivity.count,
        lastAt: apiActivity.lastAt,
      })
      .from(apiActivity)
      .innerJoin(apiGrant, and(eq(apiGrant.storeId, apiActivity.storeId), eq(apiGrant.id, apiActivity.grantId)))
      .where(where)
      .orderBy(desc(apiActivity.lastAt), desc(apiActivity.id))
      .limit(input.pageSize)
      .offset(offsetOf(input));
    const count = q
      .select(countColumn())
      .from(apiActivity)
      .innerJoin(apiGrant, and(eq(apiGrant.storeId, apiActivity.storeId), eq(apiGrant.id, apiActivity.grantId)))
      .where(where);
    return pagePlan(rows, count, input);
  },
});

export const apiGrantProcedures = [createToken, listGrants, revokeGrant, listActivity];
