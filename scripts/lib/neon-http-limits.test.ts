import { Client, neon, neonConfig } from "@neondatabase/serverless";
import { afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { WebSocket } from "ws";
import { startWsProxy, type ProxyOptions, type RunningProxy } from "./ws-proxy";

// The driver's HTTP and WebSocket paths through one proxy, against the test database: they share its
// upstream limit and its distance.
let current: RunningProxy | undefined;
const started: RunningProxy[] = [];
beforeAll(() => {
  const port = () => current?.port ?? 0;
  neonConfig.fetchEndpoint = () => `http://127.0.0.1:${port()}/sql`;
  neonConfig.webSocketConstructor = WebSocket;
  neonConfig.wsProxy = (host, p) => `127.0.0.1:${port()}/v2?address=${host}:${p}`;
  Object.assign(neonConfig, { useSecureWebSocket: false, pipelineTLS: false, forceDisablePgSSL: true, pipelineConnect: false });
});
afterEach(async () => {
  for (const proxy of started.splice(0)) await proxy.close();
});

async function start(options: ProxyOptions): Promise<RunningProxy> {
  current = await startWsProxy(0, options);
  started.push(current);
  return current;
}

const url = () => inject("databaseUrl");
const failure = (p: Promise<unknown>) => p.then(() => new Error("no error"), (e: unknown) => e);

async function connected(): Promise<Client> {
  const client = new Client(url());
  await client.connect();
  return client;
}

async function waitFor(check: () => boolean, what: string, ms = 5_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe("the HTTP path shares the proxy's upstream limit with WebSocket clients", () => {
  it("queues an HTTP query behind a WebSocket client's slot, and closes an idle HTTP connection for a waiting client", async () => {
    const proxy = await start({ maxUpstream: 1, httpIdleMs: 60_000 });
    const sql = neon(url());
    const ws = await connected();
    let answered = false;
    const query = sql`select 1 as one`.then((rows) => ((answered = true), rows));
    await waitFor(() => proxy.stats().queued === 1, "the HTTP query to wait");
    expect(answered).toBe(false);
    await ws.end();
    expect(await query).toEqual([{ one: 1 }]);
    // The HTTP connection stays open, idle, holding the one slot.
    expect(proxy.stats()).toMatchObject({ opened: 2, active: 1, peakActive: 1 });

    const next = await connected();
    expect((await next.query("select 2 as two")).rows).toEqual([{ two: 2 }]);
    expect(proxy.stats()).toMatchObject({ opened: 3, active: 1, peakActive: 1, timedOut: 0, refused: 0 });
    await next.end();
  });

  it("hands a finished HTTP connection to the next HTTP query of the same login instead of opening another", async () => {
    const proxy = await start({ maxUpstream: 1 });
    const sql = neon(url());
    const answers = await Promise.all([sql`select pg_sleep(0.05), 1 as n`, sql`select 2 as n`, sql`select 3 as n`]);
    expect(answers.map((rows) => (rows as { n: number }[])[0]!.n)).toEqual([1, 2, 3]);
    expect(proxy.stats()).toMatchObject({ opened: 1, peakActive: 1, httpQueries: 3 });
  });

  it("never gives out again a connection a query left inside a transaction", async () => {
    const proxy = await start({ maxUpstream: 1 });
    const sql = neon(url());
    await sql`begin`;
    const [first, second] = [await sql`select now()::text as t`, await sql`select now()::text as t`];
    expect(first).not.toEqual(second); // each its own transaction
    expect(proxy.stats()).toMatchObject({ opened: 2, peakActive: 1 });
  });

  it("answers 53300 (too many connections) when the queue is full or the wait passes queueTimeoutMs", async () => {
    const full = await start({ maxUpstream: 1, maxQueue: 0 });
    const holder = await connected();
    const refused = await failure(neon(url())`select 1`);
    expect(refused).toMatchObject({ name: "NeonDbError", code: "53300", message: expect.stringMatching(/^too many connections/) });
    expect(full.stats()).toMatchObject({ refused: 1, active: 1 });
    await holder.end();

    const slow = await start({ maxUpstream: 1, maxQueue: 1, queueTimeoutMs: 100 });
    const holder2 = await connected();
    const since = performance.now();
    const timedOut = await failure(neon(url())`select 1`);
    expect(performance.now() - since).toBeGreaterThanOrEqual(90);
    expect(timedOut).toMatchObject({ name: "NeonDbError", code: "53300" });
    expect(slow.stats()).toMatchObject({ timedOut: 1, queued: 0 });
    // The client holding the slot is untouched.
    expect((await holder2.query("select 1 as one")).rows).toEqual([{ one: 1 }]);
    await holder2.end();
  });
});

describe("distance (rttMs)", () => {
  it("holds every HTTP answer, rows or error, for rttMs", async () => {
    const proxy = await start({ rttMs: 40 });
    const sql = neon(url());
    let since = performance.now();
    expect(await sql.transaction([sql`select 1 as a`, sql`select 2 as b`])).toEqual([[{ a: 1 }], [{ b: 2 }]]);
    expect(performance.now() - since).toBeGreaterThanOrEqual(40);
    since = performance.now();
    expect(await failure(sql`select 1/0`)).toMatchObject({ code: "22012" });
    expect(performance.now() - since).toBeGreaterThanOrEqual(40);
    expect(proxy.stats()).toMatchObject({ rttMs: 40, httpQueries: 2, turns: 2 });
  });

  it("setRttMs changes the HTTP path's distance while the proxy runs", async () => {
    const proxy = await start({});
    const sql = neon(url());
    expect(await sql`select 1 as a`).toEqual([{ a: 1 }]);
    proxy.setRttMs(40);
    const since = performance.now();
    expect(await sql`select 2 as b`).toEqual([{ b: 2 }]);
    expect(performance.now() - since).toBeGreaterThanOrEqual(40);
    expect(proxy.stats()).toMatchObject({ rttMs: 40, httpQueries: 2 });
    proxy.setRttMs(0);
    expect(proxy.rttMs).toBe(0);
    expect(proxy.stats().rttMs).toBe(0);
  });

  it("holds each WebSocket turn for rttMs before it reaches Postgres", async () => {
    const proxy = await start({ rttMs: 40 });
    const since = performance.now();
    const client = await connected();
    expect((await client.query("select 1 as one")).rows).toEqual([{ one: 1 }]);
    // Startup, password, the query: three turns, each held.
    expect(performance.now() - since).toBeGreaterThanOrEqual(3 * 40);
    await client.end();
    expect(proxy.stats()).toMatchObject({ wsTurns: 4, turns: 4 });
  });
});
