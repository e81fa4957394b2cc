import { and, desc, eq, or, sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import { AREA_SCOPES, grantStatus, newTokenSecret, normaliseAreas, permissionsOfAreas, TOKEN_LIFETIMES, type AreaScope, type NewTokenSecret } from "../auth/grants";
import { ensure } from "../db/changes";
import { apiActivity, apiGrant, GRANT_KINDS, member, userAccount } from "../db/schema";
import { constant, plan } from "../db/plan";
import type { Q } from "../db/steps";
import { areasWithinRole } from "./statements/store";
import { AppError } from "../core/errors";
import { storeProcedure } from "./define";
import { countColumn, offsetOf, pagePlan, pagingInput } from "./paging";
import type { Scope } from "./scope";
import * as out from "./outputs";

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

/** One grant as it now is, read by the change's own unit after its statements. */
const grantPlan = (q: Q, store: SQL, id: string) => plan([selectGrants(q, store, eq(apiGrant.id, id))] as const, ([[row]]) => view(row as GrantRow));

/** ownOnly inside a plan, which knows the caller only as SQL. */
const ownOnlyIn = (scope: Scope) => or(scope.can("staff.read"), eq(apiGrant.memberId, scope.memberId));

/**
 * Refuses areas beyond the caller's role (a member cannot grant more than they may do), naming each one
 * as the caller gave them. The role is known only inside the unit, so the list is made there.
 */
function withinRole(q: Q, scope: Scope, areas: readonly AreaScope[]) {
  const rows = areas.map((area, n) => {
    const allowed = [...permissionsOfAreas([area])].map((p) => scope.can(p));
    return sql`(${n}::int, ${area}::text, ${sql.join(allowed, sql` and `)})`;
  });
  return areasWithinRole(q, rows);
}

/** An API token or OAuth connection as the grant procedures answer it (never its secret). */
const grantOutput = z.object({
  id: out.id,
  kind: z.enum(GRANT_KINDS).nullable(),
  name: z.string().nullable(),
  areas: z.array(z.string()).nullable(),
  status: z.enum(["active", "expired", "revoked"]),
  member: z.object({ id: out.id, email: z.string().nullable(), name: z.string().nullable() }),
  createdAt: out.instant.nullable(),
  expiresAt: out.instant.nullable(),
  revokedAt: out.instant.nullable(),
  lastUsedAt: out.instant.nullable(),
  hint: z.string().nullable(),
  clientName: z.string().nullable(),
});

export const createToken = storeProcedure({
  router: "apiGrants",
  name: "createToken",
  description:
    "Create a script token for yourself in this store, limited to the given areas (never beyond your role). Answers the token once: it is stored only as a hash.",
  access: "none",
  mutates: true,
  output: z.object({ token: z.string(), grant: grantOutput }),
  input: z.strictObject({
    name: z.string().trim().min(1).max(100),
    areas: z.array(z.enum(AREA_SCOPES)).min(1).max(14).describe('Area scopes such as "products:read" or "orders:write"'),
    lifetimeDays: z.union([z.literal(TOKEN_LIFETIMES[0]), z.literal(TOKEN_LIFETIMES[1]), z.literal(TOKEN_LIFETIMES[2]), z.null()]),
  }),
  write: {
    // The token is made before the unit, which stores only its hash (no statement: no trip). The
    // pipeline awaits what `prepare` answers, so `apply` gets the secret itself.
    prepare: () => constant(newTokenSecret()),
    apply(q, scope, input, secret: NewTokenSecret) {
      const id = crypto.randomUUID();
      const created = grantPlan(q, scope.store, id);
      return plan(
        [
          withinRole(q, scope, input.areas),
          q.insert(apiGrant).values({
            id,
            storeId: scope.store,
            kind: "token",
            memberId: scope.memberId,
            name: input.name,
            areas: normaliseAreas(input.areas),
            expiresAt: input.lifetimeDays === null ? null : sql`now() + make_interval(days => ${input.lifetimeDays})`,
            secretHash: secret.hash,
            secretHint: secret.hint,
          }),
          ...created.steps,
        ],
        // The plain token exists only in this answer.
        (results) => ({ token: secret.token, grant: created.finish(results.slice(2)) }),
      );
    },
  },
});

export const listGrants = storeProcedure({
  router: "apiGrants",
  name: "list",
  description: "The store's API grants (script tokens and AI-client connections) with their areas and status. Members without staff.read see their own.",
  access: "none",
  mutates: false,
  output: z.object({ items: z.array(grantOutput), scope: z.string() }),
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

/** OAuth grants a revocation has just revoked (its answer → the store's slug), for the work after the commit. */
const newlyRevoked = new WeakMap<object, string>();

export const revokeGrant = storeProcedure({
  router: "apiGrants",
  name: "revoke",
  description: "Revoke an API grant: its token stops working on the next call. Your own always; another member's needs staff.write.",
  access: "none",
  mutates: true,
  output: grantOutput,
  input: z.strictObject({ id: z.uuid() }),
  write: {
    apply(q, scope, input) {
      const { store } = scope;
      const grant = and(eq(apiGrant.storeId, store), eq(apiGrant.id, input.id));
      const revoked = grantPlan(q, store, input.id);
      return plan(
        [
          ensure(q, sql`exists (select 1 from ${apiGrant} where ${grant} and ${ownOnlyIn(scope)} for update)`, new AppError("NOT_FOUND", "API grant not found in this store.")),
          ensure(
            q,
            sql`exists (select 1 from ${apiGrant} where ${grant} and (${apiGrant.memberId} = ${scope.memberId} or ${scope.can("staff.write")}))`,
            new AppError("FORBIDDEN", "Your role does not allow revoking another member's grant (staff.write).", { permission: "staff.write" }),
          ),
          q.select({ revokedAt: apiGrant.revokedAt }).from(apiGrant).where(grant),
          q.update(apiGrant).set({ revokedAt: sql`coalesce(${apiGrant.revokedAt}, now())` }).where(grant),
          ...revoked.steps,
        ],
        (results) => {
          const [before] = results[2];
          const answer = revoked.finish(results.slice(4));
          if (answer.kind === "oauth" && !before?.revokedAt) newlyRevoked.set(answer, scope.caller().store.slug);
          return answer;
        },
      );
    },
    // An OAuth connection's tokens at the authorization server go once the revocation has committed.
    async after(answer, services) {
      const storeSlug = newlyRevoked.get(answer);
      if (storeSlug && services.revokeOAuthTokens) await services.revokeOAuthTokens({ storeSlug, memberId: answer.member.id, apiGrantId: answer.id });
    },
  },
});

export const listActivity = storeProcedure({
  router: "apiActivity",
  name: "list",
  description:
    "Recent API activity, newest first: one row per change call, read calls folded per grant and procedure into 10-minute buckets with a count. Kept 90 days.",
  access: "none",
  mutates: false,
  output: out.paged(z.object({ id: out.id, grantId: out.id, grantName: z.string(), procedure: z.string(), kind: z.enum(["read", "write"]), via: z.enum(["mcp", "token"]), bucketStart: out.instant, count: z.number().int(), lastAt: out.instant })),
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
