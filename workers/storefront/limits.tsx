import type { Context, MiddlewareHandler } from "hono";
import type { FC } from "hono/jsx";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { CHALLENGE_FIELD, type ChallengeWidget as Widget } from "#shared/challenge/challenge";
import { CHALLENGE_RETRY_SECONDS, challengeMessage, checkChallenge } from "#shared/challenge/check";
import { challengeFromEnv } from "#shared/challenge/select";
import { ChallengeWidget } from "#shared/challenge/widget";
import { AppError } from "#shared/http/errors";
import { errorPage } from "#shared/http/html";
import { Page } from "#shared/http/page";
import { clientAddress } from "#shared/limits/address";
import { refusalMessage, type DoorOutcome } from "#shared/limits/doors";
import type { RateLimiter } from "#shared/limits/rate-limiter";
import { checkoutChallengeAhead, countFailedCode, countShopperWrite, failedCodesLeft, type ShopperDoor } from "#shared/limits/shopper";
import { normaliseHostname } from "#shared/storefront/hosts";
import type { StorefrontEnv } from "./context";

/**
 * The shopper's writes at the storefront's door (issue 20 items 1 and 9; docs/decisions/0019): each is
 * counted per client address and per store (shared/limits/shopper.ts) before the hostname is looked up and
 * before any database work, so a refused request (429 with Retry-After: JSON under /api/, the error page
 * for a form) costs no connection, cold HOSTS cache or not. Past the checkout threshold of the address or
 * the store, a checkout must carry a passed challenge (the `cf-turnstile-response` form field or header):
 * without one it is refused with 403 (JSON naming the widget's site key, or a page with the widget that
 * sends the shopper's form on once they are through).
 */
type StorefrontContext = Context<StorefrontEnv>;
type Limiter = DurableObjectNamespace<RateLimiter>;

/** Every shopper write, by method and by the path the shopper sends (before the store's internal path). */
const DOORS: { method: RegExp; path: RegExp; door: ShopperDoor }[] = [
  { method: /^POST$/, path: /^\/api\/cart\/lines$/, door: "cart" },
  { method: /^(POST|PATCH|DELETE)$/, path: /^\/api\/cart\/lines\/[^/]+$/, door: "cart" },
  { method: /^DELETE$/, path: /^\/api\/cart\/discount$/, door: "cart" },
  { method: /^POST$/, path: /^\/api\/cart\/discount$/, door: "discount" },
  { method: /^POST$/, path: /^\/(api\/)?checkout$/, door: "checkout" },
  { method: /^POST$/, path: /^\/api\/checkout\/[^/]+\/(pay|confirm)$/, door: "payment" },
  { method: /^POST$/, path: /^\/-gateway\/pay\/[^/]+$/, door: "payment" },
  { method: /^POST$/, path: /^\/products\/[^/]+\/notify$/, door: "notify" },
  { method: /^POST$/, path: /^\/(unsubscribe|consent)\/[^/]+$/, door: "emailLink" },
];

export function doorOf(method: string, path: string): ShopperDoor | null {
  return DOORS.find((d) => d.method.test(method) && d.path.test(path))?.door ?? null;
}

const limiterOf = (env: object) => (env as { RATE_LIMITER: Limiter }).RATE_LIMITER;
export const isForm = (c: Context) => /^(application\/x-www-form-urlencoded|multipart\/form-data)/i.test(c.req.header("content-type") ?? "");
/** A person's form gets a page; a script's JSON under /api/ gets JSON. */
const wantsPage = (c: Context) => !c.req.path.startsWith("/api/") || isForm(c);

/** Answers an error: thrown to the app's renderer (JSON under /api/, the error page elsewhere), or as the page for a form under /api/. */
function refuse(c: StorefrontContext, error: AppError): Response {
  if (!c.req.path.startsWith("/api/") || !isForm(c)) throw error;
  const page = errorPage({ status: error.status, code: error.code, message: error.message, data: error.data, requestId: c.var.requestId });
  return c.html(page, error.status as ContentfulStatusCode, error.headers);
}

function tooMany(c: StorefrontContext, outcome: Extract<DoorOutcome, { allowed: false }>): Response {
  return refuse(c, new AppError("TOO_MANY_REQUESTS", refusalMessage(outcome), { reason: "rate_limited", retryAfterSeconds: outcome.retryAfterSeconds }, outcome.headers));
}

export function shopperLimits(): MiddlewareHandler<StorefrontEnv> {
  return async function shopperLimits(c, next) {
    const door = doorOf(c.req.method, c.req.path);
    const hostname = door && normaliseHostname(c.req.header("host") ?? new URL(c.req.url).host);
    // No door, or a Host that names no store: the gate answers it.
    if (!door || !hostname) return next();
    // The challenge's configuration is read at every checkout, not only once one is due: a deployment
    // without it fails its first checkout (naming the variable), not the first one under attack.
    if (door === "checkout") challengeFromEnv(c.env);
    const ip = c.req.header("cf-connecting-ip");
    const address = clientAddress(ip);
    const limiter = limiterOf(c.env);
    const counted = await countShopperWrite(limiter, door, hostname, address);
    if (!counted.allowed) return tooMany(c, counted);
    if (door === "discount") {
      // Wrong codes are counted after the lookup (countWrongCode); past their limit no code is looked up.
      const left = await failedCodesLeft(limiter, hostname, address);
      if (!left.allowed) return tooMany(c, left);
    }
    for (const [name, value] of Object.entries(counted.headers)) c.header(name, value);
    if (counted.challenge) {
      const refused = await challengeRefusal(c, ip);
      if (refused) return refused;
    }
    await next();
  };
}

/** After a discount code was not found: counted against the address and the store (the failures' own limit). */
export function countWrongCode(env: object, hostname: string, ip: string | undefined): Promise<void> {
  return countFailedCode(limiterOf(env), hostname, clientAddress(ip));
}

/** The widget the checkout page shows ahead when the next checkout from this address would need it; else null. */
export async function checkoutWidget(env: object, hostname: string, ip: string | undefined): Promise<Widget | null> {
  if (!(await checkoutChallengeAhead(limiterOf(env), hostname, clientAddress(ip)))) return null;
  return challengeFromEnv(env).widget;
}

/** The checkout form is ~2 KB; a copy is read only to carry a person's fields through the challenge page. */
const FORM_COPY_MAX = 64 * 1024;

/**
 * A form's text fields, read from a copy of the request (the route still reads the body itself). Only when
 * a challenge is due; a body said to be larger is not copied (the app's input guard bounds what is read).
 */
async function formCopy(c: StorefrontContext): Promise<Record<string, string>> {
  if (!isForm(c) || Number(c.req.header("content-length") ?? 0) > FORM_COPY_MAX) return {};
  const data = await c.req.raw
    .clone()
    .formData()
    .catch(() => null);
  const fields: Record<string, string> = {};
  for (const [name, value] of data ?? []) if (typeof value === "string" && !(name in fields)) fields[name] = value;
  return fields;
}

/** Checks the request's challenge token; null when it passed, else the 403 answer (503 when no check could be made). */
async function challengeRefusal(c: StorefrontContext, ip: string | undefined): Promise<Response | null> {
  const challenge = challengeFromEnv(c.env);
  const fields = await formCopy(c);
  const check = await checkChallenge(challenge, c.req.header(CHALLENGE_FIELD) || fields[CHALLENGE_FIELD], ip, c.var.log);
  if (check !== "unavailable" && check.passed) return null;
  const message = challengeMessage(check, "place this order");
  if (check === "unavailable") throw new AppError("SERVICE_UNAVAILABLE", message, { reason: "challenge_unavailable" }, { "retry-after": String(CHALLENGE_RETRY_SECONDS) });
  const reason = check.reason === "missing" ? "challenge_required" : "challenge_failed";
  if (!wantsPage(c)) throw new AppError("FORBIDDEN", message, { reason, challenge: { ...challenge.widget, field: CHALLENGE_FIELD, header: CHALLENGE_FIELD, codes: check.codes } });
  c.header("cache-control", "no-store");
  return c.html(<ChallengePage widget={challenge.widget} action={c.req.path} fields={fields} message={message} />, 403);
}

/** The person check between a form and its route: the widget, and the form's own fields sent on with its token. */
const ChallengePage: FC<{ widget: Widget; action: string; fields: Record<string, string>; message: string }> = ({ widget, action, fields, message }) => (
  <Page title="One more step">
    <div class="card">
      <h1>One more step</h1>
      <p class="alert" role="alert">
        {message}
      </p>
      <form method="post" action={action}>
        {Object.entries(fields)
          .filter(([name]) => name !== CHALLENGE_FIELD)
          .map(([name, value]) => (
            <input type="hidden" name={name} value={value} />
          ))}
        <ChallengeWidget widget={widget} action="checkout" />
        <button type="submit">Continue</button>
      </form>
    </div>
  </Page>
);
