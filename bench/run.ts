/**
 * npm run bench: measures against the real local stack (workerd via wrangler dev, Postgres through the
 * local proxy that plays Neon's WebSocket and HTTP endpoints, scripts/lib/ws-proxy.ts), in one run, and
 * reports ratios and round trips, never a lone absolute time. COMMERCE_DB_RTT_MS sets the proxy's
 * distance to the database for every result but edge.json, which measures at 0 and 30 ms itself.
 *
 *   - GET /health (worker: one `select 1` over the WebSocket Pool, so it pays a connection) as the baseline;
 *   - the storefront for demo.localhost: GET / and a product page from a warm edge cache (the host and the
 *     store's facts held in KV, the page in the Cache API: no database work), the product page with a
 *     cold cache (a query the cache has never seen: one store unit, one HTTP round trip, renders it),
 *     against the storefront's bare answer (a 404 by the first path rule, no I/O); database connections
 *     per 1 000 warm requests;
 *   - POST /api/rpc/products/list on the admin as the demo Owner (session cookie): one unit, the session's
 *     opening (session, active store, member, permission) and the page query in one round trip;
 *   - database round trips per request, counted by the proxy (WebSocket turns, the client speaking again
 *     after the server answered, plus HTTP queries, a batch being one), on the answer's path and after
 *     it from each request's trace (`x-commerce-trace`).
 *
 *   - POST /api/v1/products/list with a created token (tokens used in turn, 120 calls a minute each),
 *     with the limiter's decision time from the answer's Server-Timing header.
 *
 *   - POST /api/mcp/demo: tools/list and a read tools/call (listProducts), with created tokens.
 *
 *   - the floor: GET on the token API's path, answered 405 by workerd and our app without any I/O;
 *
 *   - bursts: 200 concurrent token-API calls for one grant (status counts, and what the refused ones cost
 *     at the proxy), and 400 concurrent calls over 4 grants.
 *
 *   - checkout throughput with 1, 10 and 50 buyers at once, through the storefront Worker and the same
 *     code and SQL directly from Node (bench/checkout.ts).
 *
 *   - the outbox relay: commit → notification with nudges and without, and events per second at 1 and
 *     100 stores (bench/relay.ts).
 *
 *   - the edge bench (bench/edge.ts): every hot path's round trips from its traces and its p50/p95 at a
 *     distance of 0 and 30 ms, against the floors measured in the same rounds.
 *
 * Writes bench/results/foundation.json, admin.json, token-api.json, mcp.json, burst.json, checkout.json,
 * relay.json and edge.json. `npm run bench -- --only edge` runs the edge bench alone (edge.json only);
 * BENCH_WORKER_LOGS=1 prints the Workers' warnings and errors.
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
import { edgeBench, edgeTable } from "./edge";
import { createTokens, PORTS, signIn } from "./http";
import { hit, observed, summarize, targets, TOKEN_POOL, vsHealth } from "./targets";
import { fireCronsLocally, startWorkerProcess, stopWorkerProcesses, waitForHttp, type WorkerName } from "../scripts/lib/workers";
import type { RunningProxy } from "../scripts/lib/ws-proxy";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 300);
const WARMUP = 30;
const log = (m: string) => console.log(`[bench] ${m}`);
/** `--only edge`: the edge bench alone (bench/edge.ts), to iterate on it. */
const onlyAt = process.argv.indexOf("--only");
const ONLY = onlyAt >= 0 ? process.argv[onlyAt + 1] : undefined;
if (ONLY !== undefined && ONLY !== "edge") throw new Error(`--only takes "edge", got "${ONLY}"`);

function write(file: string, data: object): void {
  const out = path.join(ROOT, "bench", "results", file);
  fs.writeFileSync(out, `${JSON.stringify(data, null, 2)}\n`);
  log(`Written to ${path.relative(ROOT, out)}`);
}

async function runEdge(proxy: RunningProxy, appUrl: string, cookie: string): Promise<void> {
  const edgeResult = await edgeBench({ proxy, appUrl, cookie, log });
  write("edge.json", edgeResult);
  console.log(edgeTable(edgeResult));
}

async function main(): Promise<void> {
  const db = await prepareDatabase({ stack: { ...DEV_STACK, database: "commerce_bench" }, proxyPort: 0, seed: true, allowRemote: false, log });
  const proxy = db.proxy!;
  const children: ChildProcess[] = [];
  try {
    for (const [name, port] of Object.entries(PORTS) as [WorkerName, number][]) {
      // BENCH_WORKER_LOGS=1 prints the Workers' own lines (warnings and errors), to find why an answer failed.
      const onLine = process.env.BENCH_WORKER_LOGS === "1" ? (line: string) => console.log(`[${name}] ${line}`) : undefined;
      children.push(startWorkerProcess({ name, port, inspectorPort: port + 1000, db, logLevel: "warn", workerPort: PORTS.worker!, ...(onLine ? { onLine } : {}) }));
    }
    for (const t of targets) {
      const probe = t.method === "POST" ? t.url.replace(/\/api\/rpc\/.*$/, "/login") : t.url;
      if (!(await waitForHttp(probe, 120_000))) throw new Error(`${t.name} did not come up`);
    }
    const cookie = await signIn();
    if (ONLY === "edge") return await runEdge(proxy, db.appUrl, cookie);
    const admin = targets.find((t) => t.name === "adminProductsList")!;
    admin.headers = { ...admin.headers, cookie };
    observed.tokens = await createTokens(cookie, TOKEN_POOL);
    log(`Warming up (${WARMUP} requests each)…`);
    for (let i = 0; i < WARMUP; i++) for (const t of targets) await hit(t);

    // Latency: interleaved, one request at a time, so both see the same machine state.
    observed.limiterMs.length = 0;
    log(`Measuring latency (${ROUNDS} rounds, interleaved)…`);
    const samples: Record<string, number[]> = Object.fromEntries(targets.map((t) => [t.name, []]));
    for (let i = 0; i < ROUNDS; i++) for (const t of targets) samples[t.name]!.push(await hit(t));
    const latency = Object.fromEntries(targets.map((t) => [t.name, summarize(samples[t.name]!)]));

    // Round trips: per target, on a quiet proxy; on the answer's path and after it from each request's trace.
    const roundTrips: Record<string, { turnsPerRequest: number; answerPath: number; afterAnswer: number; httpQueriesPerRequest: number; connectionsPerRequest: number }> = {};
    const N = 50;
    for (const t of targets) {
      proxy.resetStats();
      const ids = Array.from({ length: N }, (_, i) => `rt-${t.name}-${i}`);
      for (const id of ids) await hit(t, id);
      await new Promise((r) => setTimeout(r, 200 + 10 * proxy.rttMs)); // the work after the answers, and closing connections
      const s = proxy.stats();
      const views = ids.map((id) => proxy.trace(id));
      const mean = (f: (v: (typeof views)[number]) => number) => views.reduce((sum, v) => sum + f(v), 0) / N;
      roundTrips[t.name] = {
        turnsPerRequest: s.turns / N,
        answerPath: mean((v) => v.turns),
        afterAnswer: mean((v) => v.after.turns),
        httpQueriesPerRequest: s.httpQueries / N,
        connectionsPerRequest: s.connections / N,
      };
    }
    // Connections per 1 000 warm storefront requests (the product page from the edge cache).
    const warm = targets.find((t) => t.name === "storefrontProduct")!;
    proxy.resetStats();
    const warmStoreMisses = observed.hostCache.miss;
    for (let i = 0; i < 1000; i++) await hit(warm);
    await new Promise((r) => setTimeout(r, 200));
    const warmStats = proxy.stats();
    const health = roundTrips.health!.turnsPerRequest;
    const trips = (name: string) => ({ onAnswerPath: roundTrips[name]!.answerPath, afterAnswer: roundTrips[name]!.afterAnswer });
    const result = {
      benchmark: "foundation",
      at: new Date().toISOString(),
      machine: { cpus: os.cpus().length, node: process.version, platform: `${os.platform()} ${os.arch()}` },
      rounds: ROUNDS,
      rttMs: proxy.rttMs,
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
        goal: "warm p50 <= 2x the floor, 0 connections and 0 round trips when warm",
        connectionsPer1000Warm: warmStats.connections,
        roundTripsPer1000Warm: warmStats.turns,
        hostLookupsDuringThem: observed.hostCache.miss - warmStoreMisses,
        coldRoundTrips: roundTrips.storefrontProductCold!.answerPath,
        edgeVerdicts: observed.edgeCache,
        note: "GET /products/cotton-kurta on demo.localhost. Warm: the host and the store's facts from the HOSTS KV namespace, the page from the Cache API (keyed by store, catalogue version, host, path). Cold: the same page with a query the cache has never seen, rendered by one read-only store unit sent as one request over the HTTP path (the opening that sets the store, the product and the primary hostname, in one transaction: one round trip, no connection) and stored. The floor is /-s/x, refused by the first path rule with no I/O. The held entries are read from the database again once a minute, so a long warm run may show a round trip or two.",
      },
      hostCache: {
        ...observed.hostCache,
        note: "Storefront requests of the whole run (warm-up, latency and round-trip rounds) for one host: the HOSTS KV entry holds 60 s, so the privileged lookup runs about once a minute however many requests arrive.",
      },
      databaseRoundTrips: {
        perRequest: roundTrips,
        health,
        note: "Counted at the local proxy: WebSocket turns plus HTTP queries (a batch is one). turnsPerRequest is everything the proxy saw; answerPath and afterAnswer come from each request's trace (x-commerce-trace), the answer's path and the work after the answer (waitUntil). Every path here goes over Neon's HTTP path: one request a unit, no connection to set up; /health's select 1 too.",
      },
    };
    const adminResult = {
      benchmark: "admin",
      at: result.at,
      machine: result.machine,
      rounds: ROUNDS,
      rttMs: proxy.rttMs,
      latencyMs: { health: latency.health, adminProductsList: latency.adminProductsList },
      ratios: {
        productsListVsHealthP50: vsHealth(latency, "adminProductsList", "p50"),
        productsListVsHealthP95: vsHealth(latency, "adminProductsList", "p95"),
      },
      databaseRoundTrips: {
        productsList: trips("adminProductsList"),
        note: "products.list over /api/rpc: one read-only unit over the HTTP path, one round trip: the session's opening (unit.open_session: the session by its cookie's hash, its active store, the member and the permission check, and whether the session is due a refresh) and the page query with its total, in one transaction. A session due a refresh is touched after the answer.",
      },
    };
    const apiResult = {
      benchmark: "token-api",
      at: result.at,
      machine: result.machine,
      rounds: ROUNDS,
      rttMs: proxy.rttMs,
      latencyMs: { health: latency.health, tokenProductsList: latency.tokenProductsList, limiterDecision: summarize(observed.limiterMs) },
      ratios: {
        tokenProductsListVsHealthP50: vsHealth(latency, "tokenProductsList", "p50"),
        tokenProductsListVsHealthP95: vsHealth(latency, "tokenProductsList", "p95"),
        tokenProductsListVsFloorP50: vsHealth(latency, "tokenProductsList", "p50", "floor"),
        healthVsFloorP50: vsHealth(latency, "health", "p50", "floor"),
      },
      databaseRoundTrips: {
        perRequestTotal: roundTrips.tokenProductsList!.turnsPerRequest,
        ...trips("tokenProductsList"),
        note: "On the answer's path: the per-grant limiter (a Durable Object call keyed on the token's hash, before any database work), then one read-only unit over the HTTP path, one round trip: the token's opening (unit.open_token: the store by the token's hash, the grant, its member and store, the check) and the page query. After the answer (waitUntil): the read-activity fold, the store's opening and the upsert that also marks the grant used, in one read-write request: one round trip.",
      },
    };
    const mcpResult = {
      benchmark: "mcp",
      at: result.at,
      machine: result.machine,
      rounds: ROUNDS,
      rttMs: proxy.rttMs,
      latencyMs: { health: latency.health, toolsList: latency.mcpToolsList, toolsCallRead: latency.mcpToolsCallRead },
      ratios: {
        toolsListVsHealthP50: vsHealth(latency, "mcpToolsList", "p50"),
        toolsCallReadVsHealthP50: vsHealth(latency, "mcpToolsCallRead", "p50"),
      },
      databaseRoundTrips: {
        toolsList: trips("mcpToolsList"),
        toolsCallRead: trips("mcpToolsCallRead"),
        note: "Bearer: a created token (the OAuth path adds one KV read at the provider). tools/list: one round trip, the opening that resolves the caller (grant, role, store and its AI-client settings). A read tools/call runs its tool in the same round trip as the opening (the first read call of the POST goes with it), then after the answer the read-activity fold (one round trip).",
      },
    };
    // Written as they are ready; a later part that fails is reported, and the parts after it still run.
    for (const [file, data] of [["foundation.json", result], ["admin.json", adminResult], ["token-api.json", apiResult], ["mcp.json", mcpResult]] as const) write(file, data);
    const failed: string[] = [];
    const part = async <T extends object>(file: string, run: () => Promise<T>): Promise<T | undefined> => {
      try {
        const data = await run();
        write(file, data);
        return data;
      } catch (e) {
        failed.push(file);
        console.error(`[bench] ${file} not written: ${e instanceof Error ? e.stack : String(e)}`);
        return undefined;
      }
    };
    log("Bursts: 200 concurrent calls for one grant, then 400 over 4 grants…");
    const burstResult = await part("burst.json", async () => ({
      benchmark: "burst",
      at: result.at,
      machine: result.machine,
      rttMs: proxy.rttMs,
      oneGrant: await burst(cookie, proxy, 200, 1),
      fourGrants: await burst(cookie, proxy, 400, 4),
      note: "POST /api/v1/products/list, all requests in flight at once. The per-grant limiter (120 a rolling minute) decides before any database work, so a refused call costs the database nothing. An answered call is one HTTP round trip and its activity fold one more after the answer; the HTTP path opens no WebSocket, and the proxy reuses its pooled Postgres connections (upstreamOpened: new ones the burst needed). The proxy queues requests in front of a bounded number of Postgres connections, as Neon's pooler does.",
    }));
    const checkoutResult = await part("checkout.json", async () => ({
      benchmark: "checkout",
      at: result.at,
      machine: result.machine,
      rttMs: proxy.rttMs,
      ...(await checkoutBench(db, latency.storefrontFloor!.p50, log)),
    }));
    // The worker's every-minute cron arms its alarm loop: the 5 s relay (wrangler dev fires no crons).
    const stopCrons = fireCronsLocally(`http://127.0.0.1:${PORTS.worker}`, ["* * * * *"]);
    const relayResult = await part("relay.json", async () => ({ benchmark: "relay", at: result.at, machine: result.machine, rttMs: proxy.rttMs, ...(await relayBench(db.ownerUrl, log)) }));
    stopCrons();
    console.log(JSON.stringify({ admin: adminResult.ratios, tokenApi: apiResult.ratios, mcp: mcpResult, burst: burstResult, checkout: checkoutResult, relay: relayResult }, null, 2));
    // Last: it sets the proxy's distance itself (then puts it back), and its orders' events would join the relay's backlog.
    await runEdge(proxy, db.appUrl, cookie);
    if (failed.length) throw new Error(`Not written, see above: ${failed.join(", ")}`);
  } finally {
    await stopWorkerProcesses(children);
    await db.release();
  }
}

main().catch((e: unknown) => {
  console.error(`[bench] ${e instanceof Error ? e.stack : String(e)}`);
  process.exit(1);
});
