/**
 * The foundation run's targets (bench/run.ts): one request each, measured interleaved, with what their
 * answers report on the side (the limiter's decision time, the storefront's host and edge caches).
 */
import { PORTS, send } from "./http";

export interface Target {
  name: string;
  url: string;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  /** Adds a query the edge cache has never seen to each request (a cold cache). */
  cold?: boolean;
  expect: (status: number, body: string) => boolean;
}

const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

export const targets: Target[] = [
  { name: "floor", url: `http://127.0.0.1:${PORTS.admin}/api/v1/products/list`, expect: (status) => status === 405 },
  { name: "health", url: `http://127.0.0.1:${PORTS.worker}/health`, expect: (status) => status === 200 },
  {
    name: "storefrontHome",
    url: `http://127.0.0.1:${PORTS.storefront}/`,
    headers: { host: "demo.localhost" },
    expect: (status, body) => status === 200 && body.includes("Demo Store"),
  },
  // The storefront's bare answer: an internal path refused by the first path rule, before any I/O.
  { name: "storefrontFloor", url: `http://127.0.0.1:${PORTS.storefront}/-s/x`, headers: { host: "demo.localhost" }, expect: (status) => status === 404 },
  {
    name: "storefrontProduct",
    url: `http://127.0.0.1:${PORTS.storefront}/products/cotton-kurta`,
    headers: { host: "demo.localhost" },
    expect: (status, body) => status === 200 && body.includes("Cotton Kurta"),
  },
  {
    name: "storefrontProductCold",
    url: `http://127.0.0.1:${PORTS.storefront}/products/cotton-kurta`,
    headers: { host: "demo.localhost" },
    cold: true,
    expect: (status, body) => status === 200 && body.includes("Cotton Kurta"),
  },
  {
    name: "adminProductsList",
    url: `http://127.0.0.1:${PORTS.admin}/api/rpc/products/list`,
    method: "POST",
    headers: { "content-type": "application/json" }, // the session cookie is added after signing in
    body: JSON.stringify({ json: { page: 1, pageSize: 20 } }),
    expect: (status, body) => status === 200 && body.includes('"total":'),
  },
  {
    name: "tokenProductsList",
    url: `http://127.0.0.1:${PORTS.admin}/api/v1/products/list`,
    method: "POST",
    headers: { "content-type": "application/json" }, // the bearer token is added once created
    body: JSON.stringify({ json: { page: 1, pageSize: 20 } }),
    expect: (status, body) => status === 200 && body.includes('"total":'),
  },
  {
    name: "mcpToolsList",
    url: `http://127.0.0.1:${PORTS.admin}/api/mcp/demo`,
    method: "POST",
    headers: MCP_HEADERS,
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    expect: (status, body) => status === 200 && body.includes('"listProducts"'),
  },
  {
    name: "mcpToolsCallRead",
    url: `http://127.0.0.1:${PORTS.admin}/api/mcp/demo`,
    method: "POST",
    headers: MCP_HEADERS,
    body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "listProducts", arguments: { pageSize: 20 } } }),
    expect: (status, body) => status === 200 && body.includes("total") && !body.includes('"isError":true'),
  },
];

/** Tokens for the token-API and MCP targets, used in turn: each grant may make 120 calls a minute. */
export const TOKEN_POOL = 24;
const BEARER_TARGETS = new Set(["tokenProductsList", "mcpToolsList", "mcpToolsCallRead"]);

/** What the answers reported, over the whole run. */
export const observed = {
  tokens: [] as string[],
  limiterMs: [] as number[],
  /** The storefront's HOSTS cache, as its answers report it (Server-Timing `host;desc=hit|miss`). */
  hostCache: { hit: 0, miss: 0 },
  /** The edge cache's verdicts per storefront target (Server-Timing `edge;desc=hit|miss|bypass`). */
  edgeCache: {} as Record<string, Record<string, number>>,
};
let nextToken = 0;
let coldQuery = 0;

/** One request to `t` (named `trace` at the proxy when given); answers its latency in ms. */
export async function hit(t: Target, trace?: string): Promise<number> {
  const headers: Record<string, string> = { ...t.headers, ...(trace ? { "x-commerce-trace": trace } : {}) };
  if (BEARER_TARGETS.has(t.name)) headers.authorization = `Bearer ${observed.tokens[nextToken++ % observed.tokens.length]}`;
  const url = t.cold ? `${t.url}?cold=${Date.now()}-${coldQuery++}` : t.url;
  const started = performance.now();
  const { status, body, headers: answer } = await send(url, { method: t.method ?? "GET", headers, ...(t.body ? { body: t.body } : {}) });
  const ms = performance.now() - started;
  const timing = String(answer["server-timing"] ?? "");
  const limiter = /limiter;dur=([0-9.]+)/.exec(timing);
  if (limiter) observed.limiterMs.push(Number(limiter[1]));
  const host = /host;desc="(hit|miss)"/.exec(timing)?.[1];
  if (host) observed.hostCache[host as "hit" | "miss"]++;
  const edge = /edge;desc="(\w+)"/.exec(timing)?.[1];
  if (edge) (observed.edgeCache[t.name] ??= {})[edge] = (observed.edgeCache[t.name]?.[edge] ?? 0) + 1;
  if (!t.expect(status, body)) throw new Error(`${t.name}: unexpected answer ${status}: ${body.slice(0, 200)}`);
  return ms;
}

export interface Summary {
  n: number;
  p50: number;
  p95: number;
  mean: number;
}

export function summarize(samples: number[]): Summary {
  const s = [...samples].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
  const round = (n: number) => Math.round(n * 100) / 100;
  return { n: s.length, p50: round(q(0.5)), p95: round(q(0.95)), mean: round(s.reduce((a, b) => a + b, 0) / s.length) };
}

/** A target's latency percentile as a multiple of another's (/health by default), to two decimals. */
export function vsHealth(latency: Record<string, { p50: number; p95: number }>, name: string, q: "p50" | "p95", base = "health"): number {
  return Math.round((latency[name]![q] / latency[base]![q]) * 100) / 100;
}
