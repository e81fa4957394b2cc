import { describePermission, ROLE_PERMISSIONS, type Permission } from "../auth/permissions";
import type { Database } from "../db/database";
import { isUuid } from "../db/ids";
import { clientErrorFromConstraint } from "../db/pg-errors";
import type { RoleName } from "../db/schema";
import { StoreUnresolved, withStore, withStoreResolved, type StoreTx } from "../db/with-store";
import { AppError } from "../http/errors";
import type { LimitDecision } from "../limits/window";
import { rateLimitHeaders } from "../limits/window";
import type { Logger } from "../log";
import { isSessionProcedure, procedureKey, type MemberInfo, type Procedure, type StoreContext, type StoreInfo } from "../procedures/define";
import { parseInput } from "../procedures/execute";
import { effectivePermissions } from "./grants";

/**
 * The API door's executor (token API now, MCP next): the same registry as /api/rpc, run for an API
 * principal. SPEC "Token API" and Authentication 2-7; ARCHITECTURE §4-§7.
 *
 * One opening message resolves the store from the credential (a privileged id lookup), sets it, and
 * reads the grant, its member (role read fresh) and the store. Then, in order: grant valid → procedure
 * callable by tokens → permission (role ∩ areas) → input → run. The rate limiter is asked right after
 * the grant is known, in parallel with the work (a read runs alongside it; a write waits for it), so it
 * adds no serial round trip. Round trips of a read: the opening message, the query, COMMIT.
 */

export type ApiCredential =
  /** A created token: the SHA-256 (hex) of the whole bearer string. */
  | { kind: "token"; tokenHash: string }
  /** An OAuth access token already verified by the provider, whose props carry the grant. */
  | { kind: "oauth"; grantId: string; storeId: string };

export type Via = "token" | "mcp";

export interface ApiPrincipal {
  grantId: string;
  store: StoreInfo;
  member: MemberInfo;
  areas: string[];
  permissions: ReadonlySet<Permission>;
}

export interface ApiCallOptions {
  via: Via;
  log: Logger;
  /** Counts one request against the grant's limiter (120 per rolling minute). */
  limit: (grantId: string) => Promise<LimitDecision>;
}

export interface ApiCallResult {
  output: unknown;
  principal: ApiPrincipal;
  decision: LimitDecision;
}

const HEX64 = /^[0-9a-f]{64}$/;

export function invalidToken(message = "The access token is unknown, expired or revoked."): AppError {
  return new AppError("UNAUTHORIZED", message, { reason: "invalid_token" });
}

/**
 * The store expression and the grant ⋈ member ⋈ store read for a credential, both for the unit's
 * opening message. Every inlined value is validated first (64 hex characters, or UUIDs).
 */
function grantPrelude(credential: ApiCredential): { storeSql: string; prelude: string } {
  let storeSql: string;
  let where: string;
  if (credential.kind === "token") {
    if (!HEX64.test(credential.tokenHash)) throw invalidToken();
    storeSql = `select privileged.store_id_by_token_hash('${credential.tokenHash}')`;
    where = `g.secret_hash = '${credential.tokenHash}'`;
  } else {
    if (!isUuid(credential.grantId) || !isUuid(credential.storeId)) throw invalidToken();
    storeSql = `'${credential.storeId.toLowerCase()}'`;
    where = `g.id = '${credential.grantId.toLowerCase()}'`;
  }
  return {
    storeSql,
    prelude: `select ${PRELUDE_COLUMNS} from api_grant g
      join member m on m.store_id = g.store_id and m.id = g.member_id
      join store s on s.id = g.store_id where ${where}`,
  };
}

const PRELUDE_COLUMNS = `g.id as grant_id, g.areas, g.revoked_at, (g.expires_at is not null and g.expires_at <= now()) as expired,
  m.id as member_id, m.user_id, m.role, s.id as store_id, s.slug, s.name, s.currency,
  s.mcp_read_customer_details, s.mcp_allow_changes, s.mcp_changes_need_approval`;

interface GrantRow {
  grant_id: string;
  areas: string[];
  revoked_at: Date | null;
  expired: boolean;
  member_id: string;
  user_id: string;
  role: RoleName;
  store_id: string;
  slug: string;
  name: string;
  currency: string;
  mcp_read_customer_details: boolean;
  mcp_allow_changes: boolean;
  mcp_changes_need_approval: boolean;
}

function principalFrom(rows: Record<string, unknown>[]): ApiPrincipal {
  const row = rows[0] as GrantRow | undefined;
  if (!row) throw invalidToken();
  if (row.revoked_at) throw invalidToken("This token has been revoked.");
  if (row.expired) throw invalidToken("This token has expired.");
  return {
    grantId: row.grant_id,
    areas: row.areas,
    member: { id: row.member_id, userId: row.user_id, role: row.role },
    store: {
      id: row.store_id,
      slug: row.slug,
      name: row.name,
      currency: row.currency,
      mcpReadCustomerDetails: row.mcp_read_customer_details,
      mcpAllowChanges: row.mcp_allow_changes,
      mcpChangesNeedApproval: row.mcp_changes_need_approval,
    },
    permissions: effectivePermissions(row.role, row.areas),
  };
}

/** Why a permission is missing: the grant's areas or the member's role (both cap every call). */
export function apiPermissionDenied(principal: ApiPrincipal, permission: Permission): AppError {
  const byRole = ROLE_PERMISSIONS[principal.member.role].has(permission);
  const what = describePermission(permission);
  const message = byRole
    ? `This token's grant does not allow ${what} (${permission}). Create a token with that area.`
    : `The member's role does not allow ${what} (${permission}).`;
  return new AppError("FORBIDDEN", message, { permission });
}

function withLimitHeaders(e: unknown, decision: LimitDecision | undefined): unknown {
  if (!decision || !(e instanceof AppError)) return e;
  return new AppError(e.code, e.message, e.data, { ...rateLimitHeaders(decision), ...e.headers });
}

function tooManyRequests(decision: LimitDecision): AppError {
  return new AppError(
    "TOO_MANY_REQUESTS",
    `Rate limit reached: ${decision.limit} requests per ${decision.windowSeconds} s for this grant. Retry after ${decision.retryAfterSeconds ?? 1} s.`,
    { retryAfterSeconds: decision.retryAfterSeconds ?? 1 },
    rateLimitHeaders(decision),
  );
}

async function recordWrite(tx: StoreTx, grantId: string, procedure: string, via: Via): Promise<void> {
  await tx.$client.query(
    `with touched as (update api_grant set last_used_at = now() where store_id = $1 and id = $2)
     insert into api_activity (store_id, grant_id, procedure, kind, via, bucket_start) values ($1, $2, $3, 'write', $4, now())`,
    [tx.storeId, grantId, procedure, via],
  );
}

export async function runApiProcedure(db: Database, credential: ApiCredential, proc: Procedure, rawInput: unknown, options: ApiCallOptions): Promise<ApiCallResult> {
  const { storeSql, prelude } = grantPrelude(credential);
  let limiter: Promise<LimitDecision> | undefined;
  let decision: LimitDecision | undefined;
  try {
    return await withStoreResolved(
      db,
      storeSql,
      async (tx, rows) => {
        const principal = principalFrom(rows);
        limiter = options.limit(principal.grantId);
        if (isSessionProcedure(proc)) {
          throw new AppError("FORBIDDEN", `${procedureKey(proc)} needs a signed-in member session; tokens cannot call it.`, { reason: "session_only" });
        }
        if (proc.access === "none") {
          throw new AppError("FORBIDDEN", `${procedureKey(proc)} is for members in the admin only; tokens cannot call it.`, { reason: "member_only" });
        }
        if (!principal.permissions.has(proc.access)) throw apiPermissionDenied(principal, proc.access);
        const input = parseInput(proc, rawInput);
        const ctx = { tx, store: principal.store, member: principal.member, permissions: principal.permissions, via: options.via, log: options.log };
        if (proc.mutates) {
          decision = await limiter;
          if (!decision.allowed) throw tooManyRequests(decision);
          const output = await proc.run(ctx, input);
          await recordWrite(tx, principal.grantId, procedureKey(proc), options.via);
          return { output, principal, decision };
        }
        const [output, d] = await Promise.all([proc.run(ctx, input), limiter]);
        decision = d;
        if (!decision.allowed) throw tooManyRequests(decision);
        return { output, principal, decision };
      },
      { readOnly: !proc.mutates, prelude },
    );
  } catch (e) {
    if (e instanceof StoreUnresolved) throw invalidToken();
    decision ??= limiter ? await limiter.catch(() => undefined) : undefined;
    throw withLimitHeaders(clientErrorFromConstraint(e) ?? e, decision);
  }
}

const PROCEDURE_NAME = /^[a-z][A-Za-z]*\.[a-z][A-Za-z]*$/;

/**
 * Folds a successful read call into its grant's 10-minute bucket (an upsert, not a read-then-write)
 * and marks the grant used. Runs after the answer is sent: two round trips off the response path.
 */
export async function recordRead(db: Database, entry: { storeId: string; grantId: string; procedure: string; via: Via; at?: Date }): Promise<void> {
  if (!isUuid(entry.grantId) || !PROCEDURE_NAME.test(entry.procedure) || (entry.via !== "token" && entry.via !== "mcp")) {
    throw new TypeError("recordRead: bad entry");
  }
  const at = (entry.at ?? new Date()).toISOString();
  await withStore(db, entry.storeId, async () => undefined, {
    prelude: `with touched as (
        update api_grant set last_used_at = greatest(coalesce(last_used_at, '${at}'), '${at}') where id = '${entry.grantId}')
      insert into api_activity (store_id, grant_id, procedure, kind, via, bucket_start, count, last_at)
      values ('${entry.storeId}', '${entry.grantId}', '${entry.procedure}', 'read', '${entry.via}',
              date_bin('10 minutes', '${at}'::timestamptz, '2000-01-01'), 1, '${at}')
      on conflict (store_id, grant_id, procedure, via, bucket_start) where kind = 'read'
      do update set count = api_activity.count + 1, last_at = greatest(api_activity.last_at, excluded.last_at)`,
  });
}

/**
 * Authenticates a credential without running a procedure (the MCP door: a POST may list tools or carry
 * several messages). One read-only unit: the opening message and COMMIT.
 */
export async function resolvePrincipal(db: Database, credential: ApiCredential): Promise<ApiPrincipal> {
  const { storeSql, prelude } = grantPrelude(credential);
  try {
    return await withStoreResolved(db, storeSql, async (_tx, rows) => principalFrom(rows), {
      readOnly: true,
      prelude,
    });
  } catch (e) {
    if (e instanceof StoreUnresolved) throw invalidToken();
    throw e;
  }
}

/**
 * Runs work for an already resolved principal in one unit of its store (read-only unless `mutates`).
 * The caller checks what the work needs; `ctx.permissions` are the principal's effective ones.
 */
export async function runAsPrincipal<T>(
  db: Database,
  principal: ApiPrincipal,
  options: { via: Via; log: Logger; mutates: boolean },
  work: (ctx: StoreContext) => Promise<T>,
): Promise<T> {
  return withStore(
    db,
    principal.store.id,
    (tx) => work({ tx, store: principal.store, member: principal.member, permissions: principal.permissions, via: options.via, log: options.log }),
    { readOnly: !options.mutates },
  ).catch((e: unknown) => {
    throw clientErrorFromConstraint(e) ?? e;
  });
}

export { recordWrite };
