import { createSession, csrfTokenFor } from "../workers/admin/auth/session";
import worker from "../workers/admin/index";
import { hashPassword } from "#shared/auth/password";
import { CHALLENGE_FIELD } from "#shared/challenge/challenge";
import { DUMMY_TOKEN } from "#shared/challenge/local";
import type { Database } from "#shared/db/database";
import { member, userAccount } from "#shared/db/schema";
import { withStore } from "#shared/db/with-store";
import { call } from "./call";
import { makeStore, uniqueSuffix, type TestStore } from "./harness";

export const ADMIN = "http://admin.test";

export interface Browser {
  cookie: string;
  csrf: string;
  sessionId: string;
}

/** A signed-in browser for `userId` (the session row is made directly: no password hashing needed). */
export async function sessionFor(db: Database, userId: string, activeStoreId: string | null): Promise<Browser> {
  const sessionId = await createSession(db, userId, activeStoreId, { userAgent: "vitest", ip: null });
  return { cookie: `wc_session=${sessionId}`, csrf: await csrfTokenFor(sessionId), sessionId };
}

/** A new store and its owner signed in to it. */
export async function ownerOf(db: Database): Promise<{ store: TestStore; browser: Browser }> {
  const store = await makeStore(db);
  return { store, browser: await sessionFor(db, store.ownerUserId, store.id) };
}

/** POST /api/rpc/<path> as the admin UI does it: JSON, same-origin, with the session cookie. */
export function rpc(browser: Browser | null, path: string, input?: unknown, headers: Record<string, string> = {}): Promise<Response> {
  const all: Record<string, string> = { "content-type": "application/json", origin: ADMIN, ...(browser ? { cookie: browser.cookie } : {}), ...headers };
  // An empty value in `headers` means: do not send this header at all.
  const sent = Object.fromEntries(Object.entries(all).filter(([, v]) => v !== ""));
  return call(worker, `${ADMIN}/api/rpc/${path}`, {
    method: "POST",
    headers: sent,
    body: JSON.stringify(input === undefined ? {} : { json: input }),
  });
}

export interface RpcError {
  code: string;
  message: string;
  data?: { reason?: string; issues?: { path: string; message: string }[]; permission?: string };
}

export async function rpcJson<T = unknown>(res: Response): Promise<T> {
  return ((await res.json()) as { json: T }).json;
}

/** GET a page as this browser (redirects are not followed, so tests see them). */
export function page(browser: Browser | null, path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (browser) headers.set("cookie", browser.cookie);
  return call(worker, `${ADMIN}${path}`, { ...init, headers, redirect: "manual" });
}

/** POST a form as this browser, same-origin. */
export function postForm(browser: Browser | null, path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
  return page(browser, path, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: ADMIN, ...headers },
    body: new URLSearchParams(fields).toString(),
  });
}

/** POST /api/v1/<path> as a script does it: JSON and a bearer token (no cookies unless given). */
export function api(token: string | null, path: string, input?: unknown, headers: Record<string, string> = {}, env: Record<string, string> = {}): Promise<Response> {
  return call(
    worker,
    `${ADMIN}/api/v1/${path}`,
    {
      method: "POST",
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
      body: JSON.stringify(input === undefined ? {} : { json: input }),
    },
    env,
  );
}

export interface CreatedToken {
  token: string;
  grant: { id: string; areas: string[]; status: string; hint: string };
}

/** Creates a script token through Settings' procedure, as the signed-in member `browser`. */
export async function createToken(browser: Browser, areas: string[], options: { name?: string; lifetimeDays?: 30 | 90 | 365 | null } = {}): Promise<CreatedToken> {
  const res = await rpc(browser, "apiGrants/createToken", { name: options.name ?? "Test token", areas, lifetimeDays: options.lifetimeDays ?? null });
  if (res.status !== 200) throw new Error(`createToken: ${res.status} ${await res.text()}`);
  return rpcJson<CreatedToken>(res);
}

export const PASSWORD = "correct horse battery";

/** A client address of its own, so the per-IP sign-in limit of one test never meets another's. */
export const randomIp = () => `10.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;

/** A person with a real password (PASSWORD), an Admin of `stores` fresh stores. */
export async function person(db: Database, stores = 1): Promise<{ email: string; userId: string; stores: TestStore[] }> {
  const email = `signin-${uniqueSuffix()}@example.test`;
  const [user] = await db.orm.insert(userAccount).values({ email, passwordHash: await hashPassword(PASSWORD) }).returning({ id: userAccount.id });
  const owned: TestStore[] = [];
  for (let i = 0; i < stores; i++) {
    const s = await makeStore(db);
    await withStore(db, s.id, (tx) => tx.insert(member).values({ storeId: s.id, userId: user!.id, role: "admin" }));
    owned.push(s);
  }
  return { email, userId: user!.id, stores: owned };
}

/** POST /login as a browser does it, from `ip`, with a passed person check (read only past a threshold; Turnstile's test keys). */
export const signIn = (email: string, password: string, extra: Record<string, string> = {}, ip = randomIp()) =>
  postForm(null, "/login", { email, password, [CHALLENGE_FIELD]: DUMMY_TOKEN, ...extra }, { "cf-connecting-ip": ip });
