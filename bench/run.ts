/**
 * npm run bench: measures against the real local stack (workerd via wrangler dev, Postgres through the
 * WebSocket proxy), in one run, and reports ratios and round trips, never a lone absolute time.
 *
 *   - GET /health (worker: one `select 1`) as the baseline;
 *   - the storefront for demo.localhost: GET / and a product page from a warm edge cache (the host and the
 *     store's facts held in KV, the page in the Cache API: no database work), the product page with a
 *     cold cache (a query the cache has never seen: one store unit renders it), against the storefront's
 *     bare answer (a 404 by the first path rule, no I/O); database connections per 1 000 warm requests;
 *   - POST /api/rpc/products/list on the admin as the demo Owner (session cookie): the session lookup,
 *     then one store-scoped unit with the membership check and the page query;
 *   - database round trips per request, counted by the proxy ("turns": the client speaking again after
 *     the server answered), and from them the cost of one withStore unit of work.
 *
 *   - POST /api/v1/products/list with a created token (tokens used in turn, 120 calls a minute each),
 *     with the limiter's decision time from the answer's Server-Timing header.
 *
 *   - POST /api/mcp/demo: tools/list and a read tools/call (listProducts), with created tokens.
 *
 *   - the floor: GET on the token API's path, answered 405 by workerd and our app without any I/O;
 *
 *   - bursts: 200 concurrent token-API calls for one grant (status counts, and connections opened at
 *     the proxy by the refused ones), and 400 concurrent calls over 4 grants.
 *
 *   - checkout throughput with 1, 10 and 50 buyers at once, through the storefront Worker and the same
 *     code and SQL directly from Node (bench/checkout.ts).
 *
 *   - the outbox relay: commit → notification with nudges and without, and events per second at 1 and
 *     100 stores (bench/relay.ts).
 *
 * Writes bench/results/foundation.json, admin.json, token-api.json, mcp.json, burst.json, checkout.json
 * and relay.json.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { ChildProcess } from "node:child_process";
import { DEV_STACK, ROOT } from "../scripts/lib/config";
import { prepareDatabase } from "../scripts/lib/stack";
import { burst } from "./burst";
import { checkoutBench } from "./checkout";
import { relayBench } from "./relay";
import { createTokens, PORTS, send, signIn } from "./http";
import { fireCronsLocally, startWorkerProcess, stopWorkerProcesses, waitForHttp, type WorkerName } from "../scripts/lib/workers";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 300);
const WARMUP = 30;
const log = (m: string) => console.log(`[bench] ${m}`);

interface Target {
  name: string;
  url: string;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  /** Adds a query the edge cache has never seen to each request (a cold cache). */
  cold?: boolean;
  expect: (status: number, body: string) => boolean;
}

const targets: Target[] = [
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
];

const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

targets.push(
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
);

/** Tokens for the token-API and MCP targets, used in turn: each grant may make 120 calls a minute. */
const TOKEN_POOL = 24;
const BEARER_TARGETS = new Set(["tokenProductsList", "mcpToolsList", "mcpToolsCallRead"]);
let tokens: string[] = [];
let nextToken = 0;
const limiterMs: number[] = [];
/** The storefront's HOSTS cache, as its answers report it (Server-Timing `host;desc=hit|miss`). */
const hostCache = { hit: 0, miss: 0 };
/** The edge cache's verdicts per storefront target (Server-Timing `edge;desc=hit|miss|bypass`). */
const edgeCache: Record<string, Record<string, number>> = {};
let coldQuery = 0;


async function hit(t: Target): Promise<number> {
  const headers = { ...t.headers };
  if (BEARER_TARGETS.has(t.name)) headers.authorization = `Bearer ${tokens[nextToken++ % tokens.length]}`;
  const url = t.cold ? `${t.url}?cold=${Date.now()}-${coldQuery++}` : t.url;
  const started = performance.now();
  const { status, body, headers: answer } = await send(url, { method: t.method ?? "GET", headers, ...(t.body ? { body: t.body } : {}) });
  const timing = /limiter;dur=([0-9.]+)/.exec(String(answer["server-timing"] ?? ""));
  if (timing) limiterMs.push(Number(timing[1]));
  const host = /host;desc="(hit|miss)"/.exec(String(answer["server-timing"] ?? ""))?.[1];
  if (host) hostCache[host as "hit" | "miss"]++;
  const edge = /edge;desc="(\w+)"/.exec(String(answer["server-timing"] ?? ""))?.[1];
  if (edge) (edgeCache[t.name] ??= {})[edge] = (edgeCache[t.name]?.[edge] ?? 0) + 1;
  const ms = performance.now() - started;
  if (!t.expect(status, body)) throw new Error(`${t.name}: unexpected answer ${status}: ${body.slice(0, 200)}`);
  return ms;
}

/** A target's latency percentile as a multiple of another's (/health by default), to two decimals. */
function vsHealth(latency: Record<string, { p50: number; p95: number }>, name: string, q: "p50" | "p95", base = "health"): number {
  return Math.round((latency[name]![q] / latency[base]![q]) * 100) / 100;
}


function summarize(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
  const round = (n: number) => Math.round(n * 100) / 100;
  return { n: s.length, p50: round(q(0.5)), p95: round(q(0.95)), mean: round(s.reduce((a, b) => a + b, 0) / s.length) };
}

async function main(): Promise<void> {
  const db = await prepareDatabase({ stack: { ...DEV_STACK, database: "commerce_bench" }, proxyPort: 0, seed: true, allowRemote: false, log });
  const proxy = db.proxy!;
  const children: ChildProcess[] = [];
  try {
    for (const [name, port] of Object.entries(PORTS) as [WorkerName, number][]) {
      children.push(startWorkerProcess({ name, port, inspectorPort: port + 1000, db, logLevel: "warn", workerPort: PORTS.worker! }));
    }
    for (const t of targets) {
      const probe = t.method === "POST" ? t.url.replace(/\/api\/rpc\/.*$/, "/login") : t.url;
      if (!(await waitForHttp(probe, 120_000))) throw new Error(`${t.name} did not come up`);
    }
    const admin = targets.find((t) => t.name === "adminProductsList")!;
    const cookie = await signIn();
    admin.headers = { ...admin.headers, cookie };
    tokens = await createTokens(cookie, TOKEN_POOL);
    log(`Warming up (${WARMUP} requests each)…`);
    for (let i = 0; i < WARMUP; i++) for (const t of targets) await hit(t);

    // Latency: interleaved, one request at a time, so both see the same machine state.
    limiterMs.length = 0;
    log(`Measuring latency (${ROUNDS} rounds, interleaved)…`);
    const samples: Record<string, number[]> = Object.fromEntries(targets.map((t) => [t.name, []]));
    for (let i = 0; i < ROUNDS; i++) for (const t of targets) samples[t.name]!.push(await hit(t));
    const latency = Object.fromEntries(targets.map((t) => [t.name, summarize(samples[t.name]!)]));

    // Round trips: per target, on a quiet proxy.
    const roundTrips: Record<string, { turnsPerRequest: number; connectionsPerRequest: number }> = {};
    const N = 50;
    for (const t of targets) {
      proxy.resetStats();
      for (let i = 0; i < N; i++) await hit(t);
      await new Promise((r) => setTimeout(r, 200)); // let the closing connections settle
      const s = proxy.stats();
      roundTrips[t.name] = { turnsPerRequest: s.turns / N, connectionsPerRequest: s.connections / N };
    }
    // Connections per 1 000 warm storefront requests (the product page from the edge cache).
    const warm = targets.find((t) => t.name === "storefrontProduct")!;
    proxy.resetStats();
    const warmStoreMisses = hostCache.miss;
    for (let i = 0; i < 1000; i++) await hit(warm);
    await new Promise((r) => setTimeout(r, 200));
    const warmConnections = proxy.stats().connections;
    const health = roundTrips.health!.turnsPerRequest;
    const cold = roundTrips.storefrontProductCold!.turnsPerRequest;
    // /health = connect + 1 query; storefront / = connect + 1 lookup + one withStore unit.
    const result = {
      benchmark: "foundation",
      at: new Date().toISOString(),
      machine: { cpus: os.cpus().length, node: process.version, platform: `${os.platform()} ${os.arch()}` },
      rounds: ROUNDS,
      latencyMs: latency,
      ratios: {
        storefrontHomeWarmVsFloorP50: vsHealth(latency, "storefrontHome", "p50", "storefrontFloor"),
        storefrontHomeWarmVsHealthP50: vsHealth(latency, "storefrontHome", "p50"),
      },
      storefrontProduct: {
        warmVsFloorP50: vsHealth(latency, "storefrontProduct", "p50", "storefrontFloor"),
        warmVsFloorP95: vsHealth(latency, "storefrontProduct", "p95", "storefrontFloor"),
        coldVsFloorP50: vsHealth(latency, "storefrontProductCold", "p50", "storefrontFloor"),
        coldVsWarmP50: vsHealth(latency, "storefrontProductCold", "p50", "storefrontProduct"),
        goal: "warm p50 <= 2x the floor, 0 connections when warm",
        connectionsPer1000Warm: warmConnections,
        hostLookupsDuringThem: hostCache.miss - warmStoreMisses,
        coldRoundTrips: cold,
        edgeVerdicts: edgeCache,
        note: "GET /products/cotton-kurta on demo.localhost. Warm: the host and the store's facts from the HOSTS KV namespace, the page from the Cache API (keyed by store, catalogue version, host, path). Cold: the same page with a query the cache has never seen, rendered by one read-only store unit (BEGIN+set_config, the product and the primary hostname, COMMIT) and stored. The floor is /-s/x, refused by the first path rule with no I/O. The held entries are read from the database again once a minute, so a long warm run may show a connection or two.",
      },
      hostCache: {
        ...hostCache,
        note: "Storefront requests of the whole run (warm-up, latency and round-trip rounds) for one host: the HOSTS KV entry holds 60 s, so the privileged lookup runs about once a minute however many requests arrive.",
      },
      databaseRoundTrips: {
        perRequest: roundTrips,
        connectionSetup: health - 1,
        storefrontColdPageAfterConnect: cold - (health - 1),
        note: "Turns counted at the local WebSocket proxy. Connection setup here is startup, password (the proxy does SCRAM with Postgres, as Neon's does) and Terminate; Neon's pipelined connect sends startup and password with the first query.",
      },
    };
    const rpcTurns = roundTrips.adminProductsList!.turnsPerRequest;
    const adminResult = {
      benchmark: "admin",
      at: result.at,
      machine: result.machine,
      rounds: ROUNDS,
      latencyMs: { health: latency.health, adminProductsList: latency.adminProductsList },
      ratios: {
        productsListVsHealthP50: vsHealth(latency, "adminProductsList", "p50"),
        productsListVsHealthP95: vsHealth(latency, "adminProductsList", "p95"),
      },
      databaseRoundTrips: {
        productsList: rpcTurns,
        afterConnectionSetup: rpcTurns - (health - 1),
        note: "products.list over /api/rpc: connection setup, session lookup (1), then one read-only withStore unit: BEGIN+set_config+membership check (1), the page query with its total (1), COMMIT (1).",
      },
    };
    const tokenTurns = roundTrips.tokenProductsList!.turnsPerRequest;
    const apiResult = {
      benchmark: "token-api",
      at: result.at,
      machine: result.machine,
      rounds: ROUNDS,
      latencyMs: { health: latency.health, tokenProductsList: latency.tokenProductsList, limiterDecision: summarize(limiterMs) },
      ratios: {
        tokenProductsListVsHealthP50: vsHealth(latency, "tokenProductsList", "p50"),
        tokenProductsListVsHealthP95: vsHealth(latency, "tokenProductsList", "p95"),
        tokenProductsListVsFloorP50: vsHealth(latency, "tokenProductsList", "p50", "floor"),
        healthVsFloorP50: vsHealth(latency, "health", "p50", "floor"),
      },
      databaseRoundTrips: {
        perRequestTotal: tokenTurns,
        connectionSetup: health - 1,
        activityUpsertAfterResponse: 2,
        onResponsePathAfterConnect: tokenTurns - (health - 1) - 2,
        note: "On the response path: the per-grant limiter (a Durable Object call keyed on the token's hash, before any database work), then BEGIN + set_config(store from the privileged token-hash lookup) + grant/member/store read in one message, the page query, COMMIT. After the answer (waitUntil): the read-activity upsert with last_used_at, BEGIN+statement in one message and COMMIT.",
      },
    };
    const setup = health - 1;
    const mcpResult = {
      benchmark: "mcp",
      at: result.at,
      machine: result.machine,
      rounds: ROUNDS,
      latencyMs: { health: latency.health, toolsList: latency.mcpToolsList, toolsCallRead: latency.mcpToolsCallRead },
      ratios: {
        toolsListVsHealthP50: vsHealth(latency, "mcpToolsList", "p50"),
        toolsCallReadVsHealthP50: vsHealth(latency, "mcpToolsCallRead", "p50"),
      },
      databaseRoundTrips: {
        toolsList: { total: roundTrips.mcpToolsList!.turnsPerRequest, afterConnect: roundTrips.mcpToolsList!.turnsPerRequest - setup },
        toolsCallRead: {
          total: roundTrips.mcpToolsCallRead!.turnsPerRequest,
          afterConnect: roundTrips.mcpToolsCallRead!.turnsPerRequest - setup,
          activityUpsertAfterResponse: 2,
        },
        note: "Bearer: a created token (the OAuth path adds one KV read at the provider). tools/list: the principal's read-only unit (opening message with grant, role and store; COMMIT). A read tools/call adds the tool's own unit (BEGIN+set_config, the query, COMMIT) and, after the answer, the activity upsert (2).",
      },
    };
    log("Bursts: 200 concurrent calls for one grant, then 400 over 4 grants…");
    const burstResult = {
      benchmark: "burst",
      at: result.at,
      machine: result.machine,
      oneGrant: await burst(cookie, proxy, 200, 1),
      fourGrants: await burst(cookie, proxy, 400, 4),
      note: "POST /api/v1/products/list, all requests in flight at once. The per-grant limiter (120 a rolling minute) decides before any database work, so a refused call opens no connection (each answered call opens exactly one: its activity upsert reuses it). Connections are WebSockets counted at the local proxy, which queues them in front of a bounded number of Postgres connections as Neon's pooler does.",
    };
    const checkoutResult = {
      benchmark: "checkout",
      at: result.at,
      machine: result.machine,
      ...(await checkoutBench(db, latency.storefrontFloor!.p50, log)),
    };
    // The worker's every-minute cron arms its alarm loop: the 5 s relay (wrangler dev fires no crons).
    const stopCrons = fireCronsLocally(`http://127.0.0.1:${PORTS.worker}`, ["* * * * *"]);
    const relayResult = { benchmark: "relay", at: result.at, machine: result.machine, ...(await relayBench(db.ownerUrl, log)) };
    stopCrons();
    for (const [file, data] of [
      ["foundation.json", result],
      ["relay.json", relayResult],
      ["admin.json", adminResult],
      ["token-api.json", apiResult],
      ["mcp.json", mcpResult],
      ["burst.json", burstResult],
      ["checkout.json", checkoutResult],
    ] as const) {
      const out = path.join(ROOT, "bench", "results", file);
      fs.writeFileSync(out, `${JSON.stringify(data, null, 2)}\n`);
      log(`Written to ${path.relative(ROOT, out)}`);
    }
    console.log(JSON.stringify({ admin: adminResult.ratios, tokenApi: apiResult.ratios, mcp: mcpResult, burst: burstResult, checkout: checkoutResult, relay: relayResult }, null, 2));
  } finally {
    await stopWorkerProcesses(children);
    await db.release();
  }
}

main().catch((e: unknown) => {
  console.error(`[bench] ${e instanceof Error ? e.stack : String(e)}`);
  process.exit(1);
});
