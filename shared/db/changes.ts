import { isSQLWrapper, type SQL } from "drizzle-orm";
import { ERROR_STATUS, type AppError, type ErrorCode } from "../core/errors";
import type { Plan } from "./plan";
import { outboxEvent } from "./schema";
import { emitWhenStatement, ensureChangedStatement, ensureSqlStatement, ensureStatement, unchangedStatement } from "./statements";
import { CURRENT_STORE, sql, type Q, type Step } from "./steps";

/**
 * The statements of a change sent as one unit (migration 0025). Nothing can be decided in TypeScript
 * between them, so a condition the change needs is a statement that stops the whole unit when it does not
 * hold, and it usually locks what the change touches in the same breath:
 *
 *   ensure(q, sql`exists (select 1 from product where store_id = ${store} and id = ${id} for update)`, productNotFound())
 *
 * Later statements of the unit then find the row as the guard left it.
 */
export function ensure(q: Q, condition: SQL, error: AppError): Step<{ ok: boolean }[]> {
  return ensureStatement(q, condition, String(error.status), error.message, error.data ? JSON.stringify(error.data) : null);
}

/**
 * Stops the unit unless `condition` holds, with an error whose message and data the database words from
 * what it reads (e.g. "Only 3 of Kurta can be ordered now."): `message` is text, `data` jsonb.
 */
export function ensureSql(q: Q, condition: SQL, code: ErrorCode, message: SQL, data: SQL): Step<{ ok: boolean }[]> {
  return ensureSqlStatement(q, condition, String(ERROR_STATUS[code]), message, data);
}

/**
 * Stops the unit with `error` unless `change` (an UPDATE or INSERT with `returning`) touched a row: a
 * conditional change and its check in one statement, e.g. a discount's use counted only while it is live.
 */
export function ensureChanged(q: Q, change: SQL, error: AppError): Step<{ ok: boolean }[]> {
  return ensureChangedStatement(q, change, String(error.status), error.message, error.data ? JSON.stringify(error.data) : null);
}

/**
 * Stops the unit as a lost race unless `condition` holds: what the change's first trip read is not so any
 * more. The pipeline reads again and retries (shared/pipeline/write.ts).
 */
export function unchanged(q: Q, condition: SQL): Step<{ ok: boolean }[]> {
  return unchangedStatement(q, condition);
}

const EMITS = Symbol("emits");

/**
 * An outbox event written by the change's own unit (SPEC rule 5; shared/db/outbox.ts is the same on an
 * open transaction). Its id is made here, so the change's answer can name it without a round trip.
 */
export function emitStep(q: Q, kind: string, payload: Record<string, unknown> | SQL, options: { availableAt?: Date | SQL; when?: SQL } = {}): Step<{ id: string }[]> {
  if (options.when) {
    // Only when the condition holds (e.g. a change that may turn out to change nothing): one statement.
    const body = isSQLWrapper(payload) ? payload : sql`${JSON.stringify(payload)}::jsonb`;
    const at = options.availableAt ?? sql`now()`;
    return markEmits(emitWhenStatement(q, kind, body, at, options.when));
  }
  const step = q
    .insert(outboxEvent)
    .values({ storeId: CURRENT_STORE, kind, payload, ...(options.availableAt ? { availableAt: options.availableAt } : {}) })
    .returning({ id: outboxEvent.id });
  return Object.assign(step, { [EMITS]: true });
}

/** Marks a statement that writes outbox rows itself (an `insert into outbox_event ... select` of a CTE). */
export function markEmits<S extends Step>(step: S): S {
  return Object.assign(step, { [EMITS]: true });
}

/** Whether a plan writes outbox rows (after its commit, the relay is nudged). */
export function emits(p: Plan<unknown>): boolean {
  return p.steps.some((s) => EMITS in s);
}
