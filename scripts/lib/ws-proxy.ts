import http from "node:http";
import net from "node:net";
import { WebSocketServer, type WebSocket } from "ws";
import { LoginRelay } from "./pg-login";

/**
 * WebSocket-to-TCP proxy: the part Neon's own proxy plays in production, so that the Workers use the
 * very same driver (@neondatabase/serverless) against a local Postgres. The driver connects to
 * ws://<proxy>/v2?address=<host>:<port>; only loopback targets are allowed.
 *
 * Like Neon's pooled endpoint (PgBouncer), it queues clients instead of letting them exhaust Postgres:
 * at most `maxUpstream` TCP connections are open at once, and further clients wait in a FIFO queue
 * (the WebSocket is accepted at once, so the driver's connect timeout covers the wait). A full queue
 * or a wait past `queueTimeoutMs` closes the client's socket: the driver sees a connection error.
 *
 * Logging in works as on Neon too (./pg-login.ts): the driver gives its password in clear and the proxy
 * does SCRAM with Postgres, so the Worker does not spend SCRAM's CPU on every connection.
 *
 * It also counts round trips ("turns": the client speaking again after the server has answered) per
 * connection, which bench/ reads from GET /stats to report database round trips per request.
 */
export interface ProxyStats {
  /** WebSocket clients accepted. */
  connections: number;
  turns: number;
  bytesUp: number;
  bytesDown: number;
  /** Upstream (Postgres) TCP connections ever opened. */
  opened: number;
  /** Upstream connections open now. */
  active: number;
  /** Clients waiting for an upstream slot now. */
  queued: number;
  peakActive: number;
  peakQueued: number;
  /** Time clients waited in the queue before getting a slot. */
  waitMsTotal: number;
  waitMsMax: number;
  /** Clients closed because the queue was full. */
  refused: number;
  /** Clients closed after waiting queueTimeoutMs. */
  timedOut: number;
  /** Clients that went away while queued. */
  abandoned: number;
}

export interface ProxyLimits {
  /** Upstream connections open at once. */
  maxUpstream: number;
  /** Clients that may wait at once; one more is closed at once. */
  maxQueue: number;
  /** How long a client may wait for a slot (PgBouncer's query_wait_timeout). */
  queueTimeoutMs: number;
}

/** Sized for the local cluster (max_connections=200, shared by the dev and test proxies and tools). */
export const DEFAULT_PROXY_LIMITS: ProxyLimits = { maxUpstream: 40, maxQueue: 2000, queueTimeoutMs: 120_000 };

const LIMIT_ENV: Record<keyof ProxyLimits, { name: string; min: number }> = {
  maxUpstream: { name: "COMMERCE_PROXY_MAX_UPSTREAM", min: 1 },
  maxQueue: { name: "COMMERCE_PROXY_MAX_QUEUE", min: 0 },
  queueTimeoutMs: { name: "COMMERCE_PROXY_QUEUE_TIMEOUT_MS", min: 1 },
};

/** The limits set through COMMERCE_PROXY_MAX_UPSTREAM, COMMERCE_PROXY_MAX_QUEUE, COMMERCE_PROXY_QUEUE_TIMEOUT_MS. */
export function proxyLimitsFromEnv(env: Record<string, string | undefined> = process.env): Partial<ProxyLimits> {
  const limits: Partial<ProxyLimits> = {};
  for (const key of Object.keys(LIMIT_ENV) as (keyof ProxyLimits)[]) {
    const { name, min } = LIMIT_ENV[key];
    const raw = env[name];
    if (raw === undefined || raw === "") continue;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be a whole number of at least ${min}, got "${raw}"`);
    limits[key] = n;
  }
  return limits;
}

export interface RunningProxy {
  port: number;
  limits: ProxyLimits;
  stats(): ProxyStats;
  resetStats(): void;
  close(): Promise<void>;
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

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

type Target = { host: string; port: number };

/** What carries bytes between a client and its upstream connection. */
type Relay = Pick<LoginRelay, "fromClient" | "fromServer">;

interface Client {
  ws: WebSocket;
  target: Target;
  /** Client bytes that arrived before the upstream connection was open. */
  pending: Buffer[];
  since: number;
  state: "queued" | "upstream" | "gone";
  /** Whether the server spoke last, so the client's next message is a new turn. */
  serverSpoke: boolean;
  tcp?: net.Socket;
  relay?: Relay;
  timer?: NodeJS.Timeout;
}

const COUNTERS = ["connections", "turns", "bytesUp", "bytesDown", "opened", "waitMsTotal", "waitMsMax", "refused", "timedOut", "abandoned"] as const;

/** 1013 "Try Again Later": the close code for a client the pool cannot take. */
const TRY_AGAIN_LATER = 1013;

export interface ProxyOptions extends Partial<ProxyLimits> {
  host?: string;
  /** "neon" (default): log in as Neon's proxy does (./pg-login.ts); "bytes": copy bytes only. */
  login?: "neon" | "bytes";
}

export async function startWsProxy(port: number, options: ProxyOptions = {}): Promise<RunningProxy> {
  const limits: ProxyLimits = {
    maxUpstream: options.maxUpstream ?? DEFAULT_PROXY_LIMITS.maxUpstream,
    maxQueue: options.maxQueue ?? DEFAULT_PROXY_LIMITS.maxQueue,
    queueTimeoutMs: options.queueTimeoutMs ?? DEFAULT_PROXY_LIMITS.queueTimeoutMs,
  };
  const totals: ProxyStats = {
    connections: 0, turns: 0, bytesUp: 0, bytesDown: 0, opened: 0, active: 0, queued: 0,
    peakActive: 0, peakQueued: 0, waitMsTotal: 0, waitMsMax: 0, refused: 0, timedOut: 0, abandoned: 0,
  };
  const queue: Client[] = [];
  const sockets = new Set<net.Socket>();

  const resetStats = () => {
    for (const key of COUNTERS) totals[key] = 0;
    totals.peakActive = totals.active;
    totals.peakQueued = totals.queued;
  };

  const server = http.createServer((req, res) => {
    if (req.url === "/stats") {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ...totals, limits }));
    } else if (req.url === "/stats/reset" && req.method === "POST") {
      resetStats();
      res.writeHead(204).end();
    } else {
      res.writeHead(404).end();
    }
  });
  const wss = new WebSocketServer({ noServer: true });

  server.on("upgrade", (req, socket, head) => {
    const target = parseTarget(req.url);
    if (!target) {
      socket.end("HTTP/1.1 403 Forbidden\r\n\r\n");
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => admit(ws, target));
  });

  function admit(ws: WebSocket, target: Target) {
    totals.connections++;
    const client: Client = { ws, target, pending: [], since: Date.now(), state: "queued", serverSpoke: true };
    ws.on("message", (data: Buffer) => {
      if (client.state === "gone") return;
      if (client.serverSpoke) totals.turns++;
      client.serverSpoke = false;
      totals.bytesUp += data.length;
      if (client.relay && !client.tcp?.connecting) client.relay.fromClient(data);
      else client.pending.push(data);
    });
    ws.on("close", () => leave(client, "abandoned"));
    ws.on("error", () => leave(client, "abandoned"));

    if (totals.active < limits.maxUpstream) return openUpstream(client);
    if (queue.length >= limits.maxQueue) return leave(client, "refused");
    client.timer = setTimeout(() => leave(client, "timedOut"), limits.queueTimeoutMs);
    queue.push(client);
    setQueued();
  }

  function setQueued() {
    totals.queued = queue.length;
    totals.peakQueued = Math.max(totals.peakQueued, totals.queued);
  }

  function openUpstream(client: Client) {
    const waited = Date.now() - client.since;
    totals.waitMsTotal += waited;
    totals.waitMsMax = Math.max(totals.waitMsMax, waited);
    totals.opened++;
    totals.active++;
    totals.peakActive = Math.max(totals.peakActive, totals.active);
    client.state = "upstream";
    const tcp = net.connect(client.target.port, client.target.host);
    const toClient = (bytes: Buffer) => {
      if (client.ws.readyState === client.ws.OPEN) client.ws.send(bytes, { binary: true });
    };
    const relay: Relay =
      options.login === "bytes"
        ? { fromClient: (bytes) => tcp.write(bytes), fromServer: toClient }
        : new LoginRelay({ toServer: (bytes) => tcp.write(bytes), toClient, fail: () => tcp.destroy() });
    Object.assign(client, { tcp, relay });
    sockets.add(tcp);
    tcp.setNoDelay(true);
    tcp.on("connect", () => {
      for (const chunk of client.pending.splice(0)) relay.fromClient(chunk);
    });
    tcp.on("data", (chunk) => {
      client.serverSpoke = true;
      totals.bytesDown += chunk.length;
      relay.fromServer(chunk);
    });
    tcp.on("error", () => tcp.destroy());
    // 'close' follows every end of the socket (error, either side closing): the slot frees once.
    tcp.on("close", () => {
      sockets.delete(tcp);
      totals.active--;
      leave(client, "abandoned");
      admitNext();
    });
  }

  function admitNext() {
    while (totals.active < limits.maxUpstream && queue.length > 0) {
      const next = queue.shift()!;
      clearTimeout(next.timer);
      setQueued();
      openUpstream(next);
    }
  }

  /** The client is done (its socket closed) or is turned away; frees what it holds. */
  function leave(client: Client, why: "abandoned" | "refused" | "timedOut") {
    if (client.state === "gone") return;
    const wasQueued = client.state === "queued";
    client.state = "gone";
    if (wasQueued) {
      clearTimeout(client.timer);
      const at = queue.indexOf(client);
      if (at >= 0) queue.splice(at, 1);
      setQueued();
      totals[why]++;
    }
    client.tcp?.destroy();
    const { ws } = client;
    if (ws.readyState !== ws.OPEN) return;
    if (wasQueued) ws.close(TRY_AGAIN_LATER, why === "refused" ? "too many clients waiting" : "no database connection came free in time");
    else ws.close();
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, options.host ?? "127.0.0.1", () => resolve());
  });
  const address = server.address();
  const boundPort = typeof address === "object" && address ? address.port : port;

  return {
    port: boundPort,
    limits,
    stats: () => ({ ...totals }),
    resetStats,
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of queue.splice(0)) clearTimeout(client.timer);
        for (const s of sockets) s.destroy();
        for (const client of wss.clients) client.terminate();
        wss.close();
        server.close(() => resolve());
      }),
  };
}
