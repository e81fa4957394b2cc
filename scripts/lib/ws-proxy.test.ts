import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { TraceBook, traceOf } from "./proxy-traces";
import { proxyLimitsFromEnv, proxyRttMsFromEnv, startWsProxy, type ProxyOptions, type RunningProxy } from "./ws-proxy";

/** A loopback TCP server standing in for Postgres: it echoes, and records the first message of each connection in order. */
async function echoServer() {
  const arrivals: string[] = [];
  const server = net.createServer((socket) => {
    let first = true;
    socket.on("data", (chunk) => {
      if (first) arrivals.push(chunk.toString());
      first = false;
      socket.write(chunk);
    });
    socket.on("error", () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return { port, arrivals, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

async function waitFor(check: () => boolean, what: string, ms = 3_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

interface TestClient {
  ws: WebSocket;
  /** What the server sent back, in order (the echo server first returns the client's id). */
  received: string[];
  closed: Promise<{ code: number; reason: string }>;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(limits: ProxyOptions) {
  const target = await echoServer();
  const proxy = await startWsProxy(0, { ...limits, login: "bytes" });
  cleanups.push(target.close, proxy.close);
  /** Opens a client and has it speak at once (as the driver does), so a queued client has bytes waiting. */
  const connect = async (id: string | Buffer): Promise<TestClient> => {
    const ws = new WebSocket(`ws://127.0.0.1:${proxy.port}/v2?address=127.0.0.1:${target.port}`);
    const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on("close", (code, reason) => resolve({ code, reason: reason.toString() })));
    const received: string[] = [];
    ws.on("message", (data: Buffer) => received.push(data.toString()));
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    ws.send(id);
    return { ws, received, closed };
  };
  return { target, proxy, connect };
}

const stat = (proxy: RunningProxy) => proxy.stats();

/** Resolves once everything the client received, joined, is `text`. */
function received(client: TestClient, text: string): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (client.received.join("") !== text) return;
      client.ws.off("message", check);
      resolve();
    };
    client.ws.on("message", check);
    check();
  });
}

/** A StartupMessage (protocol 3.0) with these parameters, as a driver sends it. */
function startupMessage(params: Record<string, string>): Buffer {
  const body = Buffer.from(`${Object.entries(params).map(([k, v]) => `${k}\0${v}\0`).join("")}\0`);
  const head = Buffer.alloc(8);
  head.writeInt32BE(body.length + 8, 0);
  head.writeInt32BE(196608, 4);
  return Buffer.concat([head, body]);
}

describe("ws proxy pool", () => {
  it("keeps at most maxUpstream connections and lets queued clients through in order as others close", async () => {
    const { target, proxy, connect } = await setup({ maxUpstream: 2 });
    const clients: TestClient[] = [];
    for (const id of ["c0", "c1", "c2", "c3", "c4"]) clients.push(await connect(id));
    await waitFor(() => target.arrivals.length === 2 && stat(proxy).queued === 3, "2 active, 3 queued");
    expect(stat(proxy)).toMatchObject({ connections: 5, opened: 2, active: 2, queued: 3 });
    expect(target.arrivals).toEqual(["c0", "c1"]);

    for (let i = 0; i < 3; i++) {
      clients[i]!.ws.close();
      await waitFor(() => target.arrivals.length === 3 + i, `client c${i + 2} to get through`);
      expect(stat(proxy).active).toBe(2);
      expect(stat(proxy).queued).toBe(2 - i);
    }
    expect(target.arrivals).toEqual(["c0", "c1", "c2", "c3", "c4"]);

    // A client that got through after waiting speaks to the server normally.
    clients[4]!.ws.send("hello");
    await waitFor(() => clients[4]!.received.join("") === "c4hello", "the echo");

    for (const c of clients.slice(3)) c.ws.close();
    await waitFor(() => stat(proxy).active === 0, "all slots free");
    const s = stat(proxy);
    expect(s).toMatchObject({ opened: 5, active: 0, queued: 0, peakActive: 2, peakQueued: 3, abandoned: 0, timedOut: 0 });
    expect(s.waitMsMax).toBeGreaterThan(0);
    expect(s.waitMsTotal).toBeGreaterThanOrEqual(s.waitMsMax);
  });

  it("drops a queued client that goes away, so it never takes a slot", async () => {
    const { target, proxy, connect } = await setup({ maxUpstream: 1 });
    const c0 = await connect("c0");
    const c1 = await connect("c1");
    const c2 = await connect("c2");
    await waitFor(() => stat(proxy).queued === 2, "two queued");
    c1.ws.close();
    await waitFor(() => stat(proxy).queued === 1, "c1 to leave the queue");
    expect(stat(proxy).abandoned).toBe(1);

    c0.ws.close();
    await waitFor(() => target.arrivals.length === 2, "the next client to get through");
    expect(target.arrivals).toEqual(["c0", "c2"]);
    expect(stat(proxy)).toMatchObject({ opened: 2, active: 1, queued: 0 });
    c2.ws.close();
  });

  it("closes a client that waits longer than queueTimeoutMs (1013), and one that finds the queue full", async () => {
    const { target, proxy, connect } = await setup({ maxUpstream: 1, maxQueue: 1, queueTimeoutMs: 150 });
    const c0 = await connect("c0");
    const started = Date.now();
    const c1 = await connect("c1");
    const c2 = await connect("c2");
    expect(await c2.closed).toEqual({ code: 1013, reason: "too many clients waiting" });
    expect(await c1.closed).toEqual({ code: 1013, reason: "no database connection came free in time" });
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(stat(proxy)).toMatchObject({ connections: 3, opened: 1, active: 1, queued: 0, refused: 1, timedOut: 1, abandoned: 0 });
    expect(target.arrivals).toEqual(["c0"]);

    // The client holding the slot is untouched.
    c0.ws.send("still here");
    await waitFor(() => c0.received.join("") === "c0still here", "the echo");
    c0.ws.close();
  });

  it("frees the slot when the server closes, and reset zeroes counters and peaks but not what is open", async () => {
    const { target, proxy, connect } = await setup({ maxUpstream: 1 });
    const c0 = await connect("c0");
    const c1 = await connect("c1");
    await waitFor(() => stat(proxy).queued === 1, "c1 queued");
    proxy.resetStats();
    expect(stat(proxy)).toMatchObject({ connections: 0, opened: 0, turns: 0, active: 1, queued: 1, peakActive: 1, peakQueued: 1 });

    c0.ws.close();
    await waitFor(() => target.arrivals.length === 2, "c1 to get through");
    expect(stat(proxy)).toMatchObject({ opened: 1, active: 1, queued: 0 });
    c1.ws.close();
    await waitFor(() => stat(proxy).active === 0, "slot free");
  });

  it("serves /stats and POST /stats/reset over http", async () => {
    const { proxy, connect } = await setup({ maxUpstream: 3 });
    const c0 = await connect("c0");
    await waitFor(() => stat(proxy).opened === 1, "one upstream");
    const base = `http://127.0.0.1:${proxy.port}`;
    const before = (await (await fetch(`${base}/stats`)).json()) as Record<string, unknown>;
    expect(before).toMatchObject({ connections: 1, opened: 1, active: 1, queued: 0, peakActive: 1, turns: 1, wsTurns: 1, httpQueries: 0, rttMs: 0 });
    expect(before["limits"]).toEqual({ maxUpstream: 3, maxQueue: 2000, queueTimeoutMs: 120_000 });
    expect((await fetch(`${base}/stats/reset`, { method: "POST" })).status).toBe(204);
    expect(await (await fetch(`${base}/stats`)).json()).toMatchObject({ connections: 0, opened: 0, active: 1, peakActive: 1 });
    c0.ws.close();
  });
});

describe("distance and traces on the WebSocket path", () => {
  it("holds each turn rttMs before it reaches the server, later chunks of the turn queued behind it in order", async () => {
    const { target, proxy, connect } = await setup({ rttMs: 40 });
    let since = performance.now();
    const c0 = await connect("c0");
    await received(c0, "c0");
    expect(performance.now() - since).toBeGreaterThanOrEqual(40);

    since = performance.now();
    for (const chunk of ["a", "b", "c"]) c0.ws.send(chunk);
    await received(c0, "c0abc");
    expect(performance.now() - since).toBeGreaterThanOrEqual(40);
    expect(target.arrivals).toEqual(["c0"]);
    expect(stat(proxy)).toMatchObject({ wsTurns: 2, turns: 2, rttMs: 40 });
    c0.ws.close();
  });

  it("setRttMs changes the distance of a running proxy from the next turn on; a turn's later chunks stay in order", async () => {
    const { proxy, connect } = await setup({});
    const c0 = await connect("c0");
    await received(c0, "c0");
    expect(() => proxy.setRttMs(-1)).toThrow(/rttMs must be a whole number of at least 0/);
    proxy.setRttMs(40);
    expect(proxy.rttMs).toBe(40);
    const since = performance.now();
    c0.ws.send("a");
    await received(c0, "c0a");
    expect(performance.now() - since).toBeGreaterThanOrEqual(40);
    // Dropped to 0 while a chunk of the turn is held: the next chunk waits behind it, not past it.
    c0.ws.send("b");
    await new Promise((r) => setTimeout(r, 5));
    proxy.setRttMs(0);
    c0.ws.send("c");
    await received(c0, "c0abc");
    expect(stat(proxy)).toMatchObject({ wsTurns: 3, rttMs: 0 });
    c0.ws.close();
  });

  it("counts a client's turns and its connection for the trace its StartupMessage's application_name names", async () => {
    const { proxy, connect } = await setup({});
    const answer = await connect(startupMessage({ user: "app_user", database: "commerce", application_name: "t:trace-ws-1" }));
    await waitFor(() => answer.received.length > 0, "the echo of the startup message");
    answer.ws.send("next turn");
    await waitFor(() => answer.received.join("").endsWith("next turn"), "the echo");
    const after = await connect(startupMessage({ user: "app_user", application_name: "t:trace-ws-1:after" }));
    await waitFor(() => after.received.length > 0, "the echo of the other startup message");

    expect(proxy.trace("trace-ws-1")).toEqual({
      traceId: "trace-ws-1",
      turns: 2,
      wsTurns: 2,
      httpQueries: 0,
      connections: 1,
      after: { turns: 1, wsTurns: 1, httpQueries: 0, connections: 1 },
    });
    answer.ws.close();
    after.ws.close();
  });
});

describe("TraceBook", () => {
  it("reads traces from application_name: t:<8..64 of A-Za-z0-9-> and t:<id>:after, nothing else", () => {
    expect(traceOf("t:abcd-1234")).toEqual({ id: "abcd-1234", phase: "answer" });
    expect(traceOf("t:abcd-1234:after")).toEqual({ id: "abcd-1234", phase: "after" });
    for (const name of [undefined, "", "t:short", `t:${"x".repeat(65)}`, "t:abcd_1234", "x:abcd-1234", "t:abcd-1234:later"]) {
      expect(traceOf(name)).toBeUndefined();
    }
  });

  it("keeps the most recently used traces only", () => {
    const book = new TraceBook(false, 3);
    for (const id of ["trace-01", "trace-02", "trace-03"]) book.count({ id, phase: "answer" }, "httpQueries");
    book.count({ id: "trace-01", phase: "after" }, "wsTurns");
    book.count({ id: "trace-04", phase: "answer" }, "connections");
    expect(book.view("trace-02").httpQueries).toBe(0); // dropped: the least recently used
    expect(book.view("trace-01")).toMatchObject({ turns: 1, httpQueries: 1, after: { turns: 1, wsTurns: 1 } });
    expect(book.view("trace-04")).toMatchObject({ turns: 0, connections: 1 });
    expect(book.view("trace-01", true).statements).toBeNull(); // not capturing
  });
});

describe("proxyLimitsFromEnv", () => {
  it("reads the COMMERCE_PROXY_* variables and leaves unset ones to the defaults", () => {
    expect(proxyLimitsFromEnv({})).toEqual({});
    expect(
      proxyLimitsFromEnv({ COMMERCE_PROXY_MAX_UPSTREAM: "8", COMMERCE_PROXY_MAX_QUEUE: "0", COMMERCE_PROXY_QUEUE_TIMEOUT_MS: "500" }),
    ).toEqual({ maxUpstream: 8, maxQueue: 0, queueTimeoutMs: 500 });
  });

  it("refuses values that are not whole numbers in range, naming the variable", () => {
    expect(() => proxyLimitsFromEnv({ COMMERCE_PROXY_MAX_UPSTREAM: "0" })).toThrow(/COMMERCE_PROXY_MAX_UPSTREAM must be a whole number of at least 1/);
    expect(() => proxyLimitsFromEnv({ COMMERCE_PROXY_QUEUE_TIMEOUT_MS: "1.5" })).toThrow(/COMMERCE_PROXY_QUEUE_TIMEOUT_MS/);
    expect(() => proxyLimitsFromEnv({ COMMERCE_PROXY_MAX_QUEUE: "lots" })).toThrow(/COMMERCE_PROXY_MAX_QUEUE/);
  });

  it("reads COMMERCE_DB_RTT_MS, a whole number of milliseconds from 0", () => {
    expect(proxyRttMsFromEnv({})).toBeUndefined();
    expect(proxyRttMsFromEnv({ COMMERCE_DB_RTT_MS: "0" })).toBe(0);
    expect(proxyRttMsFromEnv({ COMMERCE_DB_RTT_MS: "35" })).toBe(35);
    for (const bad of ["-1", "2.5", "far"]) {
      expect(() => proxyRttMsFromEnv({ COMMERCE_DB_RTT_MS: bad })).toThrow(/COMMERCE_DB_RTT_MS must be a whole number of at least 0/);
    }
  });
});
