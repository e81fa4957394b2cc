import { Hono, type Context } from "hono";
import type { FC } from "hono/jsx";
import { sql } from "drizzle-orm";
import { z } from "zod";
import { hashPassword, verifyPassword } from "#shared/auth/password";
import { sha256Hex } from "#shared/core/tokens";
import { storeIdsForUser } from "#shared/db/privileged";
import { userAccount } from "#shared/db/schema";
import { validate } from "#shared/http/validate";
import { CHALLENGE_FIELD, type ChallengeWidget as Widget } from "#shared/challenge/challenge";
import { CHALLENGE_RETRY_SECONDS, challengeMessage, checkChallenge } from "#shared/challenge/check";
import { ChallengeWidget } from "#shared/challenge/widget";
import { clientAddress } from "#shared/limits/address";
import { challengeDue, checkDoorPolicy } from "#shared/limits/doors";
import { giveBackHit, hit, peek } from "#shared/limits/limit";
import { nextQuery, safeRedirectPath } from "#shared/http/redirect";
import { hasUnstorableText } from "#shared/core/storable";
import { clearSessionCookie, createSession, destroySession, setSessionCookie } from "./auth/session";
import { currentSession, type AdminEnv } from "./context";
import { sessionForm } from "./session-form";
import { PlainPage } from "./pages/layout";

export const login = new Hono<AdminEnv>();

/**
 * Sign-in attempts allowed per client address (all of them) and failed ones per email address (decision
 * records 0002 and 0019); past `challengeAfter` on either, each attempt must carry a passed challenge.
 */
export const LOGIN_IP_POLICY = checkDoorPolicy({ limit: 30, windowMs: 10 * 60_000, challengeAfter: 10, name: "address", what: "sign-in attempts per 10 minutes from one address" });
export const LOGIN_EMAIL_POLICY = checkDoorPolicy({ limit: 10, windowMs: 10 * 60_000, challengeAfter: 3, name: "account", what: "failed sign-ins per 10 minutes for one email" });
const ipKey = (ip: string | undefined) => `login:ip:${clientAddress(ip)}`;

const WRONG_CREDENTIALS = "The email or password is not right. Check both and try again.";

const LoginForm: FC<{ next: string; email?: string | undefined; message?: string | undefined; widget?: Widget | null }> = ({ next, email, message, widget }) => (
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
        {widget ? <ChallengeWidget widget={widget} action="login" /> : null}
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
  // Past this address's threshold the form carries the person check from the start.
  const ahead = await peek(c.env.RATE_LIMITER, ipKey(c.req.header("cf-connecting-ip")), LOGIN_IP_POLICY);
  return c.html(<LoginForm next={next} widget={challengeDue(ahead, LOGIN_IP_POLICY) ? c.var.providers.challenge().widget : null} />);
});

/** The widget when the next attempt for this address or email would need it (after a refused attempt). */
async function widgetAhead(c: Context<AdminEnv>, emailKey: string): Promise<Widget | null> {
  const [byIp, byEmail] = await Promise.all([peek(c.env.RATE_LIMITER, ipKey(c.req.header("cf-connecting-ip")), LOGIN_IP_POLICY), peek(c.env.RATE_LIMITER, emailKey, LOGIN_EMAIL_POLICY)]);
  return challengeDue(byIp, LOGIN_IP_POLICY) || challengeDue(byEmail, LOGIN_EMAIL_POLICY) ? c.var.providers.challenge().widget : null;
}

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
  c.header("cache-control", "no-store");
  const body = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
  const form = loginForm.safeParse(body);
  const { email, password, next: rawNext } = form.success ? form.data : { email: "", password: "", next: undefined };
  const next = safeRedirectPath(rawNext, new URL(c.req.url).origin);
  if (!email || !password) {
    return c.html(<LoginForm next={next} email={email} message="Enter your email and password." />, 400);
  }
  // No address holds a NUL, and Postgres could not compare one (decision 0023).
  if (hasUnstorableText(email)) return c.html(<LoginForm next={next} message="That email address holds a character no address has. Type it again." />, 400);

  // Read at every attempt, not only once a check is due: a deployment without it fails its first sign-in.
  const challenge = c.var.providers.challenge();
  // Every attempt counts per IP; per email only failures count, so a member who signs in on many devices
  // is never locked out, while guessing one account's password still is. The attempt is counted as a
  // failure up front (parallel guesses cannot all pass a look at the count) and given back when it turns
  // out not to be one: a right password, or an attempt refused before the password was checked (so no one
  // locks a member out without passing the check).
  const ip = c.req.header("cf-connecting-ip") ?? "unknown";
  const emailKey = `login:email:${await sha256Hex(email.toLowerCase())}`;
  const [byIp, byEmail] = await Promise.all([
    hit(c.env.RATE_LIMITER, ipKey(ip), LOGIN_IP_POLICY),
    hit(c.env.RATE_LIMITER, emailKey, LOGIN_EMAIL_POLICY),
  ]);
  const notAFailure = () => (byEmail.at === undefined ? Promise.resolve() : giveBackHit(c.env.RATE_LIMITER, emailKey, byEmail.at));
  if (!byIp.allowed || !byEmail.allowed) {
    await notAFailure();
    const wait = Math.max(byIp.retryAfterSeconds ?? 0, byEmail.retryAfterSeconds ?? 0, 1);
    c.header("retry-after", String(wait));
    const minutes = Math.ceil(wait / 60);
    return c.html(
      <LoginForm next={next} email={email} message={`Too many sign-in attempts. Try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`} />,
      429,
    );
  }
  // Past either threshold a person shows they are one (the widget's token in the form) before the password is checked.
  if (challengeDue(byIp, LOGIN_IP_POLICY) || challengeDue(byEmail, LOGIN_EMAIL_POLICY)) {
    const token = typeof body[CHALLENGE_FIELD] === "string" ? body[CHALLENGE_FIELD] : undefined;
    const check = await checkChallenge(challenge, token, c.req.header("cf-connecting-ip"), c.var.log);
    if (check === "unavailable") c.header("retry-after", String(CHALLENGE_RETRY_SECONDS));
    if (check === "unavailable" || !check.passed) {
      await notAFailure();
      return c.html(<LoginForm next={next} email={email} widget={challenge.widget} message={challengeMessage(check, "sign in")} />, check === "unavailable" ? 503 : 403);
    }
  }

  const [user] = await c.var.db.orm
    .select({ id: userAccount.id, passwordHash: userAccount.passwordHash })
    .from(userAccount)
    .where(sql`lower(${userAccount.email}) = lower(${email})`)
    .limit(1);
  dummyHash ??= hashPassword(crypto.randomUUID());
  const ok = await verifyPassword(password, user?.passwordHash ?? (await dummyHash));
  if (!user || !ok) {
    // An unknown email counts too (it was counted above), and costs the same as a wrong password.
    c.var.log.info("Sign-in refused", { ip });
    return c.html(<LoginForm next={next} email={email} message={WRONG_CREDENTIALS} widget={await widgetAhead(c, emailKey)} />, 401);
  }

  await notAFailure();
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
  const { signedIn } = await sessionForm(c, currentSession);
  if (signedIn) await destroySession(c.var.db, signedIn.id);
  clearSessionCookie(c);
  return c.redirect("/login", 303);
});
