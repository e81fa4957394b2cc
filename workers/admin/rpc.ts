import { Hono, type Context } from "hono";
import { readBoundedText } from "#shared/http/body";
import { AppError, badRequest } from "#shared/core/errors";
import { noSession } from "#shared/pipeline/refusal";
import { resolveCaller } from "#shared/pipeline/run";
import { isSessionProcedure, type Procedure, type StoreProcedure } from "#shared/procedures/define";
import { findProcedure } from "#shared/registry/procedures";
import { sessionIdFrom, sessionPrincipal } from "./auth/session";
import { IDEMPOTENCY_HEADER, idempotencyKeyOf, REPLAYED_HEADER } from "#shared/pipeline/idempotency-key";
import { answerForPrincipal, currentSession, runForSession, type AdminEnv } from "./context";

export const rpc = new Hono<AdminEnv>();

/** Request bodies above this are refused before parsing (413). */
export const RPC_BODY_LIMIT = 1_000_000;

/** Reads `{"json": <input>}`; an empty body means no input. */
export async function readRpcBody(req: Request): Promise<unknown> {
  const text = await readBoundedText(req, RPC_BODY_LIMIT);
  if (text.trim() === "") return undefined;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw badRequest([{ path: "", message: "Body is not valid JSON" }], 'Body is not valid JSON; send {"json": <input>}.');
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw badRequest([{ path: "", message: 'Expected an object {"json": <input>}' }]);
  }
  return (body as { json?: unknown }).json;
}

export function requireJsonContentType(req: Request): void {
  const type = req.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase();
  if (type !== "application/json") {
    throw new AppError("UNSUPPORTED_MEDIA_TYPE", "Send the body as JSON with content-type: application/json.");
  }
}

// POST /api/rpc/<router>/<procedure>: the admin UI's one RPC door (session cookie).
// Order: CSRF (origin: the same-site guard app.ts mounts; content type) → procedure exists → signed in → the executor's checks → input.
rpc.post("/api/rpc/:router/:procedure", async (c) => {
  requireJsonContentType(c.req.raw);
  const proc = findProcedure(c.req.param("router"), c.req.param("procedure"));
  if (!proc) throw new AppError("NOT_FOUND", `No procedure ${c.req.param("router")}/${c.req.param("procedure")}.`);
  c.header("cache-control", "no-store");
  if (isSessionProcedure(proc)) return c.json({ json: (await forSignedIn(c, proc)) ?? null });
  const done = await forSessionPrincipal(c, proc);
  if (done.replayed) c.header(REPLAYED_HEADER, "true");
  return c.body(done.answer.json, done.answer.status as 200, { "content-type": "application/json" });
});

/** A session procedure (account, store picking): the session looked up first. */
async function forSignedIn(c: Context<AdminEnv>, proc: Procedure): Promise<unknown> {
  const signedIn = await currentSession(c);
  if (!signedIn) throw noSession();
  return runForSession(c, signedIn, proc, await readRpcBody(c.req.raw));
}

/** A store procedure: the session, the member and the checks open the unit the procedure's plan runs in. */
async function forSessionPrincipal(c: Context<AdminEnv>, proc: StoreProcedure) {
  const principal = await sessionPrincipal(sessionIdFrom(c));
  if (!principal) throw noSession();
  // A body that cannot be read is answered after the session and membership checks, as before.
  const body = await readRpcBody(c.req.raw).then(
    (input) => ({ input }),
    (error: unknown) => ({ error }),
  );
  if ("error" in body) {
    await resolveCaller(c.var.db, principal, "session");
    throw body.error;
  }
  const key = idempotencyKeyOf(c.req.header(IDEMPOTENCY_HEADER));
  return answerForPrincipal(c, principal, proc, body.input, key, (outcome) => ({
    status: 200,
    json: JSON.stringify({ json: (outcome.kind === "done" ? outcome.output : outcome.proposal) ?? null }),
  }));
}

rpc.all("/api/rpc/:router/:procedure", () => {
  throw new AppError("METHOD_NOT_ALLOWED", "Use POST /api/rpc/<router>/<procedure> with {\"json\": <input>}.", undefined, { allow: "POST" });
});
