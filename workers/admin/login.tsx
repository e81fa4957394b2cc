import { Hono } from "hono";
import type { FC } from "hono/jsx";
import { sql } from "drizzle-orm";
import { z } from "zod";
import { hashPassword, verifyPassword } from "#shared/auth/password";
import { sha256Hex } from "#shared/auth/tokens";
import { storeIdsForUser } from "#shared/db/privileged";
import { userAccount } from "#shared/db/schema";
import { validate } from "#shared/http/validate";
import { hit, peek } from "#shared/limits/limit";
import type { LimitPolicy } from "#shared/limits/window";
import { nextQuery, safeRedirectPath } from "#shared/http/redirect";
import { clearSessionCookie, createSession, csrfTokenMatches, destroySession, setSessionCookie } from "./auth/session";
import { crossSiteRefused, currentSession, isCrossSite, type AdminEnv } from "./context";
import { PlainPage } from "./pages/layout";

export const login = new Hono<AdminEnv>();

/** Sign-in attempts allowed per client IP (all of them) and failed ones per email address (decision record 0002). */
export const LOGIN_IP_POLICY: LimitPolicy = { limit: 30, windowMs: 10 * 60_000 };
export const LOGIN_EMAIL_POLICY: LimitPolicy = { limit: 10, windowMs: 10 * 60_000 };

const WRONG_CREDENTIALS = "The email or password is not right. Check both and try again.";

const LoginForm: FC<{ next: string; email?: string | undefined; message?: string | undefined }> = ({ next, email, message }) => (
  <PlainPage title="Sign in · Commerce admin">
    <div class="card">
      <h1>Sign in</h1>
      <p class="muted">Manage your stores.</p>
      {message ? (
        <p class="alert" role="alert">
          {message}
        </p>
      ) : null}
      <form method="post" action="/login">
        <input type="hidden" name="next" value={next} />
        <label for="email">Email</label>
        <input id="email" name="email" type="email" autocomplete="username" required value={email ?? ""} />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required />
        <button type="submit">Sign in</button>
      </form>
    </div>
  </PlainPage>
);

// GET /login: the sign-in form (a signed-in member goes straight on to `next`).
login.get("/login", validate("query", nextQuery), async (c) => {
  const next = safeRedirectPath(c.req.valid("query").next, new URL(c.req.url).origin);
  c.header("cache-control", "no-store");
  if (await currentSession(c)) return c.redirect(next, 303);
  return c.html(<LoginForm next={next} />);
});

const loginForm = z.object({
  email: z.string().trim().max(320).default(""),
  password: z.string().max(1024).default(""),
  // Not capped here: a next too long to follow sends the member home rather than failing the sign-in.
  next: z.string().optional(),
});

// Verifying against this when the email is unknown keeps both failures equally slow.
// Isolate cache: derived once per isolate, holds no secret.
let dummyHash: Promise<string> | undefined;

// POST /login: check the password, start a session, go to `next`.
login.post("/login", async (c) => {
  if (isCrossSite(c)) throw crossSiteRefused();
  c.header("cache-control", "no-store");
  const form = loginForm.safeParse(await c.req.parseBody().catch(() => ({})));
  const { email, password, next: rawNext } = form.success ? form.data : { email: "", password: "", next: undefined };
  const next = safeRedirectPath(rawNext, new URL(c.req.url).origin);
  if (!email || !password) {
    return c.html(<LoginForm next={next} email={email} message="Enter your email and password." />, 400);
  }

  // Every attempt counts per IP; per email only failures count (counted below), so a member who signs
  // in on many devices is never locked out, while guessing one account's password still is.
  const ip = c.req.header("cf-connecting-ip") ?? "unknown";
  const emailKey = `login:email:${await sha256Hex(email.toLowerCase())}`;
  const [byIp, byEmail] = await Promise.all([
    hit(c.env.RATE_LIMITER, `login:ip:${ip}`, LOGIN_IP_POLICY),
    peek(c.env.RATE_LIMITER, emailKey, LOGIN_EMAIL_POLICY),
  ]);
  if (!byIp.allowed || !byEmail.allowed) {
    const wait = Math.max(byIp.retryAfterSeconds ?? 0, byEmail.retryAfterSeconds ?? 0, 1);
    c.header("retry-after", String(wait));
    const minutes = Math.ceil(wait / 60);
    return c.html(
      <LoginForm next={next} email={email} message={`Too many sign-in attempts. Try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`} />,
      429,
    );
  }

  const [user] = await c.var.db.orm
    .select({ id: userAccount.id, passwordHash: userAccount.passwordHash })
    .from(userAccount)
    .where(sql`lower(${userAccount.email}) = lower(${email})`)
    .limit(1);
  dummyHash ??= hashPassword(crypto.randomUUID());
  const ok = await verifyPassword(password, user?.passwordHash ?? (await dummyHash));
  if (!user || !ok) {
    // An unknown email counts too, and costs the same as a wrong password.
    await hit(c.env.RATE_LIMITER, emailKey, LOGIN_EMAIL_POLICY);
    c.var.log.info("Sign-in refused", { ip });
    return c.html(<LoginForm next={next} email={email} message={WRONG_CREDENTIALS} />, 401);
  }

  // A member of exactly one store works in it at once; others choose on /select-store.
  const storeIds = await storeIdsForUser(c.var.db, user.id);
  const sessionId = await createSession(c.var.db, user.id, storeIds.length === 1 ? storeIds[0]! : null, {
    userAgent: c.req.header("user-agent") ?? null,
    ip: ip === "unknown" ? null : ip,
  });
  setSessionCookie(c, sessionId);
  c.var.log.info("Signed in", { userId: user.id });
  return c.redirect(next, 303);
});

// POST /logout: end the session (form with the session's CSRF token).
login.post("/logout", async (c) => {
  if (isCrossSite(c)) throw crossSiteRefused();
  const signedIn = await currentSession(c);
  if (signedIn) {
    const body = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
    const token = typeof body["csrf"] === "string" ? body["csrf"] : undefined;
    if (!(await csrfTokenMatches(signedIn.id, token))) throw crossSiteRefused();
    await destroySession(c.var.db, signedIn.id);
  }
  clearSessionCookie(c);
  return c.redirect("/login", 303);
});
