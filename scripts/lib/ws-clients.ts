import net from "node:net";
import type { WebSocket } from "ws";
import type { Distance } from "./neon-http";
import { LoginRelay, startupParameters } from "./pg-login";
import type { TurnedAway, UpstreamSlots } from "./proxy-slots";
import { traceOf, type TraceBook, type TraceRef } from "./proxy-traces";

/**
 * The WebSocket side of the proxy: each client gets an upstream TCP connection once the shared slots
 * (./proxy-slots.ts) grant one, its bytes go through the login relay (./pg-login.ts), and its turns are
 * counted (and held back for the distance, rttMs) as they arrive.
 */

export type Target = { host: string; port: number };

/** The counters this side keeps, inside the proxy's stats object. */
export interface WsCounters {
  /** WebSocket clients accepted. */
  connections: number;
  /** Round trips: wsTurns plus the HTTP path's queries. */
  turns: number;
  wsTurns: number;
  /** WebSocket bytes. */
  bytesUp: number;
  bytesDown: number;
  /** Upstream (Postgres) connections ever opened, both paths. */
  opened: number;
}

export interface WsSide {
  slots: UpstreamSlots;
  counters: WsCounters;
  traces: TraceBook;
  /** Read at each turn: a change applies from the next turn on. */
  distance: Distance;
  login: "neon" | "bytes";
  /** Upstream sockets open now, for the proxy's close(). */
  sockets: Set<net.Socket>;
}

/** What carries bytes between a client and its upstream connection. */
type Relay = Pick<LoginRelay, "fromClient" | "fromServer">;

interface Client {
  ws: WebSocket;
  target: Target;
  /** Client bytes that reached the upstream side before the connection was open. */
  pending: Buffer[];
  state: "queued" | "upstream" | "gone";
  /** Whether the server spoke last, so the client's next message is a new turn. */
  serverSpoke: boolean;
  withdraw?: () => boolean;
  tcp?: net.Socket;
  relay?: Relay;
  /** The client's first bytes until its StartupMessage (and so its trace) has been read. */
  startup?: Buffer;
  trace?: TraceRef;
  wsTurns: number;
  /** When (performance.now()) the current turn may reach Postgres. */
  turnAt: number;
  /** Chunks held back for the distance, in order, each with the time its turn may go on. */
  held: { bytes: Buffer; at: number }[];
  holdTimer?: NodeJS.Timeout;
}

/** 1013 "Try Again Later": the close code for a client the pool cannot take. */
const TRY_AGAIN_LATER = 1013;

/** Answers the function that takes each accepted WebSocket. */
export function webSocketClients({ slots, counters, traces, distance, login, sockets }: WsSide): (ws: WebSocket, target: Target) => void {
  function admit(ws: WebSocket, target: Target) {
    counters.connections++;
    const client: Client = { ws, target, pending: [], state: "queued", serverSpoke: true, startup: Buffer.alloc(0), wsTurns: 0, turnAt: 0, held: [] };
    ws.on("message", (data: Buffer) => {
      if (client.state === "gone") return;
      if (client.startup) readStartup(client, data);
      if (client.serverSpoke) newTurn(client);
      client.serverSpoke = false;
      counters.bytesUp += data.length;
      // Nothing held (the distance may have just dropped to 0 behind held chunks): straight through.
      if (distance.ms === 0 && client.held.length === 0) return deliver(client, data);
      client.held.push({ bytes: data, at: client.turnAt });
      if (!client.holdTimer) releaseHeld(client);
    });
    ws.on("close", () => leave(client));
    ws.on("error", () => leave(client));
    client.withdraw = slots.request({ granted: () => openUpstream(client), turnedAway: (why) => turnAway(client, why) });
  }

  /** Reads the trace from the StartupMessage's application_name; turns taken before count once it is known. */
  function readStartup(client: Client, data: Buffer) {
    const bytes = Buffer.concat([client.startup!, data]);
    const params = startupParameters(bytes);
    client.startup = params === "incomplete" && bytes.length < 20_000 ? bytes : undefined;
    const trace = params && params !== "incomplete" ? traceOf(params["application_name"]) : undefined;
    if (!trace) return;
    client.trace = trace;
    traces.count(trace, "connections");
    if (client.wsTurns > 0) traces.count(trace, "wsTurns", client.wsTurns);
  }

  function newTurn(client: Client) {
    counters.turns++;
    counters.wsTurns++;
    client.wsTurns++;
    if (client.trace) traces.count(client.trace, "wsTurns");
    client.turnAt = performance.now() + distance.ms;
  }

  /** Passes on the held chunks whose turn may go on now (by the monotonic clock), and waits for the next. */
  function releaseHeld(client: Client) {
    client.holdTimer = undefined;
    const now = performance.now();
    while (client.held.length > 0 && client.held[0]!.at <= now) deliver(client, client.held.shift()!.bytes);
    const next = client.held[0];
    if (next && client.state !== "gone") client.holdTimer = setTimeout(() => releaseHeld(client), Math.ceil(next.at - now));
  }

  function deliver(client: Client, bytes: Buffer) {
    if (client.state === "gone") return;
    if (client.relay && !client.tcp?.connecting) client.relay.fromClient(bytes);
    else client.pending.push(bytes);
  }

  function openUpstream(client: Client) {
    counters.opened++;
    client.state = "upstream";
    const tcp = net.connect(client.target.port, client.target.host);
    const toClient = (bytes: Buffer) => {
      if (client.ws.readyState === client.ws.OPEN) client.ws.send(bytes, { binary: true });
    };
    const relay: Relay =
      login === "bytes"
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
      counters.bytesDown += chunk.length;
      relay.fromServer(chunk);
    });
    tcp.on("error", () => tcp.destroy());
    // 'close' follows every end of the socket (error, either side closing): the slot frees once.
    tcp.on("close", () => {
      sockets.delete(tcp);
      leave(client);
      slots.release();
    });
  }

  /** The client is done (either socket closed): frees what it holds. */
  function leave(client: Client) {
    if (client.state === "gone") return;
    if (client.state === "queued") client.withdraw?.();
    client.state = "gone";
    clearTimeout(client.holdTimer);
    client.tcp?.destroy();
    if (client.ws.readyState === client.ws.OPEN) client.ws.close();
  }

  function turnAway(client: Client, why: TurnedAway) {
    client.state = "gone";
    clearTimeout(client.holdTimer);
    const { ws } = client;
    if (ws.readyState !== ws.OPEN) return;
    if (why === "closing") ws.terminate();
    else ws.close(TRY_AGAIN_LATER, why === "refused" ? "too many clients waiting" : "no database connection came free in time");
  }

  return admit;
}
