import { env } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";

interface FetchHandler<E> {
  fetch: (request: Request, env: E, ctx: ExecutionContext) => Response | Promise<Response>;
}

/**
 * Calls a Worker's real fetch handler inside workerd with this project's bindings (optionally
 * overridden), and waits for its waitUntil work (the database close) before returning.
 */
export async function call<E>(
  worker: FetchHandler<E>,
  input: string | Request,
  init?: RequestInit,
  overrides: Partial<Record<string, unknown>> = {},
): Promise<Response> {
  const request = typeof input === "string" ? new Request(input, init) : input;
  const ctx = createExecutionContext();
  const res = await worker.fetch(request, { ...env, ...overrides } as E, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}
