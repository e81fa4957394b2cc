import { isUuid } from "./ids";
import { openGrantStatement, openMemberStatement, openSessionStatement, openStoreStatement, openTokenStatement } from "./statements";
import type { Q, Sent, Step } from "./steps";

/**
 * The openings of one-round-trip units (migration 0024): each is one call of a `unit.open_*` function
 * that sets app.store_id, resolves the caller and admits it against a check, or raises CR001 (refused,
 * with the caller in DETAIL) or CR002 (no such session). A closed set, as ./statements.ts is for the
 * WebSocket path: values travel as bind parameters, and the ids are checked here first so a forged one
 * never reaches a cast.
 */

export { CURRENT_STORE } from "./steps";

/** What the caller must be allowed to do (computed by shared/pipeline/check.ts); null resolves only. */
export interface CallCheck {
  /** Roles whose permissions include the procedure's permission; null for any member (access "none"). */
  roles: readonly string[] | null;
  /** Grant areas that yield that permission (empty: no grant may). */
  areas: readonly string[];
  /** Members only: grants are refused. */
  memberOnly: boolean;
  /** The door binds every caller by the store's AI-client settings (MCP, approvals); OAuth grants always are. */
  doorBinds: boolean;
  customerDetails: boolean;
  mutates: boolean;
  /** The store the request addressed (an MCP URL's slug), or null. */
  slug: string | null;
}

export type OpenedRow = { opened: Record<string, unknown> };

const check = (c: CallCheck | null) => (c === null ? null : JSON.stringify(c));

function uuid(value: string, what: string): string {
  if (!isUuid(value)) throw new TypeError(`${what} must be a UUID`);
  return value.toLowerCase();
}

function hex64(value: string, what: string): string {
  if (!/^[0-9a-f]{64}$/.test(value)) throw new TypeError(`${what} must be 64 hex digits`);
  return value;
}

/** A session (by the SHA-256 of its cookie id) in its active store. Answers {session, caller}. */
export function openSession(q: Q, idHash: string, lifetimes: { idleSeconds: number; touchAfterSeconds: number }, c: CallCheck | null): Step<OpenedRow[]> {
  return openSessionStatement(q, hex64(idHash, "session hash"), lifetimes.idleSeconds, lifetimes.touchAfterSeconds, check(c));
}

/** A member (by user id) in a store known already. Answers the caller. */
export function openMember(q: Q, storeId: string, userId: string, c: CallCheck | null): Step<OpenedRow[]> {
  return openMemberStatement(q, uuid(storeId, "store id"), uuid(userId, "user id"), check(c));
}

/** A created token's grant, by the SHA-256 of its secret. Answers the caller. */
export function openToken(q: Q, tokenHash: string, c: CallCheck | null): Step<OpenedRow[]> {
  return openTokenStatement(q, hex64(tokenHash, "token hash"), check(c));
}

/** An OAuth connection's grant in its store. Answers the caller. */
export function openGrant(q: Q, storeId: string, grantId: string, c: CallCheck | null): Step<OpenedRow[]> {
  return openGrantStatement(q, uuid(storeId, "store id"), uuid(grantId, "grant id"), check(c));
}

/** The same opening as a statement to send as it is (bookkeeping that builds no plan). */
export function storeOpeningStatement(storeId: string): Sent {
  return { sql: "select set_config('app.store_id', $1, true) as store_id", params: [uuid(storeId, "store id")], method: "execute" };
}

/** A known store, no caller (system work: jobs, webhooks, the storefront). Answers the store id. */
export function openStore(q: Q, storeId: string): Step<OpenedRow[]> {
  return openStoreStatement(q, uuid(storeId, "store id"));
}
