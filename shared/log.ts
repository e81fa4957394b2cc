/**
 * Structured logging: one JSON object per line, which Workers Logs and `wrangler tail` index by field.
 * Callers pass fields, never secrets: no tokens, passwords, cookies or connection strings.
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

export function errorFields(e: unknown): LogFields {
  if (e instanceof Error) return { error: e.message, errorName: e.name, stack: e.stack };
  return { error: String(e) };
}

export function createLogger(base: LogFields = {}, minLevel: LogLevel = "info"): Logger {
  const write = (level: LogLevel, msg: string, fields?: LogFields) => {
    if (ORDER[level] < ORDER[minLevel]) return;
    const line = JSON.stringify({ level, msg, time: new Date().toISOString(), ...base, ...fields });
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
