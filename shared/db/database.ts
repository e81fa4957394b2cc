import { Pool, neonConfig, type PoolClient } from "@neondatabase/serverless";
import { drizzle, type NeonDatabase } from "drizzle-orm/neon-serverless";
import * as schema from "./schema";

export type Schema = typeof schema;
export type Orm = NeonDatabase<Schema>;

export interface DatabaseConfig {
  /** Connection string of the runtime role (app_user). */
  url: string;
  /** Local stack only: host:port of the WebSocket-to-TCP proxy that stands in for Neon's. */
  wsProxy?: string | undefined;
  /** Give up on connecting after this long (ms). */
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

  constructor(config: DatabaseConfig) {
    configureDriver(config.wsProxy);
    this.#config = config;
  }

  get pool(): Pool {
    this.#pool ??= new Pool({
      connectionString: this.#config.url,
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
