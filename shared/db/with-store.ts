import type { PoolClient } from "@neondatabase/serverless";
import type { Database, Orm } from "./database";
import { ormFor } from "./database";
import { isUuid } from "./ids";
import { emits } from "./changes";
import { plan, type Plan } from "./plan";
import { inline, storeExpression, storefrontFactsIfChanged, type Statement, type StoreKey } from "./statements";
import type { Q, StatementClient, Step } from "./steps";
import { runPlanOn } from "./unit";

/** Drizzle bound to one transaction in which app.store_id is set: every query sees one store only. */
export type StoreTx = Orm & { readonly storeId: string; readonly $client: PoolClient };

/** Units that wrote outbox rows (`emit` marks them): after their commit, `db.onOutboxWritten` is told. */
export const wroteOutbox = new WeakSet<StoreTx>();

/**
 * The store-scoped unit of work (ARCHITECTURE §2). One transaction; app.store_id is set
 * transaction-locally first, so it is safe behind Neon's transaction-mode pooler and can never leak
 * into another request. Commits when `fn` resolves, rolls back everything (outbox rows included) when
 * it throws.
 *
 * The store comes from the hostname, the session's active store, the grant or a job payload (SPEC rule 1),
 * never from a row read without a store: as an id, or as a created token's hash that a privileged id
 * lookup resolves in the same opening message.
 *
 * Round trips: BEGIN, set_config and the optional opening statement go in one message, then one per
 * statement of `fn`, then COMMIT. A one-query unit costs 3.
 *
 * A writing unit's COMMIT message also asks whether the transaction changed what the store's storefront
 * shows (migration 0008); if it did, `db.onStorefrontChange` gets the store's new facts after the commit.
 */
export interface WithStoreOptions {
  /** A READ ONLY transaction: it cannot write even by mistake, at no extra cost. */
  readOnly?: boolean;
  /**
   * One of the fixed statements of ./statements, sent in the same message as BEGIN and set_config (no
   * round trip of its own); its rows are handed to `fn`.
   */
  opening?: Statement;
}

/** Thrown when the store key names no store (e.g. an unknown token hash). */
export class StoreUnresolved extends Error {
  constructor() {
    super("No store resolved for this unit of work");
    this.name = "StoreUnresolved";
  }
}

export async function withStore<T>(
  db: Database,
  store: string | StoreKey,
  fn: (tx: StoreTx, openingRows: Record<string, unknown>[]) => Promise<T>,
  options: WithStoreOptions = {},
): Promise<T> {
  const key = typeof store === "string" ? { id: store } : store;
  if ("id" in key && !isUuid(key.id)) throw new TypeError("withStore: storeId must be a UUID");
  const storeSql = `coalesce((${inline(storeExpression(key))})::text, '')`;
  const client = await db.connect();
  const probe = !options.readOnly && db.onStorefrontChange ? `${inline(storefrontFactsIfChanged())}; ` : "";
  let changed: Record<string, unknown> | undefined;
  let broken = false;
  let result: T;
  let tx: StoreTx | undefined;
  try {
    const begin = options.readOnly ? "begin transaction read only" : "begin";
    const opening = options.opening ? `; ${inline(options.opening)}` : "";
    const opened = (await client.query(`${begin}; select set_config('app.store_id', ${storeSql}, true) as store_id${opening}`)) as unknown as {
      rows: Record<string, unknown>[];
    }[];
    const storeId = String(opened[1]?.rows[0]?.["store_id"] ?? "");
    const openingRows = options.opening ? (opened.at(-1)?.rows ?? []) : [];
    tx = Object.assign(ormFor(client), { storeId }) as StoreTx;
    try {
      if (!storeId) throw new StoreUnresolved();
      result = await fn(tx!, openingRows);
      if (probe) changed = await commitWithProbe(client, probe);
      else await client.query("commit");
    } catch (e) {
      await client.query("rollback").catch(() => {
        broken = true;
      });
      throw e;
    }
  } finally {
    // A connection whose rollback failed is in an unknown state: destroy it rather than reuse it.
    client.release(broken);
  }
  if (changed) await db.onStorefrontChange?.(changed);
  if (tx && wroteOutbox.has(tx)) await db.onOutboxWritten?.(tx.storeId);
  return result;
}

/**
 * COMMIT with the storefront probe in front, in one message. A transaction that a caught statement error
 * left aborted refuses the probe (25P02) before COMMIT runs; a bare COMMIT there rolls back without an
 * error, so the same is done by hand: roll back, nothing changed.
 */
async function commitWithProbe(client: PoolClient, probe: string): Promise<Record<string, unknown> | undefined> {
  try {
    const results = (await client.query(`${probe}commit`)) as unknown as { rows: Record<string, unknown>[] }[];
    return results[0]?.rows[0];
  } catch (e) {
    if ((e as { code?: unknown }).code !== "25P02") throw e;
    await client.query("rollback");
    return undefined;
  }
}

/** One of ./statements.ts's fixed statements run inside an open transaction, with bind parameters: its rows. */
export async function fixedRowsOn(tx: StoreTx, statement: Statement): Promise<Record<string, unknown>[]> {
  const { rows } = await tx.$client.query(statement.text, [...statement.params]);
  return rows as Record<string, unknown>[];
}

/**
 * `fn` inside a savepoint of an open transaction: released when it resolves, rolled back to (undoing
 * only what `fn` did) when it throws, and the error goes on.
 */
export async function inSavepoint<T>(tx: StoreTx, name: string, fn: () => Promise<T>): Promise<T> {
  if (!/^[a-z_]{1,40}$/.test(name)) throw new TypeError("inSavepoint: a savepoint's name is 1-40 lowercase letters or underscores");
  await tx.$client.query(`savepoint ${name}`);
  try {
    const result = await fn();
    await tx.$client.query(`release savepoint ${name}`);
    return result;
  } catch (e) {
    await tx.$client.query(`rollback to savepoint ${name}`);
    throw e;
  }
}

/** A plan's reads inside an open transaction (the same statements a one-round-trip unit sends). */
export function readOn<O>(tx: StoreTx, build: (q: Q) => Plan<O>): Promise<O> {
  return runPlanOn(tx.$client as unknown as StatementClient, build);
}

/** One statement's rows inside an open transaction (a declared statement, or drizzle's): as a plan's, one round trip. */
export function rowsOn<R>(tx: StoreTx, build: (q: Q) => Step<R>): Promise<R> {
  return runPlanOn(tx.$client as unknown as StatementClient, (q) => plan([build(q)] as const, ([rows]) => rows));
}

/** A plan's change inside an open transaction; its outbox events nudge the relay after the commit, as `emit`'s do. */
export async function changeOn<O>(tx: StoreTx, build: (q: Q) => Plan<O>): Promise<O> {
  let wrote = false;
  const output = await runPlanOn(tx.$client as unknown as StatementClient, (q) => {
    const p = build(q);
    wrote = emits(p);
    return p;
  });
  if (wrote) wroteOutbox.add(tx);
  return output;
}
