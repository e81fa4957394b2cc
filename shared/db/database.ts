import { Pool, neon, neonConfig, type FullQueryResults, type PoolClient } from "@neondatabase/serverless";
import { drizzle, type NeonDatabase } from "drizzle-orm/neon-serverless";
import * as schema from "./schema";
import { DRIZZLE_TYPES, type Sent } from "./steps";

export type Schema = typeof schema;
export type Orm = NeonDatabase<Schema>;

export interface DatabaseConfig {
  /** Connection string of the runtime role (app_user). */
  url: string;
  /** Local stack only: host:port of the WebSocket-to-TCP proxy that stands in for Neon's. */
  wsProxy?: string | undefined;
  /**
   * Give up waiting for the database after this long (ms), then answer 503: for a connection on the
   * WebSocket path, for a whole round trip on the HTTP path (a unit still queued at the pooler never
   * runs; one already running commits or rolls back whole, as any transaction whose client went away).
   */
  connectTimeoutMs?: number;
  /**
   * Called after a unit of work commits a change to what a store's storefront shows (its catalogue
   * version was bumped), with the store's row of the `storefrontFacts` statement. Runtimes that bind the
   * HOSTS namespace push the store's new facts there, so the edge cache's next request renders afresh.
   */
  onStorefrontChange?: ((row: Record<string, unknown>) => Promise<void>) | undefined;
  /**
   * Called after a unit of work that wrote outbox rows commits, with its store: runtimes that bind the
   * nudge queue send one, so the relay runs now instead of at its next 5 s tick (it carries no work).
   */
  onOutboxWritten?: ((storeId: string) => Promise<void>) | undefined;
  /**
   * Development and tests only: names this request's round trips at the local proxy (`application_name`
   * `t:<trace>`, and `t:<trace>:after` once the answer is sent), so a test or the bench can count them.
   */
  trace?: string | undefined;
}

/** How a trace id may look (it becomes part of a connection string). */
export const TRACE_ID = /^[A-Za-z0-9-]{8,64}$/;

/** The transaction options of one unit sent over HTTP. */
export interface HttpUnitOptions {
  readOnly: boolean;
  isolationLevel?: "ReadCommitted" | "RepeatableRead" | "Serializable";
}

let localProxyConfigured: string | undefined;

// neonConfig is module state. An isolate serves one environment, so it is set once: against Neon the
// defaults stay (secure WebSocket, pipelined connect); locally the driver talks plain ws to our proxy.
function configureDriver(wsProxy: string | undefined): void {
  if (!wsProxy || localProxyConfigured === wsProxy) return;
  neonConfig.wsProxy = (host, port) => `${wsProxy}/v2?address=${host}:${port}`;
  neonConfig.useSecureWebSocket = false;
  neonConfig.pipelineTLS = false;
  neonConfig.pipelineConnect = false;
  neonConfig.forceDisablePgSSL = true;
  // The same proxy plays Neon's HTTP endpoint: POST /sql as the driver sends it.
  neonConfig.fetchEndpoint = () => `http://${wsProxy}/sql`;
  localProxyConfigured = wsProxy;
}

/**
 * The database for one request or one job invocation. Workers cannot share I/O objects across requests,
 * so each request makes its own and closes it when done (the app factory does this in waitUntil).
 * The pool opens no connection until the first query.
 */
export class Database {
  readonly #config: DatabaseConfig;
  #pool: Pool | undefined;
  #orm: Orm | undefined;
  #answered = false;

  constructor(config: DatabaseConfig) {
    if (config.trace !== undefined && !TRACE_ID.test(config.trace)) throw new TypeError("Database: a trace id is 8-64 letters, digits or dashes");
    configureDriver(config.wsProxy);
    this.#config = config;
  }

  /** The answer has been sent: from now on round trips are work after the answer (traced apart). */
  answered(): void {
    this.#answered = true;
  }

  /** The connection string, with the trace's application_name when the request is traced. */
  #connectionString(): string {
    const { trace, url } = this.#config;
    if (!trace) return url;
    const u = new URL(url);
    u.searchParams.set("application_name", `t:${trace}${this.#answered ? ":after" : ""}`);
    return u.toString();
  }

  /**
   * Runs statements as one non-interactive transaction over Neon's HTTP path: one request, one round
   * trip, no connection to set up (ARCHITECTURE §3). Answers each statement's rows: arrays for drizzle's
   * `all`, objects otherwise. A failing statement rolls the whole transaction back and rejects with the
   * driver's NeonDbError (its `code` is the SQLSTATE).
   */
  async sendHttp(statements: readonly Sent[], options: HttpUnitOptions): Promise<unknown[][]> {
    const sql = neon(this.#connectionString(), { fullResults: true, fetchOptions: { signal: AbortSignal.timeout(this.#config.connectTimeoutMs ?? 5_000) } });
    // Per statement: arrays with text dates for drizzle's mapping, or plain rows (the driver's parsers).
    const queries = statements.map((s) =>
      s.method === "all"
        ? (sql.query(s.sql, s.params, { arrayMode: true, fullResults: true, types: DRIZZLE_TYPES }) as unknown as ReturnType<typeof sql.query<false, true>>)
        : sql.query<false, true>(s.sql, s.params, { arrayMode: false, fullResults: true }),
    );
    const results = (await sql.transaction(queries, {
      fullResults: true,
      readOnly: options.readOnly,
      ...(options.isolationLevel ? { isolationLevel: options.isolationLevel } : {}),
    })) as FullQueryResults<boolean>[];
    return results.map((r) => r.rows as unknown[]);
  }

  /** One statement over the HTTP path (a lookup outside any store, bookkeeping): one round trip. */
  async rows<Row extends Record<string, unknown>>(text: string, params: unknown[] = [], options: HttpUnitOptions = { readOnly: true }): Promise<Row[]> {
    const [rows] = await this.sendHttp([{ sql: text, params, method: "execute" }], options);
    return (rows ?? []) as Row[];
  }

  get pool(): Pool {
    this.#pool ??= new Pool({
      connectionString: this.#connectionString(),
      // One connection per request: units of one request take turns on it (a pooler's client never
      // waits behind itself), and a burst of N requests needs at most N connections.
      max: 1,
      connectionTimeoutMillis: this.#config.connectTimeoutMs ?? 5_000,
    });
    return this.#pool;
  }

  /**
   * Drizzle over the pool, outside any store. Use it only for tables that are not store-scoped
   * (user_account, session); store-scoped tables read zero rows here by construction (RLS).
   */
  get orm(): Orm {
    this.#orm ??= drizzle({ client: this.pool, schema });
    return this.#orm;
  }

  get onOutboxWritten(): DatabaseConfig["onOutboxWritten"] {
    return this.#config.onOutboxWritten;
  }

  get onStorefrontChange(): DatabaseConfig["onStorefrontChange"] {
    return this.#config.onStorefrontChange;
  }

  async connect(): Promise<PoolClient> {
    return (await this.pool.connect()) as PoolClient;
  }

  async close(): Promise<void> {
    const pool = this.#pool;
    this.#pool = undefined;
    this.#orm = undefined;
    if (pool) await pool.end().catch(() => undefined);
  }
}

export function ormFor(client: PoolClient): Orm {
  return drizzle({ client, schema });
}
