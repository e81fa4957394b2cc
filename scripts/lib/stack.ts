import { ensureLocalPostgres, type LocalPostgres } from "./pg-cluster";
import { localUrl, proxyAddress, redactUrl, type LocalStack } from "./config";
import { migrate } from "./migrate";
import { seedDemo } from "./seed";
import { proxyLimitsFromEnv, proxyRttMsFromEnv, startWsProxy, type ProxyLimits, type ProxyOptions, type RunningProxy } from "./ws-proxy";

/** Where the Workers and the migrator connect, and how to tear down what was started. */
export interface PreparedDatabase {
  /** Runtime role (app_user) connection string, handed to the Workers. */
  appUrl: string;
  /** Owner role connection string, for migrations and the seed. */
  ownerUrl: string;
  /** host:port of the local WebSocket proxy; undefined against Neon. */
  wsProxy?: string;
  proxy?: RunningProxy;
  release(): Promise<void>;
}

export interface PrepareOptions {
  stack: LocalStack;
  /** Port for the WebSocket proxy (0: any free port). */
  proxyPort?: number;
  /** The proxy's pool limits; unset ones come from COMMERCE_PROXY_* or the defaults. */
  proxyLimits?: Partial<ProxyLimits>;
  /** The simulated round trip to the database; unset: COMMERCE_DB_RTT_MS, or 0. */
  rttMs?: number;
  /** Whether the proxy keeps each trace's HTTP statements (ws-proxy.ts). */
  captureStatements?: boolean;
  seed: boolean;
  /** Honour DATABASE_URL / DATABASE_OWNER_URL (a Neon branch) instead of the local cluster. */
  allowRemote: boolean;
  log: (m: string) => void;
}

/**
 * The one bring-up used by `npm run dev`, the db:* commands and the test suite's global setup:
 * local cluster (or DATABASE_URL), the proxy (WebSocket and SQL over HTTP), migrations, demo seed.
 */
export async function prepareDatabase(options: PrepareOptions): Promise<PreparedDatabase> {
  const { log } = options;
  const remote = options.allowRemote ? process.env.DATABASE_URL : undefined;
  if (remote) {
    const ownerUrl = process.env.DATABASE_OWNER_URL ?? remote;
    if (!process.env.DATABASE_OWNER_URL) {
      log("DATABASE_OWNER_URL is not set: running migrations with DATABASE_URL. Point DATABASE_URL at app_user for RLS to bind the Workers.");
    }
    log(`Using ${redactUrl(remote)}`);
    await migrate(ownerUrl, log);
    if (options.seed) await seedDemo(ownerUrl, log);
    return { appUrl: remote, ownerUrl, release: async () => {} };
  }

  const local: LocalPostgres = await ensureLocalPostgres(options.stack, log);
  let proxy: RunningProxy | undefined;
  try {
    const ownerUrl = localUrl("owner", options.stack);
    const applied = await migrate(ownerUrl, log);
    log(applied > 0 ? `Applied ${applied} migration(s).` : "Database schema is up to date.");
    if (options.seed) await seedDemo(ownerUrl, log);
    const proxyOptions: ProxyOptions = {
      ...proxyLimitsFromEnv(),
      ...options.proxyLimits,
      rttMs: options.rttMs ?? proxyRttMsFromEnv(),
      captureStatements: options.captureStatements,
    };
    proxy = await startWsProxy(options.proxyPort ?? options.stack.proxyPort, proxyOptions);
    const wsProxy = proxyAddress({ ...options.stack, proxyPort: proxy.port });
    return {
      appUrl: localUrl("app", options.stack),
      ownerUrl,
      wsProxy,
      proxy,
      async release() {
        await proxy?.close();
        await local.release();
      },
    };
  } catch (e) {
    await proxy?.close();
    await local.release();
    throw e;
  }
}
