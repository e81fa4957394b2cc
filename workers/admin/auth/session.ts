import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { constantTimeEqual } from "#shared/core/crypto";
import { randomSecret, sha256Hex } from "#shared/core/tokens";
import { findSession as findSessionStatement, startSession, touchSession as touchSessionStatement } from "#shared/auth/statements";
import type { Database } from "#shared/db/database";
import { session } from "#shared/db/schema";
import { changeAlone, poolRows } from "#shared/db/statement";
import { eq } from "drizzle-orm";
import type { SessionInfo } from "#shared/procedures/define";
import { ABSOLUTE_LIFETIME_SECONDS, IDLE_TIMEOUT_SECONDS, TOUCH_AFTER_SECONDS } from "#shared/auth/sessions";

export { ABSOLUTE_LIFETIME_SECONDS, IDLE_TIMEOUT_SECONDS };

/**
 * Admin sessions. The cookie carries a random 256-bit id; the database keeps only its SHA-256 hash,
 * so a leaked session table cannot be replayed.
 *
 * Lifetimes (docs/decisions/0002-admin.md): a session ends after 24 hours without use (idle) and 14
 * days after sign-in whatever happens (absolute). last_seen_at is refreshed at most every 5 minutes,
 * inside the lookup query, so a request costs one round trip for its session.
 */
export const SESSION_COOKIE = "wc_session";

const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

/** The valid session behind a cookie value, or null (unknown, idle too long or past its lifetime). */
export async function findSession(db: Database, sessionId: string): Promise<SessionInfo | null> {
  if (!SESSION_ID.test(sessionId)) return null;
  const idHash = await sha256Hex(sessionId);
  const rows = await poolRows(db, findSessionStatement, idHash, IDLE_TIMEOUT_SECONDS, TOUCH_AFTER_SECONDS);
  const row = rows[0];
  if (!row) return null;
  return { idHash: row.id_hash, userId: row.user_id, email: row.email, name: row.name, activeStoreId: row.active_store_id };
}

/** The session principal of a cookie value, known without the database (null for a malformed id). */
export async function sessionPrincipal(sessionId: string | undefined): Promise<{ kind: "session"; idHash: string } | null> {
  if (!sessionId || !SESSION_ID.test(sessionId)) return null;
  return { kind: "session", idHash: await sha256Hex(sessionId) };
}

/** Marks a session used now (after the answer, when its unit said its last use is older than 5 minutes). */
export async function touchSession(db: Database, idHash: string): Promise<void> {
  await changeAlone(db, touchSessionStatement, idHash, TOUCH_AFTER_SECONDS);
}

/** Starts a session (a fresh id on every sign-in) and clears that person's dead sessions on the way. */
export async function createSession(
  db: Database,
  userId: string,
  activeStoreId: string | null,
  meta: { userAgent: string | null; ip: string | null },
): Promise<string> {
  const sessionId = randomSecret(32);
  await poolRows(db, startSession, {
    idHash: await sha256Hex(sessionId),
    userId,
    activeStoreId,
    userAgent: meta.userAgent?.slice(0, 400) ?? null,
    ip: meta.ip,
    idleSeconds: IDLE_TIMEOUT_SECONDS,
    lifetimeSeconds: ABSOLUTE_LIFETIME_SECONDS,
  });
  return sessionId;
}

export async function destroySession(db: Database, sessionId: string): Promise<void> {
  if (!SESSION_ID.test(sessionId)) return;
  await db.orm.delete(session).where(eq(session.idHash, await sha256Hex(sessionId)));
}

/** Secure everywhere except plain-http local development (browsers refuse Secure cookies over http there). */
function isLocalhost(url: string): boolean {
  const host = new URL(url).hostname;
  return host === "localhost" || host === "127.0.0.1" || host === "[::1]" || host.endsWith(".localhost");
}

export function setSessionCookie(c: Context, sessionId: string): void {
  setCookie(c, SESSION_COOKIE, sessionId, {
    path: "/",
    httpOnly: true,
    sameSite: "Lax",
    secure: !isLocalhost(c.req.url),
    maxAge: ABSOLUTE_LIFETIME_SECONDS,
  });
}

export function clearSessionCookie(c: Context): void {
  deleteCookie(c, SESSION_COOKIE, { path: "/", secure: !isLocalhost(c.req.url), httpOnly: true, sameSite: "Lax" });
}

export function sessionIdFrom(c: Context): string | undefined {
  return getCookie(c, SESSION_COOKIE);
}

/**
 * The CSRF token of a session's forms: derived from the session id, which only the browser holding
 * the HttpOnly cookie knows, so another site can neither read nor forge it.
 */
export function csrfTokenFor(sessionId: string): Promise<string> {
  return sha256Hex(`csrf:${sessionId}`);
}

export async function csrfTokenMatches(sessionId: string, token: string | undefined): Promise<boolean> {
  if (!token) return false;
  const enc = new TextEncoder();
  return constantTimeEqual(enc.encode(await csrfTokenFor(sessionId)), enc.encode(token));
}
