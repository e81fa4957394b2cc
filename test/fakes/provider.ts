/**
 * What the local servers that stand in for a provider's API in tests share (test/fakes/razorpay-server.ts,
 * test/fakes/shiprocket-server.ts): a log of the requests and failures on demand.
 */
import type { Context, MiddlewareHandler } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";

/** The next matching requests fail like this (after `delayMs`), or, with no `status`, only answer late. */
export interface Fault {
  status?: ContentfulStatusCode;
  /** Sent as Retry-After (seconds). */
  retryAfter?: number;
  delayMs?: number;
  /** How many requests it applies to; default 1. */
  times?: number;
  /** Only requests whose "METHOD /path" matches. */
  match?: RegExp;
}

/**
 * Records "METHOD /path" of every request in `requests`, then applies the first fault that matches: it waits
 * `delayMs`, and with a `status` answers `reply(c, fault, headers)` (Retry-After among the headers) instead of
 * the route.
 */
export function faultInjection<F extends Fault>(
  faults: F[],
  requests: string[],
  reply: (c: Context, fault: F & { status: ContentfulStatusCode }, headers: Record<string, string>) => Response,
): MiddlewareHandler {
  return async (c, next) => {
    const line = `${c.req.method} ${new URL(c.req.url).pathname}`;
    requests.push(line);
    const fault = faults.find((f) => !f.match || f.match.test(line));
    if (fault) {
      fault.times = (fault.times ?? 1) - 1;
      if (fault.times <= 0) faults.splice(faults.indexOf(fault), 1);
      if (fault.delayMs) await new Promise((r) => setTimeout(r, fault.delayMs));
      const status = fault.status;
      if (status) return reply(c, { ...fault, status }, fault.retryAfter === undefined ? {} : { "retry-after": String(fault.retryAfter) });
    }
    await next();
  };
}

/** The request's JSON body when it is an object, else undefined. */
export async function jsonObject(c: Context): Promise<Record<string, unknown> | undefined> {
  try {
    const body: unknown = await c.req.json();
    return body && typeof body === "object" && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
