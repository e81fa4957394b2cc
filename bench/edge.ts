/**
 * The edge bench (bench/results/edge.json): for each request path of bench/edge-paths.ts, the database
 * round trips on the answer's path and after it, exact, from the proxy's trace of every measured request
 * (`x-commerce-trace`, scripts/lib/proxy-traces.ts), and its p50/p95 at two distances to the database
 * (0 and 30 ms a round trip, set on the running proxy with setRttMs, so the same Workers serve both),
 * with each Worker's bare answer measured in the same rounds and every p50 as a multiple of its floor.
 *
 * Paths are interleaved, one request at a time, and the two distances alternate round by round, so all
 * see the same machine state; a few rounds at each distance warm up first. Carts for checkout are made
 * beforehand. A path whose answer is not the one expected 3 times is dropped and reported under `failures`.
 *
 *   npm run bench                       everything, edge.json among the results
 *   npm run bench -- --only edge        the edge bench alone (BENCH_EDGE_ROUNDS, default 100 a distance)
 */
import os from "node:os";
import pg from "pg";
import { deriveLocalSecret } from "#shared/payments/local-protocol";
import type { TraceCounts, TraceView } from "../scripts/lib/proxy-traces";
import type { RunningProxy } from "../scripts/lib/ws-proxy";
import { post } from "./checkout";
import { edgePaths, titleFor, type EdgePath, type EdgeSetup } from "./edge-paths";
import { createTokens, PORTS, send } from "./http";
import { summarize, type Summary } from "./targets";

export const EDGE_RTTS = [0, 30] as const;
const ROUNDS = Number(process.env.BENCH_EDGE_ROUNDS ?? 100);
/** Rounds at each distance before measuring. */
const WARMUP = 5;
const HOST = "demo.localhost";
/** scripts/lib/workers.ts gives the bench Workers this LOCAL_GATEWAY_SECRET. */
const GATEWAY_ROOT_SECRET = "local-gateway-development-secret";
const round2 = (n: number) => Math.round(n * 100) / 100;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The demo store, a variant with plenty of stock (so no checkout is refused) and a product to rename. */
async function storeFacts(appUrl: string) {
  const client = new pg.Client({ connectionString: appUrl });
  await client.connect();
  try {
    const storeId = (await client.query<{ id: string | null }>("select privileged.store_id_by_hostname($1) as id", [HOST])).rows[0]?.id;
    if (!storeId) throw new Error(`no store serves ${HOST}`);
    await client.query("begin");
    await client.query("select set_config('app.store_id', $1, true)", [storeId]);
    const variant = await client.query<{ id: string }>(
      `select v.id from product_variant v join product p on p.store_id = v.store_id and p.id = v.product_id
       where p.handle = 'cotton-kurta' and not v.preorder order by v.position limit 1`,
    );
    const variantId = variant.rows[0]!.id;
    await client.query(
      "update inventory_level il set on_hand = 10000000 from location l where l.store_id = il.store_id and l.id = il.location_id and l.sells_online and il.variant_id = $1",
      [variantId],
    );
    const product = (await client.query<{ id: string; title: string }>("select id, title from product where handle <> 'cotton-kurta' order by handle limit 1")).rows[0]!;
    await client.query("commit");
    return { storeId, variantId, product: { id: product.id, title: product.title.replace(/ \(edge\)$/, "") } };
  } finally {
    await client.end();
  }
}

async function newCart(variantId: string): Promise<string> {
  const added = await post("/api/cart/lines", { variantId, quantity: 1 });
  if (added.status !== 200 || !added.cookie) throw new Error(`cart add: ${added.status} ${added.body.slice(0, 200)}`);
  return added.cookie;
}

/** One request of `p`, traced as `trace`: its latency, and the edge cache's verdict when it gave one. */
async function one(p: EdgePath, n: number, trace: string): Promise<{ ms: number; edge?: string }> {
  const r = await p.make(n);
  const headers = { ...r.headers, "x-commerce-trace": trace };
  const started = performance.now();
  const answer = await send(r.url, { method: r.method ?? "GET", headers, ...(r.body ? { body: r.body } : {}) });
  const ms = performance.now() - started;
  if (!p.expect(answer.status, answer.body)) throw new Error(`${p.name}: unexpected answer ${answer.status}: ${textOf(answer.body)}`);
  p.answered?.(answer.body);
  const edge = /edge;desc="(\w+)"/.exec(String(answer.headers["server-timing"] ?? ""))?.[1];
  return { ms, ...(edge ? { edge } : {}) };
}

/** An answer's body as one line of text (an HTML page without its markup), cut short. */
const textOf = (body: string) =>
  body.replace(/<(style|script)[\s\S]*?<\/\1>/g, "").replace(/<[^>]+>/g, " ").replace(/\s+/g, " ").trim().slice(0, 400);

/** A path that fails this many times is dropped from the run (and reported with its failures). */
const MAX_FAILURES = 3;

const COUNTS = ["turns", "httpQueries", "wsTurns", "connections"] as const;
const countsOf = (v: TraceCounts): TraceCounts => Object.fromEntries(COUNTS.map((k) => [k, v[k]])) as unknown as TraceCounts;

type Traced = { id: string; view: TraceView };

/** The traces of a path's measured requests: the usual counts, whether every request had them, and the others. */
function tally(traced: Traced[]) {
  const keyOf = (v: TraceView) => JSON.stringify([countsOf(v), countsOf(v.after)]);
  const seen = new Map<string, Traced[]>();
  for (const t of traced) seen.set(keyOf(t.view), [...(seen.get(keyOf(t.view)) ?? []), t]);
  const [mode, ...others] = [...seen.values()].sort((a, b) => b.length - a.length);
  const view = mode![0]!.view;
  const unusual = others.flat().map(({ id, view: v }) => `${id}: ${v.turns} on the answer's path, ${v.after.turns} after`);
  return {
    answer: countsOf(view),
    after: countsOf(view.after),
    sameForEveryRequest: seen.size === 1,
    ...(unusual.length ? { otherRequests: unusual.slice(0, 10) } : {}),
    traced: traced.length,
  };
}

export async function edgeBench(o: { proxy: RunningProxy; appUrl: string; cookie: string; log: (m: string) => void }) {
  const { proxy, log } = o;
  const startRtt = proxy.rttMs;
  proxy.setRttMs(EDGE_RTTS[0]);
  try {
    const facts = await storeFacts(o.appUrl);
    const checkouts = (WARMUP + ROUNDS) * EDGE_RTTS.length;
    log(`Edge: ${checkouts} carts for checkout and tokens, beforehand…`);
    const setup: EdgeSetup = {
      cookie: o.cookie,
      tokens: await createTokens(o.cookie, 16),
      storeId: facts.storeId,
      cartCookie: await newCart(facts.variantId),
      checkoutCarts: [],
      product: facts.product,
      gatewaySecret: await deriveLocalSecret(GATEWAY_ROOT_SECRET, facts.storeId),
    };
    for (let i = 0; i < checkouts; i++) setup.checkoutCarts.push(await newCart(facts.variantId));
    const paths = edgePaths(setup);
    const count: Record<string, number> = {};
    const samples: Record<string, Record<number, number[]>> = {};
    const traces: Record<string, Traced[]> = {};
    const measuredTraces: Record<string, string[]> = {};
    const edgeVerdicts: Record<string, Record<string, number>> = {};
    const failures: Record<string, string[]> = {};
    const gone = (name: string) => (failures[name]?.length ?? 0) >= MAX_FAILURES;
    const round = async (label: string, measured: boolean, rtt: number) => {
      for (const p of paths) {
        if (gone(p.name)) continue;
        const n = (count[p.name] = (count[p.name] ?? 0) + 1);
        const trace = `edge-${label}-${p.name}-${n}`;
        let answered;
        try {
          answered = await one(p, n, trace);
        } catch (e) {
          (failures[p.name] ??= []).push(`RTT ${rtt}, ${trace}: ${e instanceof Error ? e.message : String(e)}`);
          log(`Edge: ${failures[p.name]!.at(-1)}${gone(p.name) ? " (dropped from the run)" : ""}`);
          continue;
        }
        const { ms, edge } = answered;
        if (!measured) continue;
        (measuredTraces[p.name] ??= []).push(trace);
        ((samples[p.name] ??= {})[rtt] ??= []).push(ms);
        if (edge) (edgeVerdicts[p.name] ??= {})[edge] = (edgeVerdicts[p.name]?.[edge] ?? 0) + 1;
      }
    };
    const started = performance.now();
    const loadBefore = os.loadavg().map(round2);
    // The distances alternate round by round (each pair in turn order, then reversed), so both see the same machine state.
    const pairs = async (n: number, label: string, measured: boolean) => {
      for (let i = 0; i < n; i++) {
        for (const rtt of i % 2 === 0 ? EDGE_RTTS : [...EDGE_RTTS].reverse()) {
          proxy.setRttMs(rtt);
          await round(`${label}${rtt}`, measured, rtt);
        }
      }
    };
    log(`Edge: ${WARMUP} rounds at each distance to warm up, then ${ROUNDS} measured at each (${EDGE_RTTS.join(" and ")} ms in turn, ${paths.length} paths interleaved)…`);
    await pairs(WARMUP, "w", false);
    await pairs(ROUNDS, "m", true);
    await sleep(500 + 20 * Math.max(...EDGE_RTTS)); // the work after the last answers
    for (const [name, ids] of Object.entries(measuredTraces)) traces[name] = ids.map((id) => ({ id, view: proxy.trace(id) }));
    const wallSeconds = round2((performance.now() - started) / 1000);
    // The product's own title again, whatever the last write set.
    await send(`http://127.0.0.1:${PORTS.admin}/api/rpc/products/update`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie: o.cookie },
      body: JSON.stringify({ json: { id: facts.product.id, title: titleFor(facts.product, 1) } }),
    });
    const kept = paths.filter((p) => !gone(p.name) && EDGE_RTTS.every((rtt) => samples[p.name]?.[rtt]?.length));
    return report(kept, samples, traces, edgeVerdicts, { failures, wallSeconds, loadAverage: { before: loadBefore, after: os.loadavg().map(round2) } });
  } finally {
    proxy.setRttMs(startRtt);
  }
}

function report(
  paths: EdgePath[],
  samples: Record<string, Record<number, number[]>>,
  traces: Record<string, Traced[]>,
  edgeVerdicts: Record<string, Record<string, number>>,
  run: { failures: Record<string, string[]>; wallSeconds: number; loadAverage: { before: number[]; after: number[] } },
) {
  const latency = (name: string, rtt: number): Summary => summarize(samples[name]![rtt]!);
  const rows = paths.map((p) => {
    const trips = tally(traces[p.name] ?? []);
    const byRtt = Object.fromEntries(EDGE_RTTS.map((rtt) => [`rtt${rtt}`, latency(p.name, rtt)]));
    const vsFloor = Object.fromEntries(EDGE_RTTS.map((rtt) => [`rtt${rtt}`, round2(latency(p.name, rtt).p50 / latency(p.floor, rtt).p50)]));
    return {
      name: p.name,
      request: p.request,
      ...(p.baseline !== undefined ? { baselineTrips: p.baseline } : {}),
      trips: trips.answer.turns,
      afterTrips: trips.after.turns,
      traces: trips,
      latencyMs: byRtt,
      floor: p.floor,
      p50VsFloor: vsFloor,
      ...(edgeVerdicts[p.name] ? { edgeVerdicts: edgeVerdicts[p.name] } : {}),
      ...(p.note ? { note: p.note } : {}),
    };
  });
  return {
    benchmark: "edge",
    at: new Date().toISOString(),
    machine: { cpus: os.cpus().length, node: process.version, platform: `${os.platform()} ${os.arch()}`, loadAverage: run.loadAverage },
    rttMs: EDGE_RTTS,
    rounds: ROUNDS,
    warmupRounds: WARMUP,
    wallSeconds: run.wallSeconds,
    ...(Object.keys(run.failures).length ? { failures: run.failures } : {}),
    goal: "1 round trip for a read, at most 2 for a write, at most 3 for checkout (the gateway not counted)",
    paths: rows,
    checkoutGateway: {
      trips: 0,
      note: "The local gateway's createPayment signs the attempt's reference in the Worker (HMAC), with no network I/O, so it adds nothing to checkout's trips; a real gateway adds one HTTPS call to the provider, which is not a database round trip.",
    },
    note:
      "trips: database round trips on the answer's path (WebSocket turns plus HTTP queries, a batch being one), from the local proxy's trace of every measured request at both distances; afterTrips: the same for work after the answer (waitUntil). traces gives the full counts and, when requests differed, how often each count was seen. The floors are each Worker's bare answer with no I/O (the admin's token API path answered 405 by GET, the storefront's /-s/x refused by its first path rule), measured in the same rounds; each path's p50 is divided by its own Worker's floor: the admin's by floorApi, the storefront's by floorStorefront, the payment webhook's by floorWorker (a path no route of the worker Worker takes, 404). The distance is the proxy holding every round trip (as COMMERCE_DB_RTT_MS does), set on the running proxy before each round: the two distances alternate round by round. A storefront request now and then takes one trip more: the HOSTS KV entry of the host and the store's facts holds 60 s, and the first storefront request after it expires reads them again (otherRequests names such requests).",
  };
}

/** The table printed at the end of a run. */
export function edgeTable(result: Awaited<ReturnType<typeof edgeBench>>): string {
  const head = ["path", "before", "trips", "after", ...EDGE_RTTS.flatMap((r) => [`p50@${r}`, `p95@${r}`, `xfloor@${r}`])];
  const lines = result.paths.map((r) => [
    r.name,
    String(r.baselineTrips ?? ""),
    String(r.trips) + (r.traces.sameForEveryRequest ? "" : "*"),
    String(r.afterTrips),
    ...EDGE_RTTS.flatMap((rtt) => {
      const l = r.latencyMs[`rtt${rtt}`]!;
      return [l.p50.toFixed(1), l.p95.toFixed(1), String(r.p50VsFloor[`rtt${rtt}`])];
    }),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const fmt = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  const varied = result.paths.some((r) => !r.traces.sameForEveryRequest);
  return [fmt(head), ...lines.map(fmt), ...(varied ? ["* the count differed between requests (see traces in edge.json)"] : [])].join("\n");
}
