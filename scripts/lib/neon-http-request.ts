import type http from "node:http";
import type { Login } from "./neon-http-pool";
import { traceOf, type TraceRef } from "./proxy-traces";

/** Reading a POST /sql request as the driver sends it (./neon-http.ts has the protocol). */

export const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

const MAX_BODY = 16 * 1024 * 1024;

export interface Statement {
  query: string;
  params: (string | null)[];
}

export interface SqlRequest {
  login: Login;
  trace: TraceRef | undefined;
  statements: Statement[];
  /** The BEGIN of a batch; undefined for a single query. */
  begin: string | undefined;
  arrayMode: boolean;
}

/** A request the proxy will not run; `code` is the SQLSTATE the driver's error carries. */
export class BadRequest extends Error {
  constructor(
    message: string,
    readonly code = "08P01",
  ) {
    super(message);
  }
}

const ISOLATION = new Map([
  ["ReadUncommitted", "read uncommitted"],
  ["ReadCommitted", "read committed"],
  ["RepeatableRead", "repeatable read"],
  ["Serializable", "serializable"],
]);

export async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw new BadRequest(`request body over ${MAX_BODY} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

const header = (headers: http.IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

function flag(headers: http.IncomingHttpHeaders, name: string): boolean | undefined {
  const value = header(headers, name);
  if (value === undefined || value === "true" || value === "false") return value === undefined ? undefined : value === "true";
  throw new BadRequest(`${name} must be true or false, got "${value}"`);
}

export function parseRequest(headers: http.IncomingHttpHeaders, text: string): SqlRequest {
  const { login, applicationName } = loginOf(header(headers, "neon-connection-string"));
  if (flag(headers, "neon-raw-text-output") !== true) {
    throw new BadRequest("only raw text output is served: send Neon-Raw-Text-Output: true, as the driver does");
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new BadRequest("the body is not JSON: send {query, params} or {queries: [{query, params}, ...]}");
  }
  const batch = isObject(body) && "queries" in body ? batchOf(body["queries"]) : undefined;
  return {
    login,
    trace: traceOf(applicationName),
    statements: batch ?? [statementOf(body, "the body")],
    begin: batch ? beginOf(headers) : undefined,
    arrayMode: flag(headers, "neon-array-mode") === true,
  };
}

function loginOf(connectionString: string | undefined): { login: Login; applicationName: string | undefined } {
  if (!connectionString) throw new BadRequest("the Neon-Connection-String header is missing");
  let url: URL;
  try {
    url = new URL(connectionString);
  } catch {
    throw new BadRequest("Neon-Connection-String is not a postgresql:// URL");
  }
  if (url.protocol !== "postgresql:" && url.protocol !== "postgres:") throw new BadRequest("Neon-Connection-String is not a postgresql:// URL");
  if (!LOOPBACK.has(url.hostname)) throw new BadRequest(`this proxy connects to loopback addresses only, not to "${url.hostname}"`, "28000");
  const port = url.port ? Number(url.port) : 5432;
  let user: string, password: string, database: string;
  try {
    [user, password, database] = [url.username, url.password, url.pathname.slice(1)].map(decodeURIComponent) as [string, string, string];
  } catch {
    throw new BadRequest("Neon-Connection-String has a malformed %-escape");
  }
  if (!user || !database) throw new BadRequest("Neon-Connection-String names no user or no database");
  const host = url.hostname === "[::1]" ? "::1" : url.hostname;
  const key = JSON.stringify([host, port, user, password, database]);
  return { login: { host, port, user, password, database, key }, applicationName: url.searchParams.get("application_name") ?? undefined };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function batchOf(queries: unknown): Statement[] {
  if (!Array.isArray(queries)) throw new BadRequest('"queries" must be an array of {query, params}');
  return queries.map((q: unknown, i) => statementOf(q, `queries[${i}]`));
}

function statementOf(value: unknown, where: string): Statement {
  if (!isObject(value) || typeof value["query"] !== "string") throw new BadRequest(`${where} needs a string "query"`);
  const params = value["params"] ?? [];
  if (!Array.isArray(params)) throw new BadRequest(`${where}.params must be an array`);
  return {
    query: value["query"],
    params: params.map((p: unknown, i) => {
      if (p === null || typeof p === "string") return p;
      if (typeof p === "number" || typeof p === "boolean") return String(p);
      throw new BadRequest(`${where}.params[${i}] must be text or null (the driver sends every value as text)`);
    }),
  };
}

function beginOf(headers: http.IncomingHttpHeaders): string {
  const words = ["begin"];
  const level = header(headers, "neon-batch-isolation-level");
  if (level !== undefined) {
    const sql = ISOLATION.get(level);
    if (!sql) throw new BadRequest(`Neon-Batch-Isolation-Level must be one of ${[...ISOLATION.keys()].join(", ")}, got "${level}"`);
    words.push("isolation level", sql);
  }
  const readOnly = flag(headers, "neon-batch-read-only");
  if (readOnly !== undefined) words.push(readOnly ? "read only" : "read write");
  const deferrable = flag(headers, "neon-batch-deferrable");
  if (deferrable !== undefined) words.push(deferrable ? "deferrable" : "not deferrable");
  return words.join(" ");
}
