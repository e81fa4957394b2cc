import { setMaxListeners } from "node:events";
import http from "node:http";
import type net from "node:net";
import { WebSocketServer } from "ws";
import { HttpConnectionPool } from "./neon-http-pool";
import { serveSql, type Distance, type SqlContext } from "./neon-http";
import { LOOPBACK } from "./neon-http-request";
import { UpstreamSlots, type SlotCounters, type SlotLimits } from "./proxy-slots";
import { TRACE_ID, TraceBook, type TraceView } from "./proxy-traces";
import { webSocketClients, type WsCounters } from "./ws-clients";

/**
 * The local stand-in for Neon's proxy, so that the Workers use the very same driver
 * (@neondatabase/serverless) against a local Postgres, over both of its paths:
 *   - WebSocket-to-TCP: the driver connects to ws://<proxy>/v2?address=<host>:<port> (Client, Pool);
 *   - SQL over HTTP: POST /sql on the same port (neon(), sql.transaction()), see ./neon-http.ts.
 * Only loopback targets are allowed.
 *
 * Like Neon's pooled endpoint (PgBouncer), it queues clients instead of letting them exhaust Postgres:
 * at most `maxUpstream` Postgres connections are open at once, WebSocket clients and the HTTP path's
 * pooled connections together (./proxy-slots.ts), and further clients wait in one FIFO queue (a
 * WebSocket is accepted at once, so the driver's connect timeout covers the wait). A full queue or a
 * wait past `queueTimeoutMs` closes a WebSocket (1013) and answers an HTTP query 53300. An idle HTTP
 * connection is closed as soon as anyone waits.
 *
 * Logging in works as on Neon too (./pg-login.ts): the driver gives its password in clear and the proxy
 * does SCRAM with Postgres, so the Worker does not spend SCRAM's CPU on every connection.
 *
 * `rttMs` simulates the distance to the database: each WebSocket turn is held that long before it
 * reaches Postgres, each HTTP answer that long before it leaves. `setRttMs` changes it while the proxy
 * runs (bench/edge.ts measures at two distances without restarting the Workers): both paths read it at
 * each round trip, so the next one is held for the new value.
 *
 * It counts round trips, which bench/ reads from GET /stats: WebSocket "turns" (the client speaking
 * again after the server has answered) plus HTTP queries, in all and per trace (./proxy-traces.ts,
 * GET /stats/trace/<traceId>).
 */
export interface ProxyStats extends SlotCounters, WsCounters {
  /** POST /sql requests served (a batch is one), each a round trip. */
  httpQueries: number;
  rttMs: number;
}

export type ProxyLimits = SlotLimits;

/** Sized for the local cluster (max_connections=200, shared by the dev and test proxies and tools). */
export const DEFAULT_PROXY_LIMITS: ProxyLimits = { maxUpstream: 40, maxQueue: 2000, queueTimeoutMs: 120_000 };

const LIMIT_ENV: Record<keyof ProxyLimits, { name: string; min: number }> = {
  maxUpstream: { name: "COMMERCE_PROXY_MAX_UPSTREAM", min: 1 },
  maxQueue: { name: "COMMERCE_PROXY_MAX_QUEUE", min: 0 },
  queueTimeoutMs: { name: "COMMERCE_PROXY_QUEUE_TIMEOUT_MS", min: 1 },
};

function wholeNumber(name: string, raw: string | number | undefined, min: number): number | undefined {
  if (raw === undefined || raw === "") return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be a whole number of at least ${min}, got "${raw}"`);
  return n;
}

/** The limits set through COMMERCE_PROXY_MAX_UPSTREAM, COMMERCE_PROXY_MAX_QUEUE, COMMERCE_PROXY_QUEUE_TIMEOUT_MS. */
export function proxyLimitsFromEnv(env: Record<string, string | undefined> = process.env): Partial<ProxyLimits> {
  const limits: Partial<ProxyLimits> = {};
  for (const key of Object.keys(LIMIT_ENV) as (keyof ProxyLimits)[]) {
    const n = wholeNumber(LIMIT_ENV[key].name, env[LIMIT_ENV[key].name], LIMIT_ENV[key].min);
    if (n !== undefined) limits[key] = n;
  }
  return limits;
}

/** COMMERCE_DB_RTT_MS: the simulated round trip to the database in milliseconds; undefined when unset. */
export function proxyRttMsFromEnv(env: Record<string, string | undefined> = process.env): number | undefined {
  return wholeNumber("COMMERCE_DB_RTT_MS", env["COMMERCE_DB_RTT_MS"], 0);
}

export interface RunningProxy {
  port: number;
  limits: ProxyLimits;
  /** The distance now (see setRttMs). */
  readonly rttMs: number;
  /** Changes the distance for every round trip from now on, on both paths (a whole number of ms from 0). */
  setRttMs(ms: number): void;
  stats(): ProxyStats;
  /** What GET /stats/trace/<traceId> answers. */
  trace(traceId: string, options?: { statements?: boolean }): TraceView;
  resetStats(): void;
  close(): Promise<void>;
}

export function parseTarget(url: string | undefined): { host: string; port: number } | null {
  if (!url) return null;
  const u = new URL(url, "http://proxy");
  if (u.pathname !== "/v2") return null;
  const address = u.searchParams.get("address") ?? "";
  const m = /^(\[::1\]|[^:]+):(\d{1,5})$/.exec(address);
  if (!m) return null;
  const host = m[1]!;
  const port = Number(m[2]);
  if (!LOOPBACK.has(host) || port < 1 || port > 65535) return null;
  return { host: host === "[::1]" ? "::1" : host, port };
}

const COUNTERS = ["connections", "turns", "wsTurns", "httpQueries", "bytesUp", "bytesDown", "opened", "waitMsTotal", "waitMsMax", "refused", "timedOut", "abandoned"] as const;

export interface ProxyOptions extends Partial<ProxyLimits> {
  host?: string;
  /** "neon" (default): log in as Neon's proxy does (./pg-login.ts); "bytes": copy bytes only. */
  login?: "neon" | "bytes";
  /** The simulated round trip to the database in milliseconds (default 0). */
  rttMs?: number;
  /** Keep each trace's HTTP statements (at most 200 a trace) for GET /stats/trace/<id>?statements=1. */
  captureStatements?: boolean;
  /** How long an HTTP-path connection stays open unused (default 10 s). */
  httpIdleMs?: number;
}

export async function startWsProxy(port: number, options: ProxyOptions = {}): Promise<RunningProxy> {
  const limits: ProxyLimits = {
    maxUpstream: options.maxUpstream ?? DEFAULT_PROXY_LIMITS.maxUpstream,
    maxQueue: options.maxQueue ?? DEFAULT_PROXY_LIMITS.maxQueue,
    queueTimeoutMs: options.queueTimeoutMs ?? DEFAULT_PROXY_LIMITS.queueTimeoutMs,
  };
  const distance: Distance = { ms: wholeNumber("rttMs", options.rttMs, 0) ?? 0 };
  const totals: ProxyStats = {
    connections: 0, turns: 0, wsTurns: 0, httpQueries: 0, bytesUp: 0, bytesDown: 0, opened: 0, active: 0, queued: 0,
    peakActive: 0, peakQueued: 0, waitMsTotal: 0, waitMsMax: 0, refused: 0, timedOut: 0, abandoned: 0, rttMs: distance.ms,
  };
  const traces = new TraceBook(options.captureStatements ?? false);
  const slots: UpstreamSlots = new UpstreamSlots(limits, totals, () => pool.closeOneIdle());
  const pool = new HttpConnectionPool(slots, () => totals.opened++, options.httpIdleMs ?? 10_000);
  const sockets = new Set<net.Socket>();
  const closing = new AbortController();
  // Every request held for the distance listens for the close, and removes its listener when done: any
  // number may wait at once (the default of 10 would warn of a leak under a burst).
  setMaxListeners(0, closing.signal);

  const resetStats = () => {
    for (const key of COUNTERS) totals[key] = 0;
    totals.peakActive = totals.active;
    totals.peakQueued = totals.queued;
    traces.clear();
  };

  const sql: SqlContext = {
    pool,
    distance,
    closing: closing.signal,
    onRequest({ trace, statements, begin }) {
      totals.httpQueries++;
      totals.turns++;
      if (!trace) return;
      traces.count(trace, "httpQueries");
      statements.forEach(({ query, params }, i) => traces.statement(trace, { query, params, batchIndex: begin === undefined ? null : i }));
    },
  };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://proxy");
    const json = (status: number, body: object) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    const traced = /^\/stats\/trace\/([^/]*)$/.exec(url.pathname);
    if (url.pathname === "/sql") {
      void serveSql(req, res, sql);
    } else if (url.pathname === "/stats") {
      json(200, { ...totals, limits });
    } else if (url.pathname === "/stats/reset" && req.method === "POST") {
      resetStats();
      res.writeHead(204).end();
    } else if (traced && req.method === "GET") {
      const id = traced[1]!;
      if (TRACE_ID.test(id)) json(200, traces.view(id, url.searchParams.get("statements") === "1"));
      else json(400, { message: "a trace id is 8 to 64 characters of A-Z, a-z, 0-9 and -" });
    } else {
      res.writeHead(404).end();
    }
  });
  const wss = new WebSocketServer({ noServer: true });
  const admit = webSocketClients({ slots, counters: totals, traces, distance, login: options.login ?? "neon", sockets });

  server.on("upgrade", (req, socket, head) => {
    const target = parseTarget(req.url);
    if (!target) {
      socket.end("HTTP/1.1 403 Forbidden\r\n\r\n");
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => admit(ws, target));
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, options.host ?? "127.0.0.1", () => resolve());
  });
  const address = server.address();
  const boundPort = typeof address === "object" && address ? address.port : port;

  return {
    port: boundPort,
    limits,
    get rttMs() {
      return distance.ms;
    },
    setRttMs(ms) {
      distance.ms = wholeNumber("rttMs", ms, 0) ?? 0;
      totals.rttMs = distance.ms;
    },
    stats: () => ({ ...totals }),
    trace: (traceId, { statements = false } = {}) => traces.view(traceId, statements),
    resetStats,
    close: () =>
      new Promise<void>((resolve) => {
        closing.abort();
        slots.close();
        pool.close();
        for (const s of sockets) s.destroy();
        for (const client of wss.clients) client.terminate();
        wss.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
