import type { Database } from "./database";

/**
 * The privileged id lookups (SPEC rule 3; ARCHITECTURE §2): the only code that crosses stores.
 * Each is a SECURITY DEFINER function in the `privileged` schema, owned by the NOLOGIN role
 * app_privileged, that returns ids and nothing else. Later issues add theirs here and nowhere else.
 */

// Each lookup is one statement over the HTTP path: one round trip, no connection to set up.
async function scalarId(db: Database, text: string, value: string): Promise<string | null> {
  const rows = await db.rows<{ id: string | null }>(text, [value]);
  return rows[0]?.id ?? null;
}

/** The store whose slug this is, or null. */
export function storeIdBySlug(db: Database, slug: string): Promise<string | null> {
  return scalarId(db, "select privileged.store_id_by_slug($1) as id", slug);
}

/** The store serving this hostname through a verified domain, or null (pending domains serve nothing). */
export function storeIdByHostname(db: Database, hostname: string): Promise<string | null> {
  return scalarId(db, "select privileged.store_id_by_hostname($1) as id", hostname);
}

/** Stores with outbox rows due now, for the relay to process one store at a time. */
export async function storeIdsWithPendingOutbox(db: Database, limit = 500): Promise<string[]> {
  return idList(db, "select id from privileged.store_ids_with_pending_outbox($1) as id", [limit]);
}

/** The stores a person is a member of (the store picker reads each one inside its own store). */
export async function storeIdsForUser(db: Database, userId: string): Promise<string[]> {
  return idList(db, "select id from privileged.store_ids_for_user($1) as id", [userId]);
}

/** The store of an open, unexpired invitation, from the SHA-256 hash of its link's token. */
export function storeIdByInvitation(db: Database, tokenHash: string): Promise<string | null> {
  return scalarId(db, "select privileged.store_id_by_invitation($1) as id", tokenHash);
}

/** The store of a created token, from the SHA-256 hash of its secret (the token API's door). */
export function storeIdByTokenHash(db: Database, secretHash: string): Promise<string | null> {
  return scalarId(db, "select privileged.store_id_by_token_hash($1) as id", secretHash);
}

/** Stores with API activity rows last touched before `before`, for the daily prune. */
export async function storeIdsWithOldActivity(db: Database, before: Date, limit = 500): Promise<string[]> {
  return idList(db, "select id from privileged.store_ids_with_old_activity($1, $2) as id", [before, limit]);
}

/**
 * Stores with outbox rows sent before `before` that name no order (docs/events.md "Retention"), for the
 * daily prune.
 */
export async function storeIdsWithSentOutbox(db: Database, before: Date, limit = 500): Promise<string[]> {
  return idList(db, "select id from privileged.store_ids_with_sent_outbox($1, $2) as id", [before, limit]);
}

/** Stores with Idempotency-Keys made before `before` (they answer for 24 hours), for the daily prune. */
export async function storeIdsWithOldIdempotencyKeys(db: Database, before: Date, limit = 500): Promise<string[]> {
  return idList(db, "select id from privileged.store_ids_with_old_idempotency_keys($1, $2) as id", [before, limit]);
}

/** Stores with a pending domain whose DNS check is due at `now`, longest-waiting first (the verify job). */
export async function storeIdsWithDomainsToVerify(db: Database, now: Date, limit = 100): Promise<string[]> {
  return idList(db, "select id from privileged.store_ids_with_domains_to_verify($1, $2) as id", [now, limit]);
}

async function idList(db: Database, text: string, values: unknown[]): Promise<string[]> {
  return (await db.rows<{ id: string }>(text, values)).map((r) => r.id);
}

/**
 * Stores with open orders holding no captured money whose payment window closed by `now`, or a
 * manual-transfer order whose window closes by `remindUntil` and that was not reminded yet.
 */
export function storeIdsWithUnpaidOrdersDue(db: Database, now: Date, remindUntil: Date, limit = 500): Promise<string[]> {
  return idList(db, "select id from privileged.store_ids_with_unpaid_orders_due($1, $2, $3) as id", [now, remindUntil, limit]);
}

/**
 * Stores with pre-order balance work: backordered units of a deposit-paid order in stock now, a balance
 * requested before `remindBefore` and not reminded, or requested before `expireBefore` and not expired.
 */
export function storeIdsWithPreorderBalanceWork(db: Database, remindBefore: Date, expireBefore: Date, limit = 500): Promise<string[]> {
  return idList(db, "select id from privileged.store_ids_with_preorder_balance_work($1, $2, $3) as id", [remindBefore, expireBefore, limit]);
}

/** Stores with shipments on their way that a courier can be asked about, the longest-unasked first. */
export function storeIdsWithOpenShipments(db: Database, limit = 500): Promise<string[]> {
  return idList(db, "select id from privileged.store_ids_with_open_shipments($1) as id", [limit]);
}

/** Stores with marketing work at `now`: a campaign to start or finish, an enrolment due, a message to claim. */
export function storeIdsWithMarketingWork(db: Database, now: Date, limit = 500): Promise<string[]> {
  return idList(db, "select id from privileged.store_ids_with_marketing_work($1, $2) as id", [now, limit]);
}
