import { AppError } from "../core/errors";
import { pgErrorOf } from "./pg-errors";

/**
 * Why the database could not serve a request, when the fault is its load or reachability rather than
 * the request: the answer is 503 with Retry-After, never 500 (shared/http/app.ts).
 */
export type UnavailableCause =
  | "too_many_connections" // 53300, e.g. "remaining connection slots are reserved"
  | "configuration_limit" // 53400
  | "shutting_down" // 57P01-57P03: admin/crash shutdown, "the database system is starting up"
  | "connection_failure" // class 08 (except 08P01, a protocol bug)
  | "connect_timeout" // the driver gave up waiting for a connection
  | "connection_lost" // the socket closed before or while the server answered
  | "websocket_failed" // the WebSocket to the database (Neon's proxy) failed
  | "http_unavailable"; // Neon's HTTP endpoint answered 429 or 5xx, or could not be reached

const BY_SQLSTATE: Record<string, UnavailableCause> = {
  "53300": "too_many_connections",
  "53400": "configuration_limit",
  "57P01": "shutting_down",
  "57P02": "shutting_down",
  "57P03": "shutting_down",
};

// The messages @neondatabase/serverless (its bundled pg Pool and Client) uses for these failures.
const BY_MESSAGE: [RegExp, UnavailableCause][] = [
  [/^timeout exceeded when trying to connect$/, "connect_timeout"], // Pool: no client within connectionTimeoutMillis
  [/^Connection terminated due to connection timeout$/, "connect_timeout"], // Pool: a new client did not finish connecting
  [/^Connection terminated unexpectedly$/, "connection_lost"], // the socket closed under the client
  [/^All attempts to open a WebSocket to connect to the database failed/, "websocket_failed"],
  // The HTTP path (neon()): the driver reads a code only from a 400 answer; overload and outages arrive
  // as these messages.
  [/^Server error \(HTTP status (429|5\d\d)\)/, "http_unavailable"],
  [/^Error connecting to database: (TimeoutError|AbortError)\b/, "connect_timeout"], // our own deadline (connectTimeoutMs)
  [/^Error connecting to database: /, "http_unavailable"],
];

/** The error and the errors under it (drizzle and the pool wrap the driver's error in `cause`). */
function* chain(e: unknown): Generator<unknown> {
  for (let cur = e, depth = 0; cur !== null && cur !== undefined && depth < 5; depth++) {
    yield cur;
    cur = typeof cur === "object" ? (cur as { cause?: unknown }).cause : undefined;
  }
}

/** A WebSocket's error event: the driver hands it on as is when the socket fails before the connection is ready. */
function isSocketErrorEvent(e: unknown): boolean {
  return typeof Event !== "undefined" && e instanceof Event && e.type === "error";
}

export function unavailableCause(e: unknown): UnavailableCause | undefined {
  const sqlstate = pgErrorOf(e)?.code;
  if (sqlstate) {
    if (BY_SQLSTATE[sqlstate]) return BY_SQLSTATE[sqlstate];
    if (sqlstate.startsWith("08") && sqlstate !== "08P01") return "connection_failure";
  }
  for (const cur of chain(e)) {
    if (isSocketErrorEvent(cur)) return "websocket_failed";
    if (!(cur instanceof Error)) continue;
    const hit = BY_MESSAGE.find(([pattern]) => pattern.test(cur.message));
    if (hit) return hit[1];
  }
  return undefined;
}

/** True when the error means the database is overloaded or out of reach (no free connection, connect timeout, 53300, 57P03, 08xxx). */
export function isDatabaseUnavailable(e: unknown): boolean {
  return unavailableCause(e) !== undefined;
}

export const DATABASE_UNAVAILABLE_REASON = "database_unavailable";

/** The answer for it: 503 with Retry-After, the same on every Worker. */
export function databaseUnavailable(): AppError {
  return new AppError(
    "SERVICE_UNAVAILABLE",
    "The database is busy; retry in a moment.",
    { reason: DATABASE_UNAVAILABLE_REASON },
    { "Retry-After": "1" },
  );
}
