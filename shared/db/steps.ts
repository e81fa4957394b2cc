import { types } from "@neondatabase/serverless";
import { sql as drizzleSql, type SQL } from "drizzle-orm";
import { drizzle, type PgRemoteDatabase } from "drizzle-orm/pg-proxy";

/**
 * Statements built before they run (ARCHITECTURE §3). A unit of work sent over Neon's HTTP path is one
 * non-interactive transaction: every statement is known before the request leaves the Worker. Plans
 * build their statements with drizzle on a `Q`, a query builder whose queries do not run when built: a
 * unit collects them and sends them together, and drizzle maps each answer to its typed rows as it
 * would for a query it ran itself (the pg-proxy driver's public callback, so no drizzle internals).
 *
 * The same statements also run one by one on a WebSocket transaction (`onClient`), which is how tests
 * and the few units that must hold a lock across steps run a plan.
 */
export type Q = PgRemoteDatabase;

/** A statement of a plan: a drizzle query built on a Q, or a declared statement (./statement.ts). Nothing runs until a unit sends it. */
export interface Step<R = unknown> {
  execute(): Promise<R>;
}

export type ResultOf<S> = S extends Step<infer R> ? R : never;

/** How drizzle asks for a statement: `all` for rows it maps by position, `execute` for plain rows. */
export interface Sent {
  sql: string;
  params: unknown[];
  method: "all" | "execute";
}

/** What runs the statements of one unit, in order, in one transaction; answers each statement's rows. */
export type Runner = (statements: Sent[]) => Promise<unknown[][]>;

/**
 * SQL written where it is used, for tests only: product code declares its statements in the statement
 * modules (./statement.ts, decision 0026), and shared/db/statement.test.ts fails on a product file that
 * imports this. The caller's values are bind parameters, never text.
 */
export function raw<Row extends Record<string, unknown>>(q: Q, statement: SQL): Step<Row[]> {
  return q.execute(statement) as unknown as Step<Row[]>;
}

export { drizzleSql as sql };

/** The unit's store, as every statement after the opening reads it (the tenancy setting). */
export const CURRENT_STORE = drizzleSql`nullif(current_setting('app.store_id', true), '')::uuid`;

// Date and time columns reach drizzle as text, which its column types turn into Dates exactly as the
// WebSocket driver does (drizzle's neon-serverless session overrides the same types per query). Plain
// rows (`execute`) get the driver's usual parsers, so raw SQL reads the same values on both paths.
const TEXT_OIDS = new Set([1184, 1114, 1082, 1186, 1231, 1115, 1185, 1187, 1182]);
export const DRIZZLE_TYPES = {
  getTypeParser: (oid: number, format?: "text" | "binary") =>
    TEXT_OIDS.has(oid) ? (value: string) => value : types.getTypeParser(oid, format ?? "text"),
};

/**
 * A Q whose statements are collected, and the function that runs them: it starts each step (drizzle
 * builds its SQL and hands it to the callback), waits until every step has handed its statement over,
 * then runs them all at once through `runner` and lets drizzle map each step's rows.
 */
export function collector(): { q: Q; run(steps: readonly Step[], runner: Runner): Promise<unknown[]> } {
  let waiting: { sent: Sent; resolve(rows: unknown[]): void; reject(e: unknown): void }[] = [];
  let expected = -1;
  let flush: (() => void) | undefined;
  const q = drizzle(
    (sql, params, method) =>
      new Promise((resolve, reject) => {
        waiting.push({ sent: { sql, params, method }, resolve: (rows) => resolve({ rows }), reject });
        if (waiting.length === expected) flush?.();
      }),
  );
  async function run(steps: readonly Step[], runner: Runner): Promise<unknown[]> {
    if (expected !== -1) throw new Error("A collector runs its steps once");
    expected = steps.length;
    if (expected === 0) return [];
    let failed: unknown;
    const batch = new Promise<void>((resolve) => {
      flush = () => {
        const taken = waiting;
        waiting = [];
        runner(taken.map((w) => w.sent)).then(
          (results) => taken.forEach((w, i) => w.resolve(results[i] ?? [])),
          (e: unknown) => taken.forEach((w) => w.reject(e)),
        );
        resolve();
      };
    });
    const executions = steps.map((s) => s.execute());
    // A step that fails while drizzle builds it never reaches the callback: fail the unit, send nothing.
    const built = Promise.race([
      batch,
      ...executions.map((p) =>
        p.then(
          () => new Promise<never>(() => undefined),
          (e: unknown) => {
            failed = e;
            throw e;
          },
        ),
      ),
    ]);
    try {
      await built;
    } catch (e) {
      for (const w of waiting.splice(0)) w.reject(e);
      await Promise.allSettled(executions);
      throw failed ?? e;
    }
    return Promise.all(executions);
  }
  return { q, run };
}

/** The pg client a WebSocket transaction runs on (the driver's, as `tx.$client`). */
export interface StatementClient {
  query(config: { text: string; values: unknown[]; rowMode?: "array"; types?: typeof DRIZZLE_TYPES }): Promise<{ rows: unknown[] }>;
}

/** Runs statements one by one on a WebSocket transaction's client (the plan's fallback path). */
export function onClient(client: StatementClient): Runner {
  return async (statements) => {
    const out: unknown[][] = [];
    for (const s of statements) {
      const result = await client.query(
        s.method === "all" ? { text: s.sql, values: s.params, rowMode: "array", types: DRIZZLE_TYPES } : { text: s.sql, values: s.params },
      );
      out.push(result.rows);
    }
    return out;
  };
}
