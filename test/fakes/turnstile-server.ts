/**
 * A local server that speaks Turnstile's siteverify (`POST /turnstile/v0/siteverify`, JSON or a form), for the
 * Turnstile adapter's tests: tokens it issued pass once within 300 s (its clock is the test's), a repeat with
 * the same idempotency key answers as the first did, any other repeat or a late one is
 * `timeout-or-duplicate`, a made-up token `invalid-input-response`, a wrong or missing secret
 * `invalid-input-secret`/`missing-input-secret`, an unreadable body `bad-request`; failures on demand
 * (HTTP 5xx, 429, slowness, `internal-error`).
 */
import { Hono, type Context } from "hono";
import { faultInjection, type Fault } from "./provider";
import { TOKEN_MAX_LENGTH } from "#shared/challenge/challenge";

const VALID_MS = 300_000;

export interface SiteverifyServerOptions {
  secret: string;
  now?: () => number;
}

async function fieldsOf(c: Context): Promise<Record<string, unknown> | null> {
  const type = c.req.header("content-type") ?? "";
  try {
    if (type.startsWith("application/json")) {
      const body: unknown = await c.req.json();
      return body && typeof body === "object" && !Array.isArray(body) ? (body as Record<string, unknown>) : null;
    }
    if (type.startsWith("application/x-www-form-urlencoded") || type.startsWith("multipart/form-data")) return await c.req.parseBody();
  } catch {
    return null;
  }
  return null;
}

export function siteverifyServer(options: SiteverifyServerOptions) {
  const now = options.now ?? (() => Date.now());
  const issued = new Map<string, { at: number; hostname: string; spentWith?: string | undefined }>();
  const faults: Fault[] = [];
  /** The next checks that reach a known token answer `internal-error` (the documented "retry it"). */
  const state = { internalErrors: 0 };
  const requests: string[] = [];
  const bodies: Record<string, unknown>[] = [];
  const app = new Hono();
  const fail = (c: Context, codes: string[], status: 200 | 400 = 200) => c.json({ success: false, "error-codes": codes, messages: [] }, status);

  app.use(faultInjection(faults, requests, (c, fault, headers) => c.json({ success: false, "error-codes": ["internal-error"] }, fault.status, headers)));

  app.post("/turnstile/v0/siteverify", async (c) => {
    const fields = await fieldsOf(c);
    if (!fields) return fail(c, ["bad-request"], 400);
    bodies.push(fields);
    const text = (name: string) => (typeof fields[name] === "string" ? (fields[name] as string) : undefined);
    const secret = text("secret");
    if (!secret) return fail(c, ["missing-input-secret"]);
    if (secret !== options.secret) return fail(c, ["invalid-input-secret"]);
    const token = text("response");
    if (!token) return fail(c, ["missing-input-response"]);
    const entry = issued.get(token);
    if (!entry || token.length > TOKEN_MAX_LENGTH) return fail(c, ["invalid-input-response"]);
    const key = text("idempotency_key");
    const repeat = entry.spentWith !== undefined;
    if (now() - entry.at >= VALID_MS || (repeat && (key === undefined || key !== entry.spentWith))) return fail(c, ["timeout-or-duplicate"]);
    if (state.internalErrors > 0) {
      state.internalErrors--;
      return fail(c, ["internal-error"]);
    }
    entry.spentWith = key ?? "";
    return c.json({ success: true, "error-codes": [], challenge_ts: new Date(entry.at).toISOString(), hostname: entry.hostname, action: "checkout", cdata: "" });
  });

  return {
    url: "https://challenges.local/turnstile/v0/siteverify",
    fetch: (input: string, init: RequestInit) => Promise.resolve(app.fetch(new Request(input, init))),
    faults,
    state,
    requests,
    /** What each check sent (secret, response, remoteip, idempotency_key). */
    bodies,
    /** A token as the widget gets one once the visitor is through. */
    issue(hostname = "shop.example.test"): string {
      const token = `0.${crypto.randomUUID().replaceAll("-", "")}.${crypto.randomUUID().replaceAll("-", "")}`;
      issued.set(token, { at: now(), hostname });
      return token;
    },
  };
}
