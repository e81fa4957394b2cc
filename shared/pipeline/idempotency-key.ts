import { AppError, badRequest } from "../core/errors";
import { sha256Hex } from "../core/tokens";
import { ensureChanged } from "../db/changes";
import { constant, plan, type Plan } from "../db/plan";
import { and, eq, gt } from "drizzle-orm";
import { idempotencyKey } from "../db/schema";
import { CURRENT_STORE, sql, type Q } from "../db/steps";
import type { Caller } from "./principal";

/**
 * An `Idempotency-Key` as the change's own unit takes it (docs/decisions/0041-idempotency-keys.md). The key
 * row is the unit's first statement after the caller's opening, so two requests with one key meet there:
 * the second waits on the first's row until it commits, then finds the key taken and rolls back whole,
 * before any statement of its change ran. A change that rolls back takes no key. A key older than its
 * lifetime that the daily prune has not removed yet is taken afresh.
 */

/** The request header, and the answer header that marks a replayed answer (Stripe's and the IETF draft's names). */
export const IDEMPOTENCY_HEADER = "Idempotency-Key";
export const REPLAYED_HEADER = "Idempotent-Replayed";

/** How long a key answers its first answer again; the daily prune removes older keys. */
export const KEY_LIFETIME_HOURS = 24;

/** What a key may be: 1 to 255 visible ASCII characters (the OpenAPI document says the same from these). */
export const KEY_MAX_LENGTH = 255;
export const KEY_PATTERN = "^[\\x21-\\x7E]+$";
const KEY = new RegExp(KEY_PATTERN);

/** The header's key, or undefined when none was sent; a malformed key is a 400 naming the header. */
export function idempotencyKeyOf(value: string | null | undefined): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (value.length > KEY_MAX_LENGTH || !KEY.test(value)) {
    throw badRequest([{ path: IDEMPOTENCY_HEADER, message: "Use 1 to 255 visible ASCII characters, e.g. a UUID made for this change" }]);
  }
  return value;
}

/** What a unit writes for a key: whose it is, the procedure and the request's hash. */
export interface TakenKey {
  key: string;
  /** `grant:<uuid>` for a token or an OAuth connection, `member:<uuid>` for a signed-in person. */
  owner: string;
  procedure: string;
  hash: string;
}

/** Keys are per store and per grant, or per person for a session (the store is the unit's). */
export const ownerOf = (caller: Pick<Caller, "grant" | "member">): string =>
  caller.grant ? `grant:${caller.grant.id}` : `member:${caller.member.userId}`;

/** JSON with its object keys in order, so the same body sent with its fields in another order is the same body. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v ?? null)).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}

/** The SHA-256 of a call: its procedure and its input as sent. */
export const requestHash = (procedure: string, rawInput: unknown): Promise<string> => sha256Hex(`${procedure}\n${canonicalJson(rawInput)}`);

export const KEY_IN_USE = "idempotency_key_in_use";

/** Another request with this key committed first (or is still running): the caller waits for its answer. */
export const keyInUse = (): AppError =>
  new AppError("CONFLICT", "A request with this Idempotency-Key is still running; retry in a few seconds to get its answer.", { reason: KEY_IN_USE });

export const isKeyInUse = (e: unknown): boolean => e instanceof AppError && e.data?.reason === KEY_IN_USE;

/** The key's row, taken by the change's unit: nothing when the call carries no key. */
export function keyPlan(q: Q, taken: TakenKey | undefined): Plan<undefined> {
  if (!taken) return constant(undefined);
  return plan(
    [
      ensureChanged(
        q,
        sql`insert into idempotency_key (store_id, owner, key, procedure, request_hash)
            values (${CURRENT_STORE}, ${taken.owner}, ${taken.key}, ${taken.procedure}, ${taken.hash})
            on conflict (store_id, owner, key) do update
              set procedure = excluded.procedure, request_hash = excluded.request_hash, status = null, response = null, created_at = now()
              where idempotency_key.created_at <= now() - interval '24 hours'
            returning 1`,
        keyInUse(),
      ),
    ] as const,
    () => undefined,
  );
}

/**
 * A key of `owner` (one the caller's opening does not name, such as a shopper's AI agent: `agent:<sha256 of its
 * profile URL>`, workers/storefront/ucp-agent.ts) in the unit's store, while it lives (KEY_LIFETIME_HOURS).
 */
export function ownerKeyPlan(q: Q, owner: string, key: string) {
  return plan(
    [
      q
        .select({ procedure: idempotencyKey.procedure, hash: idempotencyKey.requestHash, status: idempotencyKey.status, response: idempotencyKey.response })
        .from(idempotencyKey)
        .where(and(eq(idempotencyKey.storeId, CURRENT_STORE), eq(idempotencyKey.owner, owner), eq(idempotencyKey.key, key), gt(idempotencyKey.createdAt, sql`now() - make_interval(hours => ${KEY_LIFETIME_HOURS})`))),
    ] as const,
    ([rows]) => rows[0],
  );
}
