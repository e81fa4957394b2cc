import { redactFields, redactText } from "./redact";

/**
 * Structured logging: one JSON object per line, which Workers Logs and `wrangler tail` index by field.
 * Callers pass fields, never secrets; every line still goes through `redactFields` (shared/core/redact.ts),
 * so a token, email, password hash or credential that slips into a field is written as `[redacted:…]`.
 */
export type LogLevel = "debug" | "info" | "warn" | "error";
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

const SQLSTATE = /^[0-9A-Z]{5}$/;
const MAX_CAUSES = 4;
const MAX_FRAMES = 20;
const MAX_QUERY = 1_000;
/** What a Postgres error (pg, Neon's driver) may say about itself in a log: names, never values. */
const DB_FACTS = ["code", "constraint", "table", "column", "schema", "dataType", "routine", "severity"] as const;

/**
 * What an error may say in a log line. For database errors only names: the SQLSTATE `code`, the
 * constraint, table, column and routine, the statement text (ours, with placeholders; literals blanked),
 * a message whose quoted values are blanked. Never the bound parameters, the driver's `detail`
 * (`Key (email)=(a@b.c) already exists`) or a stack header that repeats the message: the stack is
 * rebuilt from its frames. `cause` chains are followed a few levels deep.
 */
export function errorFields(e: unknown): LogFields {
  const fields = describe(e, 0);
  const sqlstate = firstSqlState(e);
  return sqlstate ? { ...fields, sqlstate } : fields;
}

function describe(e: unknown, depth: number): LogFields {
  if (!(e instanceof Error)) return { error: String(e) };
  const source = e as Error & Record<string, unknown>;
  const db = dbFacts(source);
  const query = drizzleQuery(source);
  const fields: LogFields = {
    errorName: nameOf(e),
    error: query !== undefined ? "Failed query" : db ? blankQuotedValues(e.message, db) : e.message,
    ...(query !== undefined ? { query } : {}),
    ...db,
  };
  if (typeof source.status === "number") fields.status = source.status;
  if (!db && typeof source.code === "string" && /^[A-Za-z0-9_.-]{1,64}$/.test(source.code)) fields.code = source.code;
  if (depth === 0) {
    const stack = framesOf(e);
    if (stack) fields.stack = stack;
  }
  const cause = e.cause ?? source.sourceError;
  if (cause !== undefined && cause !== null && depth < MAX_CAUSES) fields.cause = describe(cause, depth + 1);
  return fields;
}

/** Postgres' own facts about an error that has a SQLSTATE; undefined for any other error. */
function dbFacts(e: Record<string, unknown>): Record<string, string> | undefined {
  if (typeof e.code !== "string" || !SQLSTATE.test(e.code) || !("severity" in e || "routine" in e)) return undefined;
  const facts: Record<string, string> = {};
  for (const key of DB_FACTS) {
    const value = e[key];
    if (typeof value === "string" && value.length <= 128) facts[key] = value;
  }
  return facts;
}

function firstSqlState(e: unknown): string | undefined {
  for (let cur = e, depth = 0; cur instanceof Error && depth <= MAX_CAUSES; depth++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === "string" && SQLSTATE.test(code)) return code;
    cur = cur.cause;
  }
  return undefined;
}

/**
 * drizzle's DrizzleQueryError (`query`, `params`, message "Failed query: <sql>\nparams: <values>"),
 * recognised by shape so a second copy of drizzle-orm in a bundle is recognised too.
 */
function drizzleQuery(e: Record<string, unknown>): string | undefined {
  if (typeof e.query !== "string" || !("params" in e)) return undefined;
  const text = e.query.length > MAX_QUERY ? `${e.query.slice(0, MAX_QUERY)}…` : e.query;
  return text.replace(/'(?:[^']|'')*'/g, "'?'");
}

/** Postgres quotes both names and values in messages: names it also reports as facts stay, the rest go. */
function blankQuotedValues(message: string, facts: Record<string, string>): string {
  const names = new Set(Object.values(facts));
  return message.replace(/"[^"]*(?:"|$)/g, (quoted) => (names.has(quoted.slice(1, -1)) ? quoted : '"?"'));
}

function nameOf(e: Error): string {
  if (e.name !== "Error" && e.name !== "error") return e.name;
  const ctor = (e as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof ctor === "string" && /^[A-Za-z_$][\w$]{2,63}$/.test(ctor) ? ctor : e.name;
}

// A V8 frame: `    at fn (file:line:col)`, `    at file:line:col`, `    at async Promise.all (index 0)`.
const FRAME = /^\s+at .{1,500}(?::\d+:\d+\)?|\((?:native|index \d+|<anonymous>)\))$/;

/** The stack's frames only: its header repeats the message, which may carry values. */
function framesOf(e: Error): string | undefined {
  if (typeof e.stack !== "string") return undefined;
  const at = e.message ? e.stack.indexOf(e.message) : -1;
  const body = at >= 0 ? e.stack.slice(at + e.message.length) : e.stack;
  const frames = body
    .split("\n")
    .filter((line) => FRAME.test(line))
    .slice(0, MAX_FRAMES);
  return frames.length > 0 ? frames.join("\n") : undefined;
}

export function createLogger(base: LogFields = {}, minLevel: LogLevel = "info"): Logger {
  const write = (level: LogLevel, msg: string, fields?: LogFields) => {
    if (ORDER[level] < ORDER[minLevel]) return;
    const line = serialise({ level, msg: redactText(msg), time: new Date().toISOString(), ...redactFields({ ...base, ...fields }, errorFields) });
    if (level === "error") console.error(line);
    else if (level === "warn") console.warn(line);
    else console.log(line);
  };
  return {
    debug: (msg, fields) => write("debug", msg, fields),
    info: (msg, fields) => write("info", msg, fields),
    warn: (msg, fields) => write("warn", msg, fields),
    error: (msg, fields) => write("error", msg, fields),
    child: (fields) => createLogger({ ...base, ...fields }, minLevel),
  };
}

/** Logging never throws: a line that cannot be serialised is written without its fields. */
function serialise(line: LogFields): string {
  try {
    return JSON.stringify(line);
  } catch {
    return JSON.stringify({ level: line.level, msg: line.msg, time: line.time, logError: "fields could not be serialised" });
  }
}

/**
 * Whether a job's or a pass's result says it did nothing: no result, or counts that are all zero (a relay pass
 * over no due rows: `{ stores: 0, sent: 0, … }`), however nested. Anything else (a count above zero, a text)
 * did something. Such passes log at debug: the console stays quiet unless something happened.
 */
export function movedNothing(result: unknown): boolean {
  if (result === undefined || result === null) return true;
  if (typeof result === "number") return result === 0;
  if (Array.isArray(result)) return result.every(movedNothing);
  if (typeof result === "object") return Object.values(result).every(movedNothing);
  return false;
}
