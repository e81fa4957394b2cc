import net from "node:net";
import pg from "pg";
import type { SlotWaiter, TurnedAway, UpstreamSlots } from "./proxy-slots";

/**
 * Logged-in Postgres connections kept for the HTTP path, as Neon's pooler keeps them: a query takes an
 * idle one of its login and costs no connection setup. They count against the proxy's upstream limit
 * like WebSocket clients do; an idle one is closed when anyone waits for a slot, or after `idleMs`.
 */

/** Where and as whom to log in; `key` names the pool (everything here; application_name is no part of it). */
export interface Login {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  key: string;
}

/** Every column comes back as the text Postgres sent: the driver parses it by type OID itself. */
export const RAW_TEXT: pg.CustomTypesConfig = { getTypeParser: () => (value: string) => value };

export class PooledConnection {
  /** Transaction status of the last ReadyForQuery: "I" idle, "T" in a transaction, "E" in a failed one. */
  status = "I";
  idleTimer?: NodeJS.Timeout;

  constructor(
    readonly key: string,
    readonly client: pg.Client,
    readonly socket: net.Socket,
  ) {}
}

/** No upstream connection for this query: the queue was full, the wait too long, or the proxy is closing. */
export class ProxyOverloaded extends Error {
  constructor(readonly why: TurnedAway) {
    super(why === "refused" ? "too many clients waiting for a connection" : why === "timedOut" ? "no connection came free in time" : "the proxy is closing");
  }
}

class HttpWaiter implements SlotWaiter {
  constructor(
    readonly key: string,
    readonly granted: () => void,
    readonly turnedAway: (why: TurnedAway) => void,
    readonly take: (conn: PooledConnection) => void,
  ) {}
}

export class HttpConnectionPool {
  /** Oldest first. */
  readonly #idle: PooledConnection[] = [];
  readonly #open = new Set<PooledConnection>();
  #closed = false;

  constructor(
    private readonly slots: UpstreamSlots,
    /** Called as each upstream connection is opened (the proxy's `opened` counter). */
    private readonly onOpen: () => void,
    private readonly idleMs: number,
  ) {}

  /** A logged-in connection for `login`: an idle one, or a new one once a slot is free. */
  acquire(login: Login, signal?: AbortSignal): Promise<PooledConnection> {
    const idle = this.#takeIdle(login.key);
    if (idle) return Promise.resolve(idle);
    return new Promise((resolve, reject) => {
      const waiter = new HttpWaiter(
        login.key,
        () => this.#connect(login).then(resolve, reject),
        (why) => reject(new ProxyOverloaded(why)),
        resolve,
      );
      const withdraw = this.slots.request(waiter);
      signal?.addEventListener(
        "abort",
        () => {
          if (withdraw()) reject(new Error("the client went away"));
        },
        { once: true },
      );
    });
  }

  /** Gives a connection back after a request: kept when it is at rest, else closed. */
  release(conn: PooledConnection, reusable: boolean): void {
    if (!reusable || conn.status !== "I" || this.#closed || conn.socket.destroyed) return this.#end(conn);
    if (this.slots.waiting > 0) {
      const waiter = this.slots.passToFirst((w): w is HttpWaiter => w instanceof HttpWaiter && w.key === conn.key);
      return waiter ? waiter.take(conn) : this.#end(conn);
    }
    conn.idleTimer = setTimeout(() => this.#end(conn), this.idleMs).unref();
    this.#idle.push(conn);
  }

  /** Closes the connection idle the longest, if any, so that a waiter gets its slot. */
  closeOneIdle(): void {
    const oldest = this.#idle[0];
    if (oldest) this.#end(oldest);
  }

  get idle(): number {
    return this.#idle.length;
  }

  close(): void {
    this.#closed = true;
    for (const conn of this.#open) {
      clearTimeout(conn.idleTimer);
      conn.socket.destroy();
    }
  }

  #takeIdle(key: string): PooledConnection | undefined {
    for (let i = this.#idle.length - 1; i >= 0; i--) {
      const conn = this.#idle[i]!;
      if (conn.key !== key) continue;
      this.#idle.splice(i, 1);
      clearTimeout(conn.idleTimer);
      return conn;
    }
    return undefined;
  }

  async #connect(login: Login): Promise<PooledConnection> {
    const socket = new net.Socket();
    const { host, port, user, password, database } = login;
    const client = new pg.Client({ host, port, user, password, database, stream: () => socket, types: RAW_TEXT });
    const conn = new PooledConnection(login.key, client, socket);
    this.onOpen();
    this.#open.add(conn);
    // 'close' follows every end of the socket: the slot frees once.
    socket.once("close", () => {
      this.#open.delete(conn);
      this.#forget(conn);
      this.slots.release();
    });
    client.on("error", () => socket.destroy());
    client.connection.on("readyForQuery", (msg: { status?: unknown }) => {
      if (typeof msg.status === "string") conn.status = msg.status;
    });
    try {
      await client.connect();
    } catch (e) {
      socket.destroy();
      throw e;
    }
    if (this.#closed) {
      socket.destroy();
      throw new ProxyOverloaded("closing");
    }
    return conn;
  }

  /** Terminate, then make sure the socket is gone (its 'close' frees the slot). */
  #end(conn: PooledConnection): void {
    this.#forget(conn);
    if (conn.socket.destroyed) return;
    conn.client.end().then(
      () => conn.socket.destroy(),
      () => conn.socket.destroy(),
    );
  }

  #forget(conn: PooledConnection): void {
    clearTimeout(conn.idleTimer);
    const at = this.#idle.indexOf(conn);
    if (at >= 0) this.#idle.splice(at, 1);
  }
}
