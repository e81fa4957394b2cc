import type { PoolClient } from "@neondatabase/serverless";
import type { Database, Orm } from "./database";
import { ormFor } from "./database";
import { isUuid } from "./ids";

/** Drizzle bound to one transaction in which app.store_id is set: every query sees one store only. */
export type StoreTx = Orm & { readonly storeId: string; readonly $client: PoolClient };

/**
 * The store-scoped unit of work (ARCHITECTURE §2). One transaction; app.store_id is set
 * transaction-locally first, so it is safe behind Neon's transaction-mode pooler and can never leak
 * into another request. Commits when `fn` resolves, rolls back everything (outbox rows included) when
 * it throws.
 *
 * The store id must come from the hostname, the session's active store, the grant or a job payload
 * (SPEC rule 1), never from a row read without a store.
 *
 * Round trips: BEGIN and set_config go in one message (the id is checked to be a UUID, so inlining
 * it is safe), then one per statement of `fn`, then COMMIT. A one-query unit costs 3.
 */
export interface WithStoreOptions {
  /** A READ ONLY transaction: it cannot write even by mistake, at no extra cost. */
  readOnly?: boolean;
  /**
   * One statement sent in the same message as BEGIN and set_config, so it costs no round trip of its
   * own; its rows are handed to `fn`. It runs in the simple protocol: any value in it must be inlined
   * by the caller after validation (UUIDs only), never user text.
   */
  prelude?: string;
}

export async function withStore<T>(
  db: Database,
  storeId: string,
  fn: (tx: StoreTx, preludeRows: Record<string, unknown>[]) => Promise<T>,
  options: WithStoreOptions = {},
): Promise<T> {
  if (!isUuid(storeId)) throw new TypeError("withStore: storeId must be a UUID");
  return runUnit(db, `'${storeId.toLowerCase()}'`, fn, options);
}

/** Thrown by withStoreResolved when its expression names no store. */
export class StoreUnresolved extends Error {
  constructor() {
    super("No store resolved for this unit of work");
    this.name = "StoreUnresolved";
  }
}

/**
 * withStore for a store that the database itself resolves, in the same opening message: `storeSql`
 * is an SQL expression (typically a privileged id lookup with an inlined, validated argument). Saves
 * the lookup's round trip on hot paths such as the token API. Throws StoreUnresolved when it is null.
 */
export function withStoreResolved<T>(
  db: Database,
  storeSql: string,
  fn: (tx: StoreTx, preludeRows: Record<string, unknown>[]) => Promise<T>,
  options: WithStoreOptions = {},
): Promise<T> {
  return runUnit(db, `coalesce((${storeSql})::text, '')`, fn, options);
}

async function runUnit<T>(
  db: Database,
  storeSql: string,
  fn: (tx: StoreTx, preludeRows: Record<string, unknown>[]) => Promise<T>,
  options: WithStoreOptions,
): Promise<T> {
  const client = await db.connect();
  let broken = false;
  try {
    const begin = options.readOnly ? "begin transaction read only" : "begin";
    const prelude = options.prelude ? `; ${options.prelude}` : "";
    const opened = (await client.query(`${begin}; select set_config('app.store_id', ${storeSql}, true) as store_id${prelude}`)) as unknown as {
      rows: Record<string, unknown>[];
    }[];
    const storeId = String(opened[1]?.rows[0]?.["store_id"] ?? "");
    const preludeRows = options.prelude ? (opened.at(-1)?.rows ?? []) : [];
    const tx = Object.assign(ormFor(client), { storeId }) as StoreTx;
    try {
      if (!storeId) throw new StoreUnresolved();
      const result = await fn(tx, preludeRows);
      await client.query("commit");
      return result;
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
}
