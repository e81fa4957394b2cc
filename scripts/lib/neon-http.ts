import type http from "node:http";
import pg from "pg";
import { ProxyOverloaded, RAW_TEXT, type HttpConnectionPool, type PooledConnection } from "./neon-http-pool";
import { BadRequest, parseRequest, readBody, type SqlRequest, type Statement } from "./neon-http-request";

export type { SqlRequest, Statement } from "./neon-http-request";

/**
 * Neon's SQL-over-HTTP protocol (POST /sql), as @neondatabase/serverless 1.2.0's neon() and
 * sql.transaction() speak it, served from local Postgres so the Workers run the driver's own HTTP code.
 *
 * Request: headers Neon-Connection-String (postgresql://user:password@host:port/db?application_name=…),
 * Neon-Raw-Text-Output: true, Neon-Array-Mode, and for a batch Neon-Batch-Isolation-Level,
 * Neon-Batch-Read-Only, Neon-Batch-Deferrable; body {query, params} or {queries: [{query, params}, …]}.
 * One query runs in its own implicit transaction; a batch in one transaction (BEGIN with the options
 * asked, each query in order, COMMIT; ROLLBACK on the first error). Always the extended protocol.
 *
 * Answers: 200 with a QueryAnswer, or {results: QueryAnswer[]} for a batch. 400 with the Postgres
 * error's fields ({message, code, severity, detail, …}: the driver copies them onto its NeonDbError);
 * 400 with code 08P01 for a request that is not well-formed (28000 for a target that is not loopback);
 * 400 with code 53300 (too_many_connections, the SQLSTATE Postgres uses) when no upstream connection comes
 * free: the queue is full or the wait passes queueTimeoutMs. The driver turns any status but 200 and
 * 400 into a bare "Server error", so everything it should be able to tell apart is a 400.
 */

export interface FieldAnswer {
  name: string;
  tableID: number;
  columnID: number;
  dataTypeID: number;
  dataTypeSize: number;
  dataTypeModifier: number;
  format: string;
}

type Raw = string | null;

export interface QueryAnswer {
  command: string;
  rowCount: number | null;
  /** Each value as Postgres's text (null stays null); objects keyed by column name without array mode. */
  rows: Raw[][] | Record<string, Raw>[];
  fields: FieldAnswer[];
  rowAsArray: boolean;
}

type Answer = { status: number; body: object };

/**
 * The simulated distance to the database, shared by the proxy's two paths and read at every round trip,
 * so that the running proxy's setRttMs changes it for the next one.
 */
export interface Distance {
  ms: number;
}

export interface SqlContext {
  pool: HttpConnectionPool;
  distance: Distance;
  /** A well-formed request, before it runs: one round trip. */
  onRequest(request: SqlRequest): void;
  /** Aborted when the proxy closes. */
  closing: AbortSignal;
}

const ERROR_FIELDS = ["severity", "code", "detail", "hint", "position", "internalPosition", "internalQuery", "where", "schema", "table", "column", "dataType", "constraint", "file", "line", "routine"] as const;

export async function serveSql(req: http.IncomingMessage, res: http.ServerResponse, ctx: SqlContext): Promise<void> {
  let answer: Answer;
  if (req.method !== "POST") {
    answer = { status: 405, body: { message: "POST /sql only" } };
  } else {
    let counted = false;
    try {
      const request = parseRequest(req.headers, await readBody(req));
      ctx.onRequest(request);
      counted = true;
      const gone = new AbortController();
      res.once("close", () => gone.abort());
      answer = await runRequest(ctx.pool, request, gone.signal);
    } catch (e) {
      answer = errorAnswer(e);
    }
    // Distance: the answer of every query that was served, rows or error, comes rttMs later (as set now).
    if (counted) await holdFor(ctx.distance.ms, ctx.closing);
  }
  if (!res.destroyed) res.writeHead(answer.status, { "content-type": "application/json" }).end(JSON.stringify(answer.body));
}

/** Waits `ms` by the monotonic clock (a timer alone may fire a little early). */
export async function holdFor(ms: number, signal?: AbortSignal): Promise<void> {
  const until = performance.now() + ms;
  for (let left = ms; left > 0 && !signal?.aborted; left = until - performance.now()) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, Math.ceil(left));
      signal?.addEventListener("abort", done, { once: true });
      function done() {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        resolve();
      }
    });
  }
}

async function runRequest(pool: HttpConnectionPool, request: SqlRequest, gone: AbortSignal): Promise<Answer> {
  const conn = await pool.acquire(request.login, gone);
  let reusable = false;
  try {
    const body = await run(conn, request);
    reusable = true;
    return { status: 200, body };
  } catch (e) {
    reusable = e instanceof pg.DatabaseError && (request.begin === undefined || (await rolledBack(conn)));
    throw e;
  } finally {
    pool.release(conn, reusable);
  }
}

async function run(conn: PooledConnection, { statements, begin, arrayMode }: SqlRequest): Promise<object> {
  if (begin === undefined) return answerOf(await execute(conn, statements[0]!), arrayMode);
  await conn.client.query(begin);
  const results: QueryAnswer[] = [];
  for (const statement of statements) results.push(answerOf(await execute(conn, statement), arrayMode));
  await conn.client.query("commit");
  return { results };
}

/** The extended protocol even without parameters, as Neon runs every query: one statement per query. */
type ExtendedQuery = pg.QueryArrayConfig<Raw[]> & { queryMode: "extended" };

function execute(conn: PooledConnection, { query, params }: Statement): Promise<pg.QueryArrayResult<Raw[]>> {
  const config: ExtendedQuery = { text: query, values: params, rowMode: "array", types: RAW_TEXT, queryMode: "extended" };
  return conn.client.query<Raw[], Raw[]>(config);
}

async function rolledBack(conn: PooledConnection): Promise<boolean> {
  try {
    await conn.client.query("rollback");
    return true;
  } catch {
    return false;
  }
}

function answerOf(result: pg.QueryArrayResult<Raw[]>, arrayMode: boolean): QueryAnswer {
  const fields = result.fields.map(({ name, tableID, columnID, dataTypeID, dataTypeSize, dataTypeModifier, format }) => ({
    name, tableID, columnID, dataTypeID, dataTypeSize, dataTypeModifier, format,
  }));
  const rows = arrayMode ? result.rows : result.rows.map((row) => Object.fromEntries(row.map((value, i) => [fields[i]!.name, value])));
  return { command: result.command, rowCount: result.rowCount, rows, fields, rowAsArray: arrayMode };
}

function errorAnswer(e: unknown): Answer {
  if (e instanceof pg.DatabaseError) {
    const body: Record<string, string> = { message: e.message };
    for (const field of ERROR_FIELDS) {
      const value = e[field];
      if (value !== undefined) body[field] = value;
    }
    return { status: 400, body };
  }
  if (e instanceof BadRequest) return { status: 400, body: { message: e.message, code: e.code, severity: "ERROR" } };
  if (e instanceof ProxyOverloaded) {
    return { status: 400, body: { message: `too many connections: ${e.message} (the local proxy's upstream limit)`, code: "53300", severity: "FATAL" } };
  }
  const message = e instanceof Error ? e.message : String(e);
  return { status: 400, body: { message: `the connection to Postgres failed: ${message}`, code: "08006", severity: "FATAL" } };
}
