import type { Context, MiddlewareHandler } from "hono";

/**
 * The security headers of every answer of the three Workers (issue 20, item 8), set in one middleware
 * (createApp in ./app.ts):
 * - every answer: `X-Content-Type-Options: nosniff`, `Referrer-Policy: strict-origin-when-cross-origin` unless
 *   the answer chose a stricter one (a path, and so an order page's key, never leaves the site), and HSTS
 *   when APP_ENV is production;
 * - every HTML answer: a Content-Security-Policy with no inline script and no inline style except the
 *   pieces registered below by their SHA-256 hash, and `frame-ancestors` ('none' unless the app says a
 *   page may be framed by its own site), with `X-Frame-Options` for browsers that predate it. The one
 *   exception is a page that sets `SANDBOXED_PAGE_POLICY` itself: it keeps that (the admin's local mailbox
 *   shows an email's HTML, whose inline styles the usual policy forbids, in a sandbox with no script).
 *
 * Inline pieces are registered when their module loads (`inlineScript`, `inlineStyle` at the top level of
 * a module), never while rendering: an edge-cached page can be answered by an isolate that has not rendered
 * it, and its hashes must already be in the policy.
 */

const registered = { script: new Set<string>(), style: new Set<string>() };
const hashes = new Map<string, string>();

/** Registers a script that must be inline (call at module top level) and answers it unchanged. */
export function inlineScript(code: string): string {
  registered.script.add(code);
  return code;
}

/** Registers an inline stylesheet (call at module top level) and answers it unchanged. */
export function inlineStyle(css: string): string {
  registered.style.add(css);
  return css;
}

/** Where Cloudflare Turnstile's widget comes from (the sign-in and checkout challenge). */
const TURNSTILE = "https://challenges.cloudflare.com";

/** One year, as the HSTS preload list asks; no includeSubDomains: a merchant's other hosts are not ours. */
export const HSTS = "max-age=31536000";

async function sha256(text: string): Promise<string> {
  let hash = hashes.get(text);
  if (!hash) {
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
    hash = `'sha256-${btoa(String.fromCharCode(...digest))}'`;
    hashes.set(text, hash);
  }
  return hash;
}

export type Framing = "none" | "self";

/**
 * The policy of a page that shows HTML it did not write (an email in the local mailbox): `sandbox` (no
 * script, no form, an opaque origin), nothing loaded but https and data images, inline styles only, never
 * framed. A page sets it as its content-security-policy header and the middleware keeps it.
 */
export const SANDBOXED_PAGE_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src https: data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; sandbox";

/** The Content-Security-Policy of an HTML answer. */
export async function contentSecurityPolicy(framing: Framing): Promise<string> {
  const scripts = await Promise.all([...registered.script].map(sha256));
  const styles = await Promise.all([...registered.style].map(sha256));
  return [
    "default-src 'self'",
    `script-src 'self' ${TURNSTILE}${scripts.length ? ` ${scripts.join(" ")}` : ""}`,
    `style-src 'self'${styles.length ? ` ${styles.join(" ")}` : ""}`,
    "img-src 'self' data: https:",
    `frame-src ${TURNSTILE}`,
    "object-src 'none'",
    "base-uri 'none'",
    `frame-ancestors ${framing === "none" ? "'none'" : "'self'"}`,
  ].join("; ");
}

export interface SecurityHeaderOptions {
  /** Whether this request's page may be framed by its own site; 'none' when absent or for an error. */
  framing?: (path: string) => Framing;
}

/** Sets a header on an answer whose headers may be immutable (one fetched or read from a cache). */
function headersOf(res: Response): { res: Response; headers: Headers } {
  try {
    res.headers.set("x-content-type-options", "nosniff");
    return { res, headers: res.headers };
  } catch {
    const copy = new Response(res.body, res);
    copy.headers.set("x-content-type-options", "nosniff");
    return { res: copy, headers: copy.headers };
  }
}

/** The middleware; it runs first, so it also dresses error answers. `production` reads this request's config. */
export function securityHeaders(options: SecurityHeaderOptions, production: (c: Context) => boolean): MiddlewareHandler {
  return async function securityHeaders(c, next) {
    await next();
    const { res, headers } = headersOf(c.res);
    // A page may ask for less (no-referrer on a page whose address holds a key); the default is the floor.
    if (!headers.has("referrer-policy")) headers.set("referrer-policy", "strict-origin-when-cross-origin");
    if (production(c)) headers.set("strict-transport-security", HSTS);
    if ((headers.get("content-type") ?? "").toLowerCase().startsWith("text/html")) {
      // An error page is never framed, whatever page was asked for.
      const framing = res.ok ? (options.framing?.(c.req.path) ?? "none") : "none";
      // Only the sandboxed policy below is kept when a page chose it; any other policy a page or a library set is replaced.
      if (!res.ok || headers.get("content-security-policy") !== SANDBOXED_PAGE_POLICY) headers.set("content-security-policy", await contentSecurityPolicy(framing));
      headers.set("x-frame-options", framing === "none" ? "DENY" : "SAMEORIGIN");
    }
    if (res !== c.res) c.res = res;
  };
}
