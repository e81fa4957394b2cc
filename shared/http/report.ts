import { isDatabaseUnavailable } from "../db/unavailable";
import type { Logger } from "../core/log";
import { errorFields } from "../core/log";

/**
 * Error tracking port. Pages report every failure that is not a 'no store' redirect here (SPEC
 * "Admin RPC errors" rule 2). The adapter below writes a structured log line, which Workers Logs
 * and `wrangler tail` index; a Sentry-style adapter would implement the same interface.
 */
export interface ErrorReporter {
  report(error: unknown, context: Record<string, unknown>): void;
}

export function logReporter(log: Logger): ErrorReporter {
  return {
    report(error, context) {
      // Overload is not a fault to track: the error renderer logs it once as a warning (503).
      if (isDatabaseUnavailable(error)) return;
      const status = (error as { status?: unknown }).status;
      const fields = { ...context, ...errorFields(error), reported: true };
      if (typeof status === "number" && status < 500) log.warn("Page error reported", fields);
      else log.error("Page error reported", fields);
    },
  };
}
