import { env } from "cloudflare:workers";
import { Database } from "#shared/db/database";

/** The counters the local proxy's GET /stats answers, WebSocket and HTTP (scripts/lib/ws-proxy.ts has them all). */
type Counter = "connections" | "httpQueries" | "turns" | "opened" | "active" | "queued" | "peakActive" | "peakQueued" | "waitMsTotal" | "waitMsMax" | "refused" | "timedOut" | "abandoned";

export type ProxyStatsView = Record<Counter, number> & { limits: { maxUpstream: number; maxQueue: number; queueTimeoutMs: number } };

/** GET /stats of the proxy at host:port (loopback, plain http), from inside workerd. */
export async function proxyStats(address: string): Promise<ProxyStatsView> {
  const res = await fetch(`http://${address}/stats`);
  if (!res.ok) throw new Error(`proxy /stats: ${res.status}`);
  return (await res.json()) as ProxyStatsView;
}

/** Database round trips of one traced request, as the proxy counted them: on the answer's path and after it. */
export interface Trips {
  turns: number;
  wsTurns: number;
  httpQueries: number;
  connections: number;
  after: { turns: number; wsTurns: number; httpQueries: number; connections: number };
}

/** A fresh trace id: send it as `x-commerce-trace`, then read its round trips with `tripsOf`. */
export const newTrace = () => crypto.randomUUID();

/** The round trips the proxy at host:port counted for a trace (scripts/lib/proxy-traces.ts). */
export async function tripsOf(address: string, trace: string): Promise<Trips> {
  const res = await fetch(`http://${address}/stats/trace/${trace}`);
  if (!res.ok) throw new Error(`proxy /stats/trace: ${res.status}`);
  return (await res.json()) as Trips;
}

/** Times the Workers reached the database, as the proxy counted: HTTP requests (one round trip each) and WebSocket connections. */
export const reached = (s: Pick<ProxyStatsView, "httpQueries" | "connections">) => s.httpQueries + s.connections;

/** The suite's proxy, as the Workers' bindings name it. */
const bindings = () => env as unknown as { DATABASE_URL: string; DB_WS_PROXY: string };

/** Sends one request with a fresh trace header; answers it, its body and the round trips the proxy counted. */
export async function traced(send: (headers: Record<string, string>) => Promise<Response>) {
  const trace = newTrace();
  const res = await send({ "x-commerce-trace": trace });
  const body = await res.text();
  return { res, status: res.status, body, json: <T = unknown>() => (JSON.parse(body) as { json: T }).json, trips: await tripsOf(bindings().DB_WS_PROXY, trace) };
}

/** Runs `work` on a database whose round trips are traced; answers its result and what the proxy counted. */
export async function tracedWork<T>(work: (db: Database) => Promise<T>): Promise<{ result: T; trips: Trips }> {
  const { DATABASE_URL, DB_WS_PROXY } = bindings();
  const trace = newTrace();
  const db = new Database({ url: DATABASE_URL, wsProxy: DB_WS_PROXY, trace });
  try {
    const result = await work(db);
    return { result, trips: await tripsOf(DB_WS_PROXY, trace) };
  } finally {
    await db.close();
  }
}
