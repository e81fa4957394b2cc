import { Hono, type Context, type MiddlewareHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import type { z } from "zod";
import { Database, TRACE_ID } from "../db/database";
import { databaseUnavailable, unavailableCause } from "../db/unavailable";
import { createLogger, errorFields, type Logger } from "../core/log";
import { nudgeRelayFrom } from "../events/nudge";
import { pushStoreFactsTo } from "../storefront/store-facts";
import { AppError, isAppError, type ErrorCode } from "../core/errors";
import { EnvError, parseEnv, baseEnvSchema, type BaseEnv } from "../core/env";
import { providersOf, type Providers } from "../pipeline/providers";
import { securityHeaders, type SecurityHeaderOptions } from "./security-headers";

export interface AppVariables<P = Providers> {
  requestId: string;
  config: BaseEnv;
  log: Logger;
  /**
   * The Worker's provider services (shared/pipeline/providers.ts), built once per env when it is first
   * validated; a Worker's context names the ones it uses.
   */
  providers: P;
  /** This request's database; opened on first use, closed after the response. */
  db: Database;
  /**
   * Work to finish after the answer is sent (e.g. folding an API read into the activity log). A function
   * starts once the answer is ready (its round trips are traced as after-answer work); a promise has
   * started already. Both finish before the database is closed; a failure is logged, never turned into an
   * error answer.
   */
  defer: (work: Promise<unknown> | (() => Promise<unknown>)) => void;
}

export type HonoEnv<Bindings extends object, Extra extends object = {}, P = Providers> = {
  Bindings: Bindings;
  Variables: AppVariables<P> & Extra;
};

/** What an error answer says, whatever its format. */
export interface RenderedError {
  status: number;
  code: ErrorCode;
  message: string;
  data?: Record<string, unknown> | undefined;
  requestId: string;
}

export interface AppOptions {
  service: "admin" | "storefront" | "worker";
  envSchema?: z.ZodType<BaseEnv>;
  /** Paths answered with an HTML error page instead of JSON (pages for people, not APIs). */
  htmlErrors?: { when: (path: string) => boolean; page: (error: RenderedError) => string };
  /** Security headers' choices (./security-headers.ts): which pages may be framed by their own site. */
  headers?: SecurityHeaderOptions;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/**
 * The one app factory (STYLE 3, 4, 6): request id, env validated once with the provider services built
 * beside it, a logger and a database per request, and one error renderer. Errors render as
 * {"json": {code, message, data?, requestId}} with the code's status (ARCHITECTURE §10), or as an HTML
 * page on page routes.
 */
export function createApp<Bindings extends object, Extra extends object = {}>(options: AppOptions): Hono<HonoEnv<Bindings, Extra>> {
  const schema = options.envSchema ?? baseEnvSchema;
  const app = new Hono<HonoEnv<Bindings, Extra>>();

  // The core middleware and renderer only touch AppVariables, so they are written once against the base
  // environment; the casts widen them to this app's Bindings and extra Variables. The security headers come
  // first, so error answers get them too.
  const production = (c: Context) => (c as BaseContext).get("config")?.APP_ENV === "production";
  app.use(securityHeaders(options.headers ?? {}, production) as unknown as MiddlewareHandler<HonoEnv<Bindings, Extra>>);
  app.use(requestContext(options, schema) as unknown as MiddlewareHandler<HonoEnv<Bindings, Extra>>);
  app.notFound((c) => renderError(c as unknown as BaseContext, new AppError("NOT_FOUND", "Not found"), options));
  app.onError((err, c) => renderError(c as unknown as BaseContext, err, options));
  return app;
}

type BaseContext = Context<HonoEnv<object>>;

function requestContext(options: AppOptions, schema: z.ZodType<BaseEnv>): MiddlewareHandler<HonoEnv<object>> {
  return async function requestContext(c, next) {
    const incoming = c.req.header("x-request-id");
    const requestId = incoming && REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
    c.set("requestId", requestId);
    c.header("x-request-id", requestId);
    const config = parseEnv(schema, c.env);
    c.set("config", config);
    c.set("providers", providersOf(c.env));
    c.set("log", createLogger({ service: options.service, requestId }, config.LOG_LEVEL));
    const nudge = nudgeRelayFrom(c.env, c.get("log"));
    const db = new Database({
      url: config.DATABASE_URL,
      trace: traceOf(c, config),
      wsProxy: config.DB_WS_PROXY,
      connectTimeoutMs: config.DB_CONNECT_TIMEOUT_MS,
      onStorefrontChange: pushStoreFactsTo(c.env, c.get("log")),
      // Sent beside the answer (waitUntil), not before it.
      onOutboxWritten: nudge ? async (storeId) => c.get("defer")(() => nudge(storeId)) : undefined,
    });
    c.set("db", db);
    const log = c.get("log");
    const started: Promise<unknown>[] = [];
    const waiting: (() => Promise<unknown>)[] = [];
    let answered = false;
    const start = (work: Promise<unknown> | (() => Promise<unknown>)) =>
      started.push(
        (typeof work === "function" ? Promise.resolve().then(work) : work).catch((e: unknown) => {
          const cause = unavailableCause(e);
          if (cause) log.warn("Deferred work failed: database unavailable", { cause, path: c.req.path });
          else log.error("Deferred work failed", { ...errorFields(e), path: c.req.path });
        }),
      );
    c.set("defer", (work) => (typeof work === "function" && !answered ? waiting.push(work) : start(work)));
    try {
      await next();
    } finally {
      answered = true;
      db.answered();
      for (const work of waiting.splice(0)) start(work);
      closeAfterResponse(c, allStarted(started).then(() => db.close()));
    }
  };
}

/** Waits for deferred work, including work that deferred work started. */
async function allStarted(started: Promise<unknown>[]): Promise<void> {
  for (let seen = 0; seen < started.length; ) {
    const batch = started.slice(seen);
    seen = started.length;
    await Promise.all(batch);
  }
}

/**
 * Development and tests only: `x-commerce-trace: <id>` names this request's database round trips at the
 * local proxy, so a test or the bench can count them (shared/db/database.ts). Ignored in production.
 */
function traceOf(c: Context, config: BaseEnv): string | undefined {
  if (config.APP_ENV === "production") return undefined;
  const trace = c.req.header("x-commerce-trace");
  return trace && TRACE_ID.test(trace) ? trace : undefined;
}

function closeAfterResponse(c: Context, done: Promise<void>): void {
  try {
    c.executionCtx.waitUntil(done);
  } catch {
    // app.request() in a test has no execution context; the promise still runs to completion.
  }
}

export function toAppError(err: unknown): AppError | undefined {
  if (isAppError(err)) return err;
  if (unavailableCause(err)) return databaseUnavailable();
  if (err instanceof HTTPException) {
    const code: ErrorCode =
      err.status === 400 ? "BAD_REQUEST" : err.status === 401 ? "UNAUTHORIZED" : err.status === 413 ? "PAYLOAD_TOO_LARGE" : "BAD_REQUEST";
    return new AppError(code, err.message || "Bad request");
  }
  return undefined;
}

function renderError(c: BaseContext, err: unknown, options: AppOptions): Response {
  // A handler may answer early by throwing a ready response (a page's redirect to sign in).
  if (err instanceof HTTPException && err.res) return err.getResponse();
  const requestId = c.get("requestId") ?? crypto.randomUUID();
  const log = c.get("log") ?? createLogger({ service: options.service, requestId });
  const cause = unavailableCause(err);
  // Overload is expected under bursts: one warning line, no stack, nothing from the connection string.
  if (cause) log.warn("Database unavailable", { cause, path: c.req.path, method: c.req.method });
  let appError = toAppError(err);
  if (!appError) {
    const what = err instanceof EnvError ? "Worker environment is invalid" : "Unhandled error";
    log.error(what, { ...errorFields(err), path: c.req.path, method: c.req.method });
    appError = new AppError("INTERNAL", `Something went wrong on our side. Quote request id ${requestId} if you report it.`);
  }
  const rendered: RenderedError = {
    status: appError.status,
    code: appError.code,
    message: appError.message,
    data: appError.data,
    requestId,
  };
  const headers = new Headers(appError.headers);
  headers.set("x-request-id", requestId);
  if (options.htmlErrors?.when(c.req.path)) {
    headers.set("content-type", "text/html; charset=utf-8");
    return new Response(options.htmlErrors.page(rendered), { status: rendered.status, headers });
  }
  headers.set("content-type", "application/json; charset=utf-8");
  const body = { code: rendered.code, message: rendered.message, ...(rendered.data ? { data: rendered.data } : {}), requestId };
  return new Response(JSON.stringify({ json: body }), { status: rendered.status, headers });
}
