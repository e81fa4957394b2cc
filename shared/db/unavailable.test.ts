import { describe, expect, it } from "vitest";
import { toAppError } from "#shared/http/app";
import { AppError } from "#shared/core/errors";
import { databaseUnavailable, isDatabaseUnavailable, unavailableCause } from "./unavailable";

/** A Postgres error as the driver raises it (a DatabaseError with its SQLSTATE in `code`). */
const pgError = (code: string, message = "x") => Object.assign(new Error(message), { code, severity: "FATAL" });
/** How drizzle wraps a failed query. */
const drizzleWrapped = (cause: unknown) => new Error("Failed query: select 1\nparams: ", { cause });

describe("isDatabaseUnavailable", () => {
  it.each([
    ["53300", "too_many_connections"],
    ["53400", "configuration_limit"],
    ["57P01", "shutting_down"],
    ["57P03", "shutting_down"],
    ["08006", "connection_failure"],
    ["08001", "connection_failure"],
    ["08004", "connection_failure"],
  ])("SQLSTATE %s is %s", (code, cause) => {
    expect(unavailableCause(pgError(code))).toBe(cause);
    expect(isDatabaseUnavailable(drizzleWrapped(pgError(code)))).toBe(true);
  });

  it("knows the driver's connect failures, also under drizzle's wrapper", () => {
    expect(unavailableCause(new Error("timeout exceeded when trying to connect"))).toBe("connect_timeout");
    const poolTimeout = new Error("Connection terminated due to connection timeout", { cause: new Error("Connection terminated unexpectedly") });
    expect(unavailableCause(drizzleWrapped(poolTimeout))).toBe("connect_timeout");
    expect(unavailableCause(new Error("Connection terminated unexpectedly"))).toBe("connection_lost");
    expect(unavailableCause(new Error("All attempts to open a WebSocket to connect to the database failed. Details: x"))).toBe("websocket_failed");
    // The driver hands on a WebSocket's error event itself when the socket fails before the connection is ready.
    expect(unavailableCause(new Event("error"))).toBe("websocket_failed");
    expect(unavailableCause(drizzleWrapped(new Event("error")))).toBe("websocket_failed");
  });

  it("knows the HTTP path's overload and outage answers (the driver reads a SQLSTATE only from a 400)", () => {
    expect(unavailableCause(new Error("Server error (HTTP status 503): upstream busy"))).toBe("http_unavailable");
    expect(unavailableCause(new Error("Server error (HTTP status 429): rate limited"))).toBe("http_unavailable");
    expect(unavailableCause(new Error("Error connecting to database: TypeError: fetch failed"))).toBe("http_unavailable");
    expect(unavailableCause(new Error("Error connecting to database: TimeoutError: The operation timed out."))).toBe("connect_timeout");
    // A 404 or 401 from the endpoint is a misconfiguration, not load: it stays a 500 to be fixed.
    expect(isDatabaseUnavailable(new Error("Server error (HTTP status 404): not found"))).toBe(false);
  });

  it("leaves client mistakes, bugs and misconfiguration alone (they stay 4xx or 500)", () => {
    for (const code of ["23505", "22P02", "42P01", "42501", "28P01", "3D000", "08P01", "57014"]) {
      expect(isDatabaseUnavailable(pgError(code)), code).toBe(false);
    }
    expect(isDatabaseUnavailable(new Error("Connection terminated"))).toBe(false); // our own pool.end()
    expect(isDatabaseUnavailable(new Error("boom"))).toBe(false);
    expect(isDatabaseUnavailable(new Event("close"))).toBe(false);
    expect(isDatabaseUnavailable(new AppError("NOT_FOUND", "x"))).toBe(false);
    expect(isDatabaseUnavailable({ code: "ECONNREFUSED" })).toBe(false);
    expect(isDatabaseUnavailable("53300")).toBe(false);
    expect(isDatabaseUnavailable(undefined)).toBe(false);
    expect(isDatabaseUnavailable(null)).toBe(false);
  });

  it("maps to 503 SERVICE_UNAVAILABLE with Retry-After in the app factory's renderer", () => {
    const e = toAppError(drizzleWrapped(pgError("53300", "remaining connection slots are reserved for non-replication superuser connections")));
    expect(e).toBeInstanceOf(AppError);
    expect([e?.code, e?.status, e?.message, e?.data, e?.headers]).toEqual([
      "SERVICE_UNAVAILABLE",
      503,
      "The database is busy; retry in a moment.",
      { reason: "database_unavailable" },
      { "Retry-After": "1" },
    ]);
    expect(databaseUnavailable().status).toBe(503);
    expect(toAppError(new Error("boom"))).toBeUndefined();
  });
});
