import http from "node:http";
import net from "node:net";
import { WebSocketServer, type WebSocket } from "ws";

/**
 * WebSocket-to-TCP proxy: the part Neon's own proxy plays in production, so that the Workers use the
 * very same driver (@neondatabase/serverless) against a local Postgres. The driver connects to
 * ws://<proxy>/v2?address=<host>:<port>; only loopback targets are allowed.
 *
 * It also counts round trips ("turns": the client speaking again after the server has answered) per
 * connection, which bench/ reads from GET /stats to report database round trips per request.
 */
export interface ProxyStats {
  connections: number;
  turns: number;
  bytesUp: number;
  bytesDown: number;
}

export interface RunningProxy {
  port: number;
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

export async function startWsProxy(port: number, host = "127.0.0.1"): Promise<RunningProxy> {
  const totals: ProxyStats = { connections: 0, turns: 0, bytesUp: 0, bytesDown: 0 };
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    if (req.url === "/stats") {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(totals));
    } else if (req.url === "/stats/reset" && req.method === "POST") {
      Object.assign(totals, { connections: 0, turns: 0, bytesUp: 0, bytesDown: 0 });
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
    wss.handleUpgrade(req, socket, head, (ws) => bridge(ws, target));
  });

  function bridge(ws: WebSocket, target: { host: string; port: number }) {
    totals.connections++;
    let serverSpoke = true; // the first client message is a turn
    const tcp = net.connect(target.port, target.host);
    sockets.add(tcp);
    tcp.setNoDelay(true);
    const pending: Buffer[] = [];
    let connected = false;
    tcp.on("connect", () => {
      connected = true;
      for (const chunk of pending.splice(0)) tcp.write(chunk);
    });
    ws.on("message", (data: Buffer) => {
      if (serverSpoke) totals.turns++;
      serverSpoke = false;
      totals.bytesUp += data.length;
      if (connected) tcp.write(data);
      else pending.push(data);
    });
    tcp.on("data", (chunk) => {
      serverSpoke = true;
      totals.bytesDown += chunk.length;
      if (ws.readyState === ws.OPEN) ws.send(chunk, { binary: true });
    });
    const shut = () => {
      sockets.delete(tcp);
      tcp.destroy();
      if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close();
    };
    tcp.on("error", shut);
    tcp.on("close", shut);
    ws.on("close", shut);
    ws.on("error", shut);
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const boundPort = typeof address === "object" && address ? address.port : port;

  return {
    port: boundPort,
    stats: () => ({ ...totals }),
    resetStats: () => Object.assign(totals, { connections: 0, turns: 0, bytesUp: 0, bytesDown: 0 }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        for (const client of wss.clients) client.terminate();
        wss.close();
        server.close(() => resolve());
      }),
  };
}
